/* MetaImage headers (ITK's .mha / .mhd): "Key = Value" text lines, ElementDataFile last,
 * the voxels after it (LOCAL) or in a file beside the header. What swinrun reads of them, as
 * ITK's MetaImageIO reads them: sizes (DimSize), spacing (ElementSpacing), the origin (Offset,
 * or its synonyms Position / Origin) and the direction cosines (TransformMatrix, or Rotation /
 * Orientation: NDims values per voxel axis, axis after axis), all in ITK's LPS world, and the
 * voxels' type, byte order and compression. */
#ifndef SWIN_FORMATS_MHA_HEADER_H
#define SWIN_FORMATS_MHA_HEADER_H

#include <stdbool.h>
#include <stdint.h>

#include "core/status.h"

#define SWIN_MHA_HEADER_MAX (1 << 20) /* header bytes read before ElementDataFile must appear */

enum swin_mha_type {
    SWIN_MHA_UCHAR, SWIN_MHA_CHAR, SWIN_MHA_USHORT, SWIN_MHA_SHORT, SWIN_MHA_UINT, SWIN_MHA_INT,
    SWIN_MHA_ULONG_LONG, SWIN_MHA_LONG_LONG, SWIN_MHA_FLOAT, SWIN_MHA_DOUBLE,
};

struct swin_mha_header {
    int ndims;                 /* 3, or 4 (the fourth axis: channels) */
    int64_t dim[4];            /* DimSize; dim[3] 1 for a 3D image */
    int components;            /* ElementNumberOfChannels: values per voxel, interleaved */
    double spacing[3];         /* ElementSpacing of the three spatial axes (mm) */
    double offset[3];          /* LPS mm of voxel (0, 0, 0) */
    double direction[3][3];    /* direction[a]: LPS unit vector of voxel axis a */
    enum swin_mha_type type;
    int type_bytes;
    bool msb;                  /* BinaryDataByteOrderMSB / ElementByteOrderMSB */
    bool compressed;           /* CompressedData: one zlib (or gzip) stream */
    int64_t compressed_size;   /* CompressedDataSize; -1 when absent (the rest of the file) */
    char data_path[4096];      /* the file holding the voxels: the header's own (LOCAL) or its neighbour */
    int64_t data_offset;       /* where the voxels start in it; -1: at its end (HeaderSize = -1) */
};

/* Reads and checks path's header: NDims 3 or 4, ObjectType Image (when given), binary data,
 * the element types above, a data file that is LOCAL or a plain name beside the header (no
 * folders, no LIST or numbered slices), sizes, spacing and directions that make a grid. Each
 * refusal one line naming the key. */
swin_status swin_mha_header_read(const char *path, struct swin_mha_header *h, swin_error *err);

/* Whether the name ends in .mha or .mhd (case aside). */
bool swin_mha_name(const char *path);

#endif
