/* A MetaImage volume's voxels as float32 channels, and its voxel-to-world map. */
#ifndef SWIN_FORMATS_MHA_READ_H
#define SWIN_FORMATS_MHA_READ_H

#include <stddef.h>

#include "core/status.h"
#include "formats/affine.h"
#include "formats/metaimage/mha_header.h"

struct swin_mha_image {
    struct swin_mha_header h;
    int channels;      /* dim[3] * components */
    float *data;       /* channels * nx*ny*nz values, channel after channel (i fastest in each) */
    size_t read_peak;  /* the host bytes reading held at its largest */
};

/* Reads path (header and voxels; compressed voxels are one zlib or gzip stream). Refuses
 * truncated or corrupt voxel data and NaN or infinite values, each in one line. */
swin_status swin_mha_read(const char *path, struct swin_mha_image *img, swin_error *err);
void swin_mha_image_free(struct swin_mha_image *img);

/* Voxel (i, j, k) -> RAS+ mm: ITK's LPS origin + direction * spacing, x and y negated. */
swin_mat4 swin_mha_affine(const struct swin_mha_header *h);

#endif
