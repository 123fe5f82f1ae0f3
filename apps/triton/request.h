/* Checks of one request's tensors against the model, before any data is touched: shape,
 * data type and byte size as Triton reports them (TRITONBACKEND_InputProperties). Pure:
 * the fuzz harness runs them on arbitrary shapes. */
#ifndef SWIN_TRITON_REQUEST_H
#define SWIN_TRITON_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "apps/triton/config.h"

/* What one instance's context runs: input (Ci, D, H, W) -> logits (Co, D, H, W). */
typedef struct swt_window_geom {
    int in_channels, out_channels, cube[3];
} swt_window_geom;

/* A window-mode input: datatype as Triton names it ("FP32"), its shape and byte size.
 * Success gives the windows in the request (1 without a batch axis). */
bool swt_check_window_input(const swt_config *c, const swt_window_geom *g, const char *datatype,
                            const int64_t *shape, uint32_t ndims, uint64_t byte_size, int64_t *windows,
                            char *why, size_t why_len);

/* A segmentation-mode volume ("FP32" or "INT16", shape (nz, ny, nx): NIfTI's voxel order, or
 * (C, nz, ny, nx): C channels one after another) and affine ("FP64", (4, 4)). Success gives
 * dim = (nx, ny, nz), the channels and the voxel type. */
bool swt_check_volume_input(const swt_config *c, const char *datatype, const int64_t *shape, uint32_t ndims,
                            uint64_t byte_size, long long dim[3], int *channels, int *voxel_type, char *why,
                            size_t why_len);
bool swt_check_affine_input(const char *datatype, const int64_t *shape, uint32_t ndims, uint64_t byte_size,
                            char *why, size_t why_len);
/* The affine's values: finite, bottom row (0, 0, 0, 1), an invertible 3x3 part. */
bool swt_check_affine_values(const double a[16], char *why, size_t why_len);

#endif
