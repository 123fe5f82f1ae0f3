/* Organ statistics (label_stats.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/label_stats.h"

swin_status swin_stats_begin(struct swin_stats_acc *a, int classes, swin_error *err)
{
    memset(a, 0, sizeof *a);
    a->classes = classes > 0 ? classes : 1;
    a->count = calloc((size_t)a->classes, sizeof *a->count);
    a->sum = calloc((size_t)a->classes, sizeof *a->sum);
    a->sumsq = calloc((size_t)a->classes, sizeof *a->sumsq);
    if (!a->count || !a->sum || !a->sumsq) {
        swin_stats_free(a);
        return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for the organ statistics");
    }
    return SWIN_OK;
}

void swin_stats_add(struct swin_stats_acc *a, swin_voxel_type type, const void *hu, const uint16_t *labels, size_t n)
{
    const float *f32 = hu;
    const int16_t *i16 = hu;
    for (size_t i = 0; i < n; i++) {
        int l = labels[i];
        if (l >= a->classes) continue;
        double v = type == SWIN_VOXELS_I16 ? i16[i] : f32[i];
        a->count[l]++;
        a->sum[l] += v;
        a->sumsq[l] += v * v;
    }
}

double swin_voxel_mm3(const double m[4][4])
{
    return fabs(m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
                m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]));
}

void swin_stats_fold_masks(struct swin_stats_acc *a, int masks)
{
    /* channel c's sums gather every bit mask with bit c; a bit mask has at most `masks` bits,
     * so the fold is in place: channel c (entry c + 1) only reads masks >= 2^c > c */
    for (int c = 0; c < masks; c++) {
        long long count = 0;
        double sum = 0, sumsq = 0;
        for (int m = 1; m < a->classes; m++)
            if (m >> c & 1) count += a->count[m], sum += a->sum[m], sumsq += a->sumsq[m];
        a->count[c + 1] = count, a->sum[c + 1] = sum, a->sumsq[c + 1] = sumsq;
    }
    a->classes = masks + 1;
}

swin_status swin_stats_volume(const swin_volume *v, const uint16_t *labels, int classes, int masks,
                              swin_segment_report *rep, swin_error *err)
{
    struct swin_stats_acc a;
    swin_status st = swin_stats_begin(&a, classes, err);
    if (st) return st;
    size_t n = (size_t)(v->dim[0] * v->dim[1] * v->dim[2]);
    swin_stats_add(&a, v->type, v->voxels, labels, n);
    if (masks) swin_stats_fold_masks(&a, masks);
    swin_stats_end(&a, swin_voxel_mm3(v->affine), rep);
    swin_stats_free(&a);
    return SWIN_OK;
}

void swin_stats_end(struct swin_stats_acc *a, double voxel_mm3, swin_segment_report *rep)
{
    rep->nstats = 0;
    rep->labels_present = 0;
    for (int l = 1; l < a->classes; l++) {
        if (!a->count[l]) continue;
        rep->labels_present++;
        if (rep->nstats == SWIN_STATS_MAX) continue;
        double n = (double)a->count[l], mean = a->sum[l] / n;
        double var = a->sumsq[l] / n - mean * mean; /* HU^2 sums stay far inside double's 53 bits */
        rep->stats[rep->nstats++] = (swin_label_stats){
            .label = l, .voxels = a->count[l], .volume_ml = n * voxel_mm3 / 1000.0, .hu_mean = mean,
            .hu_std = var > 0 ? sqrt(var) : 0};
    }
}

void swin_stats_free(struct swin_stats_acc *a)
{
    free(a->count);
    free(a->sum);
    free(a->sumsq);
    memset(a, 0, sizeof *a);
}
