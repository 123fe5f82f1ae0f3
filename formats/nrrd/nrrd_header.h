/* NRRD headers (teem's format, 3D Slicer's default: .nrrd, or a .nhdr beside its voxels):
 * "NRRD000N", then "field: description" lines up to a blank line (the voxels follow) or, in
 * a detached header, the end of the file. What swinrun reads, as ITK's NrrdImageIO reads it:
 * type, dimension, sizes, endian, encoding (raw, gzip), space (RAS, LAS, LPS, scanner-xyz as
 * LPS; or "space dimension: 4" and no space, ITK's 4-D images, whose axis along the fourth
 * world coordinate holds the channels), space directions (their lengths the spacing; "none"
 * marks the channel axis), space origin, or without a space the spacings and the axis mins
 * (with axis maxs and centers: the origin as ITK places it), kinds (which axis is not spatial), data file ("./" allowed), line skip, byte skip; and the header swinrun
 * writes. */
#ifndef SWIN_FORMATS_NRRD_HEADER_H
#define SWIN_FORMATS_NRRD_HEADER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/status.h"
#include "formats/rawvol/raw_header.h"

/* Reads and checks path's header: 3 spatial axes and at most one channel axis, first or last
 * (up to 16 channels), a type of whole or floating-point numbers, raw or gzip voxels in the
 * header's file or in one plain name beside it; each refusal one line naming the field. */
swin_status swin_nrrd_header_read(const char *path, struct swin_raw_header *h, swin_error *err);

/* The header of like's grid with `volumes` volumes (a last "list" axis when more than one)
 * of type (uint8, uint16 or float32), LPS, gzip voxels attached; *size_at -1 (NRRD does not
 * state the stream's size). */
void swin_nrrd_header_write(FILE *f, const struct swin_raw_header *like, enum swin_raw_type type, int64_t volumes,
                            long *size_at);

/* Whether the name ends in .nrrd or .nhdr (case aside). */
bool swin_nrrd_name(const char *path);

#endif
