/* Volumes whose header is text and whose voxels are plain bytes, raw or one zlib / gzip
 * stream, in the header's file or in one beside it: MetaImage (metaimage/) and NRRD (nrrd/).
 * Each format's header reader fills this one description, in ITK's LPS world; reading the
 * voxels, the affine and the writers are shared (raw_read.h, raw_write.h, raw_format.h). */
#ifndef SWIN_FORMATS_RAW_HEADER_H
#define SWIN_FORMATS_RAW_HEADER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define SWIN_RAW_HEADER_MAX (1 << 20) /* header bytes a reader reads before giving up */

enum swin_raw_type {
    SWIN_RAW_UINT8, SWIN_RAW_INT8, SWIN_RAW_UINT16, SWIN_RAW_INT16, SWIN_RAW_UINT32, SWIN_RAW_INT32,
    SWIN_RAW_UINT64, SWIN_RAW_INT64, SWIN_RAW_FLOAT32, SWIN_RAW_FLOAT64,
};

struct swin_raw_header {
    int64_t dim[4];            /* voxels along i, j, k; dim[3]: volumes (the channels), 1 for a 3D image */
    int components;            /* values per voxel, interleaved (vector images): more channels */
    double spacing[3];         /* mm between voxels along i, j, k */
    double offset[3];          /* LPS mm of voxel (0, 0, 0) */
    double direction[3][3];    /* direction[a]: LPS unit vector of voxel axis a */
    enum swin_raw_type type;
    int type_bytes;
    bool msb;                  /* big-endian values */
    bool compressed;           /* one zlib or gzip stream */
    int64_t compressed_size;   /* the stream's bytes; -1: the rest of the file */
    char data_path[4096];      /* the file holding the voxels: the header's own or its neighbour */
    int64_t data_offset;       /* where the voxels start in it; -1: they end it (raw only) */
};

/* The voxel file named in a header at path: "" (the header's own file) or a plain name in
 * the header's folder (no folder part, so that a header cannot reach other folders) into
 * h->data_path; false (with why) otherwise. */
bool swin_raw_data_file(const char *path, const char *name, struct swin_raw_header *h, const char **why);

/* The next line of a header in f: 1 with *text the line without the spaces around it (in
 * line's n bytes), 0 at the end of the file, -1 when the line is not text, is too long, or
 * more than SWIN_RAW_HEADER_MAX bytes have been read (*read counts them). */
int swin_raw_header_line(FILE *f, char *line, size_t n, long *read, char **text);
/* s without the spaces around it (in place). */
char *swin_raw_trim(char *s);
/* *slot takes a copy of value (the one it held freed); false when out of memory. */
bool swin_raw_keep(char **slot, const char *value);

/* Whether h's direction cosines are unit vectors (to 1e-3) spanning 3-D space. */
bool swin_raw_directions_ok(const struct swin_raw_header *h);

#endif
