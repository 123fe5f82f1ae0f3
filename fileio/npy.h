/* Float32 .npy files (NumPy format 1.0/2.0, little-endian '<f4', C order): the raw-cube
 * interface of `swinrun forward` used by tests and benchmarks. */
#ifndef SWIN_NPY_H
#define SWIN_NPY_H

#include <stddef.h>

#include "core/status.h"

#define NPY_MAX_DIMS 8

struct swin_npy_array {
    int ndim;
    size_t shape[NPY_MAX_DIMS];
    size_t count;  /* product of shape */
    float *data;   /* malloc'ed; free() it */
};

swin_status swin_npy_read_f32(const char *path, struct swin_npy_array *out, swin_error *err);
/* Writes to a temporary file beside `path` and renames it, so a failure leaves no partial file. */
swin_status swin_npy_write_f32(const char *path, const float *data, int ndim, const size_t *shape, swin_error *err);

#endif
