#include "pipeline/cubes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/ring_geom.h"

/* monai.inferers.utils._get_scan_interval and monai.data.utils.dense_patch_slices, one axis
 * (the rules: core/ring_geom.h) */
static int64_t *axis_starts(int64_t size, int roi, double overlap, int *count, int64_t *interval_out)
{
    const int64_t interval = swin_ring_interval(size, roi, overlap);
    const int n = swin_ring_starts(size, roi, interval);
    int64_t *s = malloc((size_t)n * sizeof *s);
    if (!s) return NULL;
    for (int64_t i = 0; i < n; i++) {
        int64_t start = i * interval;
        int64_t over = start + roi - size;
        s[i] = start - (over > 0 ? over : 0);
    }
    *count = n;
    *interval_out = interval;
    return s;
}

swin_status swin_cubes_plan(const int64_t size[3], const int roi[3], double overlap, enum swin_blend mode,
                              double sigma_scale, struct swin_cubes *w, swin_error *err)
{
    memset(w, 0, sizeof *w);
    if (!(overlap >= 0 && overlap < 1))
        return swin_error_set(err, SWIN_ERR_ARG, "overlap %g: must be >= 0 and < 1", overlap);
    if (mode == SWIN_BLEND_GAUSSIAN && !(sigma_scale > 0))
        return swin_error_set(err, SWIN_ERR_ARG, "gaussian sigma scale %g: must be positive", sigma_scale);
    for (int k = 0; k < 3; k++) {
        if (roi[k] < 1 || size[k] < 1)
            return swin_error_set(err, SWIN_ERR_ARG, "window %d x %d x %d over a %lld x %lld x %lld volume", roi[0],
                                  roi[1], roi[2], (long long)size[0], (long long)size[1], (long long)size[2]);
        w->roi[k] = roi[k];
        w->size[k] = size[k];
        w->padded[k] = size[k] > roi[k] ? size[k] : roi[k];
        w->pad_lo[k] = (w->padded[k] - size[k]) / 2;
        w->starts[k] = axis_starts(w->padded[k], roi[k], overlap, &w->n[k], &w->interval[k]);
        if (!w->starts[k]) goto nomem;
    }
    size_t n = (size_t)roi[0] * roi[1] * roi[2];
    if (!(w->importance = malloc(n * sizeof *w->importance))) goto nomem;
    if (mode == SWIN_BLEND_CONSTANT) {
        for (size_t i = 0; i < n; i++) w->importance[i] = 1.0f;
        return SWIN_OK;
    }
    /* float32 like torch: x = arange(-(n-1)/2, (n-1)/2 + 1); exp(x^2 / (-2 sigma^2)) */
    float *g[3];
    for (int k = 0; k < 3; k++) {
        if (!(g[k] = malloc((size_t)roi[k] * sizeof(float)))) {
            for (int j = 0; j < k; j++) free(g[j]);
            goto nomem;
        }
        double sigma = (double)roi[k] * sigma_scale;
        float denom = (float)(-2.0 * sigma * sigma);
        for (int i = 0; i < roi[k]; i++) {
            float x = (float)(-(roi[k] - 1) / 2.0 + i);
            g[k][i] = expf(x * x / denom);
        }
    }
    float mn = INFINITY;
    size_t i = 0;
    for (int a = 0; a < roi[0]; a++)
        for (int b = 0; b < roi[1]; b++)
            for (int c = 0; c < roi[2]; c++, i++) {
                w->importance[i] = g[0][a] * g[1][b] * g[2][c];
                if (w->importance[i] < mn) mn = w->importance[i];
            }
    float floor_ = mn > 1e-3f ? mn : 1e-3f;
    for (i = 0; i < n; i++)
        if (w->importance[i] < floor_) w->importance[i] = floor_;
    for (int k = 0; k < 3; k++) free(g[k]);
    return SWIN_OK;
nomem:
    swin_cubes_free(w);
    return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for the window layout");
}

void swin_cubes_free(struct swin_cubes *w)
{
    for (int k = 0; k < 3; k++) free(w->starts[k]);
    free(w->importance);
    memset(w, 0, sizeof *w);
}
