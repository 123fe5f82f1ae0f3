/* The z-score normalisations of swin_intensity_norm (core/segment_params.h), one channel of
 * the preprocessed grid at a time: MONAI's NormalizeIntensity with channel_wise=True. */
#ifndef SWIN_PIPELINE_NORMALIZE_H
#define SWIN_PIPELINE_NORMALIZE_H

#include <stdbool.h>
#include <stdint.h>

/* x[0..n) -> (x - mean) / std over the voxels taken (all, or nonzero only: the others stay
 * 0). std is the population deviation, 1 when it is 0; nothing taken: x unchanged. Sums in
 * double, in `threads` slices (0: every core). */
void swin_zscore(float *x, int64_t n, bool nonzero, int threads);

#endif
