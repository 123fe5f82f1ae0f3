/* The linear way back (SWIN_INVERT_LINEAR: MONAI's Activationsd(softmax) -> Invertd with
 * nearest_interp=False -> AsDiscreted(argmax), the BTCV bundle's recipe), streamed: the
 * class probabilities are interpolated trilinearly onto the input grid and the label there is
 * their argmax, without ever holding the probabilities of the whole preprocessed grid.
 *
 * Why a few planes suffice: MONAI's Orientation + Spacing grid runs along the RAS-reoriented
 * input grid, so the grid coordinate along the slab axis (swin_sliding_axis) of an input voxel
 * depends on one input axis q only. The sliding windows finish planes along the slab axis in
 * order; each input slice along q (all voxels with the same index on q) reads two neighbouring
 * planes, and is computed as soon as the later one is finished. The probabilities of `depth`
 * planes are held (2; 1 for a grid one plane thick). depth is measured, not assumed: for each
 * input slice, the lowest and highest plane its voxels read are those of its four corners,
 * since every step of the coordinate (a permutation with flips, torch's linspace, affine_grid's
 * products and sums, the unnormalisation, the clamp) is monotone in each input index, float
 * rounding included. A grid that did not run along the input axes would give a deeper ring,
 * still correct.
 *
 * The values are those of swin_plane_trilinear on the probabilities held whole, to the bit
 * (resample.h's swin_lerp_blend); the label is the first maximum over the classes, as
 * torch.argmax, or, with one channel (a sigmoid model: its sigmoid probability interpolated),
 * 1 where the probability is at least 0.5 (pipeline/sliding.h). */
#ifndef SWIN_PIPELINE_INVERT_LINEAR_H
#define SWIN_PIPELINE_INVERT_LINEAR_H

#include <stddef.h>
#include <stdint.h>

#include "pipeline/resample.h"

/* The input slices along q that read planes [lo, hi], in order of hi. */
struct swin_lin_slice {
    int64_t t, lo, hi;
};

struct swin_invert_linear {
    const struct swin_inverse *inv;
    int co;                        /* classes */
    int ax, o1, o2;                /* the slab axis of the preprocessed grid, the other two in order */
    int q;                         /* the input axis along the slab axis */
    int64_t in_dim[3];             /* nx, ny, nz */
    int64_t plane;                 /* preprocessed voxels in one plane: dim[o1] * dim[o2] */
    int64_t depth;                 /* planes held */
    float *ring;                   /* depth slots x plane voxels x co probabilities (class fastest) */
    struct swin_lin_slice *slices; /* in_dim[q], by hi */
    int64_t next;                  /* slices computed */
    int masks;                     /* overlapping sigmoid masks: labels are bit masks (0: argmax) */
    void *labels;                  /* the label map on the input grid (i fastest): uint8 or uint16 */
    int lb;                        /* bytes per label, 1 or 2 */
};

/* Plans the slices and the ring's depth for the preprocessed grid's slab axis ax. Allocates
 * only the slice table; SWIN_ERR_NOMEM sets no message. */
swin_status swin_invert_linear_plan(struct swin_invert_linear *s, const struct swin_inverse *inv, int ax, int co,
                                    const int64_t in_dim[3]);
/* Host bytes of the slice table and the ring (not the labels). */
size_t swin_invert_linear_bytes(const struct swin_invert_linear *s);
/* Allocates the ring; labels: in_dim voxels of lb bytes (1: uint8, 2: uint16), the caller's.
 * SWIN_ERR_NOMEM sets no message. */
swin_status swin_invert_linear_start(struct swin_invert_linear *s, void *labels, int lb);
/* Where the probabilities of preprocessed voxel (u0 * d1 + u1) * d2 + u2 go: co floats. */
float *swin_invert_linear_voxel(struct swin_invert_linear *s, int64_t voxel);
/* Plane p along the slab axis holds all its probabilities: every input slice whose last plane
 * is p gets its labels. */
void swin_invert_linear_plane_done(struct swin_invert_linear *s, int64_t p);
void swin_invert_linear_free(struct swin_invert_linear *s);

#endif
