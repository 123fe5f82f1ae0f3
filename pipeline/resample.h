/* Resampling between the input grid (i fastest, NIfTI order) and the preprocessed grid
 * ((u0, u1, u2), u2 fastest: MONAI's C-order (D, H, W) array after Orientation/Spacing).
 * Coordinates are voxel centres; outside the input, coordinates clamp to the border
 * (torch grid_sample, align_corners=False, padding_mode="border", as MONAI Spacing). */
#ifndef SWIN_PIPELINE_RESAMPLE_H
#define SWIN_PIPELINE_RESAMPLE_H

#include <stdbool.h>
#include <stdint.h>

#include "formats/affine.h"
#include "core/status.h"

/* Intensity window: (v - lo) / (hi - lo), clipped to [0, 1] (MONAI ScaleIntensityRange
 * with b_min 0, b_max 1, clip=True). enabled=false keeps the intensities. */
struct swin_intensity {
    bool enabled;
    float lo, hi;
};

/* The way in, as MONAI's Spacing computes it (spatial_resample: torch affine_grid +
 * grid_sample in float64, align_corners=False, border) after Orientation (exact): the sample
 * coordinates and the trilinear sum in torch's order of float operations, because a
 * normalisation over the nonzero voxels (SWIN_NORM_ZSCORE_NONZERO) counts the ~1e-13 values
 * MONAI's rounding leaves where a grid voxel falls on the edge of the zero background; a
 * grid equal to the oriented one within AFFINE_TOL is copied (MONAI resamples nothing). */
struct swin_axis_taps {
    int64_t *lo, *hi;     /* per grid index: the corners' input offsets */
    double *w_lo, *w_hi;  /* their distances (torch's factors of the corner weights) */
};
struct swin_forward {
    int64_t dim[3], ras_dim[3];
    bool unchanged;       /* copy the oriented voxels */
    bool separable;       /* theta's 3x3 part diagonal: taps per axis */
    struct swin_axis_taps taps[3];
    double theta[3][4];   /* normalised grid coordinates -> normalised RAS coordinates */
    double *base[3];      /* per grid axis: torch.linspace(-1, 1, n) * (n - 1) / n */
    int64_t *off[3];      /* per RAS axis: index -> its share of the input's offset (i fastest) */
};

/* SWIN_ERR_SHAPE: a singular affine; SWIN_ERR_NOMEM. Sets no message. */
swin_status swin_forward_init(const struct swin_grid *g, const int64_t in_dim[3], struct swin_forward *f);
void swin_forward_free(struct swin_forward *f);

/* out[(u0 * d1 + u1) * d2 + u2] = window(the input sampled at grid voxel u), planes u0
 * shared among `threads` threads (0: every core). */
void swin_resample_in(const float *in, const struct swin_forward *f, struct swin_intensity win, float *out,
                      int threads);

/* The way back, as MONAI's Invertd computes it: inverse Spacing (grid -> RAS grid, torch
 * affine_grid + grid_sample in float64, align_corners=False, border) then inverse
 * Orientation (exact). The sample coordinates are computed in torch's order of float
 * operations (linspace with fma, normalised grid, unnormalise), because nearest
 * interpolation of labels is decided by them where a voxel centre falls exactly halfway
 * between two grid voxels (e.g. 3 mm slices resampled to 2 mm), and exact arithmetic
 * rounds those ties differently from MONAI. */
struct swin_inverse {
    int64_t grid_dim[3], ras_dim[3];
    swin_mat4 in_to_ras;  /* input voxel -> RAS voxel, exact integers */
    double theta[3][4];   /* normalised RAS coordinates -> normalised grid coordinates */
    double *base[3];      /* per RAS axis: torch.linspace(-1, 1, n) * (n - 1) / n */
    /* The nearest grid voxel, separable when each normalised grid coordinate depends on its
     * own RAS axis alone (theta's 3x3 part diagonal, as Spacing makes it unless rounding
     * leaves crumbs off the diagonal): input voxel (i, j, k) reads the grid at
     * nearest[0][i] + nearest[1][j] + nearest[2][k], each the share of one input axis in
     * the grid index, computed by the same float operations as the general path. NULL
     * otherwise. */
    int64_t *nearest[3];
};

/* SWIN_ERR_SHAPE: a singular affine; SWIN_ERR_NOMEM. Sets no message. */
swin_status swin_inverse_init(const struct swin_grid *g, struct swin_inverse *inv);
void swin_inverse_free(struct swin_inverse *inv);

/* Where input voxel (i, j, k) reads the preprocessed grid: per grid axis the lower and upper
 * neighbour (the upper one clamped: equal at the last plane) and the upper one's weight, the
 * coordinates clamped at the border as grid_sample's padding_mode="border". */
struct swin_lerp {
    int64_t lo[3], hi[3];
    double w[3];
};
void swin_inverse_lerp(const struct swin_inverse *inv, int64_t i, int64_t j, int64_t k, struct swin_lerp *l);

/* Trilinear blend of the 8 neighbours f[4 * e0 + 2 * e1 + e2] (e = 0: lower, 1: upper, per
 * grid axis): along axis 2, then 1, then 0, in double. Every trilinear value of the way back
 * goes through this one expression (and the pipeline is built without fused multiply-adds),
 * so that labels streamed plane by plane and probabilities held whole agree to the bit. */
static inline double swin_lerp_blend(const float f[8], const double w[3])
{
    double l0 = (f[0] * (1 - w[2]) + f[1] * w[2]) * (1 - w[1]) + (f[2] * (1 - w[2]) + f[3] * w[2]) * w[1];
    double l1 = (f[4] * (1 - w[2]) + f[5] * w[2]) * (1 - w[1]) + (f[6] * (1 - w[2]) + f[7] * w[2]) * w[1];
    return l0 * (1 - w[0]) + l1 * w[0];
}

/* One k-plane (nx * ny values, i fastest) of the input grid sampled from a volume on the
 * preprocessed grid: nearest (round half to even, as torch) for labels, trilinear for
 * probabilities. */
void swin_plane_nearest_u8(const struct swin_inverse *inv, const uint8_t *src, int64_t nx, int64_t ny, int64_t k,
                           uint8_t *plane);
void swin_plane_nearest_u16(const struct swin_inverse *inv, const uint16_t *src, int64_t nx, int64_t ny, int64_t k,
                            uint16_t *plane);
void swin_plane_trilinear(const struct swin_inverse *inv, const float *src, int64_t nx, int64_t ny, int64_t k,
                          float *plane);

#endif
