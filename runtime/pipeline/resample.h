/* Resampling between the input grid (i fastest, NIfTI order) and the preprocessed grid
 * ((u0, u1, u2), u2 fastest: MONAI's C-order (D, H, W) array after Orientation/Spacing).
 * Coordinates are voxel centres; outside the input, coordinates clamp to the border
 * (torch grid_sample, align_corners=False, padding_mode="border", as MONAI Spacing). */
#ifndef SWIN_PIPELINE_RESAMPLE_H
#define SWIN_PIPELINE_RESAMPLE_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/pipeline/affine.h"

/* Intensity window: (v - lo) / (hi - lo), clipped to [0, 1] (MONAI ScaleIntensityRange
 * with b_min 0, b_max 1, clip=True). enabled=false keeps the intensities. */
struct swin_intensity {
    bool enabled;
    float lo, hi;
};

/* out[(u0 * d1 + u1) * d2 + u2] = window(trilinear(in at g->to_in * u)). */
void swin_resample_in(const float *in, const int64_t in_dim[3], const struct swin_grid *g,
                      struct swin_intensity win, float *out);

/* One k-plane (nx * ny values, i fastest) of the input grid sampled from a volume on the
 * preprocessed grid: nearest (round half to even, as torch) for labels, trilinear for
 * probabilities. from_in = inverse of g->to_in. */
void swin_plane_nearest_u8(const uint8_t *src, const int64_t src_dim[3], swin_mat4 from_in, int64_t nx, int64_t ny,
                           int64_t k, uint8_t *plane);
void swin_plane_nearest_u16(const uint16_t *src, const int64_t src_dim[3], swin_mat4 from_in, int64_t nx,
                            int64_t ny, int64_t k, uint16_t *plane);
void swin_plane_trilinear(const float *src, const int64_t src_dim[3], swin_mat4 from_in, int64_t nx, int64_t ny,
                          int64_t k, float *plane);

#endif
