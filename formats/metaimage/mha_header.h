/* MetaImage headers (ITK's .mha / .mhd): "Key = Value" text lines, ElementDataFile last,
 * the voxels after it (LOCAL, in any case) or in a file beside the header. What swinrun reads
 * of them, as ITK's MetaImageIO reads them: sizes (DimSize), spacing (ElementSpacing, else
 * ElementSize), the origin (Offset, or its synonyms Position / Origin) and the direction
 * cosines (TransformMatrix, or Rotation / Orientation: NDims values per voxel axis, axis after
 * axis), all in ITK's LPS world, and the voxels' type, byte order and compression; and the
 * header swinrun writes. */
#ifndef SWIN_FORMATS_MHA_HEADER_H
#define SWIN_FORMATS_MHA_HEADER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/status.h"
#include "formats/rawvol/raw_header.h"

/* Reads and checks path's header: NDims 3 or 4 (the fourth axis: channels), ObjectType Image
 * (when given), binary data, MET_UCHAR .. MET_DOUBLE, a data file that is LOCAL or a plain
 * name beside the header (no folders, no LIST or numbered slices), sizes, spacing and
 * directions that make a grid. Each refusal one line naming the key. */
swin_status swin_mha_header_read(const char *path, struct swin_raw_header *h, swin_error *err);

/* The header of like's grid with `volumes` volumes of type (uint8, uint16 or float32), the
 * voxels LOCAL and compressed; *size_at: where CompressedDataSize's value goes, a run of
 * spaces until the stream's size is known (MetaIO reads the number, not the spaces after it). */
void swin_mha_header_write(FILE *f, const struct swin_raw_header *like, enum swin_raw_type type, int64_t volumes,
                           long *size_at);

/* Whether the name ends in .mha or .mhd (case aside). */
bool swin_mha_name(const char *path);

#endif
