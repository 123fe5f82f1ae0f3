/* 4x4 affine matrices (double, row-major, voxel index -> world mm) and the grid
 * geometry MONAI's Orientation("RAS") + Spacing(pixdim) produce.
 *
 * Voxel indices follow the NIfTI file: (i, j, k), i fastest on disk. World coordinates
 * are NIfTI's RAS+ (x grows to the Right, y Anterior, z Superior). */
#ifndef SWIN_FORMATS_AFFINE_H
#define SWIN_FORMATS_AFFINE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct { double m[4][4]; } swin_mat4;

swin_mat4 swin_mat4_identity(void);
swin_mat4 swin_mat4_mul(swin_mat4 a, swin_mat4 b);
/* false when singular (|det| of the 3x3 part below 1e-12). */
bool swin_mat4_inverse(swin_mat4 a, swin_mat4 *out);
/* x = a^-1 b as LAPACK's gesv computes it (LU with partial pivoting, multiplying by the
 * pivots' reciprocals), so that matrices MONAI derives with numpy match to the last bit;
 * false when singular. */
bool swin_mat4_solve(swin_mat4 a, swin_mat4 b, swin_mat4 *x);
/* Voxel spacing of each index axis: the length of each column of the 3x3 part. */
void swin_mat4_spacing(swin_mat4 a, double sp[3]);

/* nibabel.io_orientation: for each voxel axis, the world axis it runs along (0 = x/R,
 * 1 = y/A, 2 = z/S) and its direction (+1 toward R/A/S, -1 away), decided on the
 * closest orthogonal matrix (polar factor) of the direction cosines. */
bool swin_affine_orientation(swin_mat4 a, int axis[3], int flip[3]);
/* Orientation codes as 3 letters ("LPS", "RAS", ...) plus NUL. */
void swin_affine_axcodes(swin_mat4 a, char codes[4]);

/* A resampling target: out voxel (u0, u1, u2) -> input voxel (i, j, k) = to_in * u. */
struct swin_grid {
    int64_t dim[3];     /* output shape; u2 is the fastest axis in memory */
    swin_mat4 affine;   /* output voxel -> world */
    swin_mat4 to_in;    /* output voxel -> input voxel */
    /* the intermediate oriented (RAS) grid: the input's voxels permuted and flipped */
    int64_t ras_dim[3];
    swin_mat4 ras_affine;  /* RAS voxel -> world */
    swin_mat4 ras_to_in;   /* RAS voxel -> input voxel (entries 0, +-1 and integer shifts) */
};

/* MONAI's Orientation(axcodes="RAS") (when reorient) followed by Spacing(pixdim)
 * (when pixdim is not NULL; diagonal=False, scale_extent=False): the grid of the
 * preprocessed volume. Fails (message in msg) on a singular affine or a grid of
 * more than max_voxels voxels. */
bool swin_resample_grid_plan(swin_mat4 in_affine, const int64_t in_dim[3], bool reorient, const double *pixdim,
               int64_t max_voxels, struct swin_grid *out, char *msg, int msg_len);

#endif
