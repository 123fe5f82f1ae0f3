/* A text-header volume's voxels (raw_header.h) as float32 channels, and its voxel-to-world map. */
#ifndef SWIN_FORMATS_RAW_READ_H
#define SWIN_FORMATS_RAW_READ_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "formats/affine.h"
#include "formats/rawvol/raw_header.h"

struct swin_raw_image {
    struct swin_raw_header h;
    int channels;      /* dim[3] * components */
    float *data;       /* channels * nx*ny*nz values, channel after channel (i fastest in each) */
    void *narrow;      /* the first channel's values as the file has them, in host byte order, when
                          they are 1 or 2 bytes each and a voxel has one component; else NULL */
    size_t read_peak;  /* the host bytes reading held at its largest */
};

/* Reads the voxels h describes (path: the header's file, for messages) into img, which takes a
 * copy of h. Refuses a voxel file too small for them, truncated or corrupt compressed voxels
 * and NaN or infinite values, each in one line, before anything large is allocated where the
 * file's size can tell. */
swin_status swin_raw_read(const char *path, const struct swin_raw_header *h, struct swin_raw_image *img,
                          swin_error *err);
/* The bytes img->narrow holds (0 without it). */
size_t swin_raw_narrow_bytes(const struct swin_raw_image *img);
/* Plane k (nx * ny values) of the first channel as float32, from narrow (the values data held). */
void swin_raw_image_plane(const struct swin_raw_image *img, int64_t k, float *out);
/* Frees data where narrow keeps the first channel (the planes then come from narrow). */
void swin_raw_image_drop_data(struct swin_raw_image *img);
void swin_raw_image_free(struct swin_raw_image *img);

/* Voxel (i, j, k) -> RAS+ mm: the LPS origin + direction * spacing, x and y negated. */
swin_mat4 swin_raw_affine(const struct swin_raw_header *h);

#endif
