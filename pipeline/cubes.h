/* The cubes of MONAI's sliding_window_inference (its windows) over a (d0, d1, d2) volume (d2
 * fastest), as monai/inferers/utils.py and monai/data/utils.py compute it:
 *   - a volume smaller than the roi along an axis is padded to the roi with zeros,
 *     diff // 2 before and the rest after (F.pad, constant 0);
 *   - scan interval int(roi * (1 - overlap)), or the roi when it equals the (padded) size;
 *   - starts idx * interval, the last one pulled back to end at the border
 *     (dense_patch_slices), every window entirely inside the padded volume;
 *   - importance map: ones (constant) or the product of 1D gaussians exp(-x^2 / 2 s^2),
 *     x from -(n-1)/2 to (n-1)/2, s = sigma_scale * n, clamped below at max(min, 1e-3)
 *     (compute_importance_map; not normalised). */
#ifndef SWIN_PIPELINE_CUBES_H
#define SWIN_PIPELINE_CUBES_H

#include <stdint.h>

#include "core/segment_params.h" /* swin_blend */
#include "core/status.h"


struct swin_cubes {
    int roi[3];
    int64_t size[3];       /* the volume */
    int64_t padded[3];     /* max(size, roi) */
    int64_t pad_lo[3];     /* zeros before the volume: (padded - size) / 2 */
    int n[3];              /* window positions per axis */
    int64_t interval[3];   /* the scan interval: start i is min(i * interval, padded - roi) */
    int64_t *starts[3];    /* n[k] starts per axis, in padded coordinates, increasing */
    float *importance;     /* roi[0] * roi[1] * roi[2] weights, roi[2] fastest */
};

swin_status swin_cubes_plan(const int64_t size[3], const int roi[3], double overlap, enum swin_blend mode,
                              double sigma_scale, struct swin_cubes *w, swin_error *err);
void swin_cubes_free(struct swin_cubes *w);
static inline int64_t swin_cubes_count(const struct swin_cubes *w)
{
    return (int64_t)w->n[0] * w->n[1] * w->n[2];
}

#endif
