/* An uneven CT stack on a regular grid (stack_grid.h). */
#include "formats/dicom/stack_grid.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* positions are written with two decimals: closer than this, a plane is on a slice */
#define ON_SLICE_MM 0.01

swin_status swin_stack_grid_plan(const double *dist, int n, double usual_gap, int64_t max_planes,
                                 struct swin_stack_grid *g, swin_error *err)
{
    *g = (struct swin_stack_grid){.nz = n, .step = dist[n - 1] / (n - 1)};
    bool even = true;
    for (int k = 0; k + 1 < n; k++)
        if (fabs(dist[k + 1] - dist[k] - usual_gap) > fmax(1e-2, 1e-2 * usual_gap)) even = false;
    if (even) return SWIN_OK;
    double planes = nearbyint(dist[n - 1] / usual_gap) + 1;
    if (planes > (double)max_planes)
        return swin_error_set(err, SWIN_ERR_FORMAT,
                              "%.1f mm of slices %.4g mm apart: %.0f planes, more than the %lld swinrun reads",
                              dist[n - 1], usual_gap, planes, (long long)max_planes);
    g->nz = (int64_t)planes;
    g->step = dist[n - 1] / (double)(g->nz - 1);
    if (!(g->plane_of = malloc((size_t)n * sizeof *g->plane_of)))
        return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for %d slices", n);
    for (int k = 0; k < n; k++) g->plane_of[k] = (int64_t)nearbyint(dist[k] / g->step);
    int k = 0;
    for (int64_t p = 0; p < g->nz; p++) {
        double t = (double)p * g->step;
        while (k + 1 < n && dist[k + 1] - ON_SLICE_MM <= t) k++;
        bool on = fabs(t - dist[k]) <= ON_SLICE_MM || (k + 1 < n && fabs(dist[k + 1] - t) <= ON_SLICE_MM);
        g->filled += !on;
    }
    return SWIN_OK;
}

void swin_stack_grid_fill(const struct swin_stack_grid *g, const double *dist, int n, const float *src,
                          size_t plane, float *dst)
{
    int k = 0; /* the last slice at or before the plane, at most n - 2 */
    for (int64_t p = 0; p < g->nz; p++) {
        double t = p == g->nz - 1 ? dist[n - 1] : (double)p * g->step;
        while (k + 2 < n && dist[k + 1] <= t) k++;
        float *o = dst + (size_t)p * plane;
        const float *a = src + (size_t)k * plane, *b = a + plane;
        if (fabs(t - dist[k]) <= ON_SLICE_MM) {
            memcpy(o, a, plane * sizeof *o);
        } else if (fabs(dist[k + 1] - t) <= ON_SLICE_MM) {
            memcpy(o, b, plane * sizeof *o);
        } else {
            double w = (t - dist[k]) / (dist[k + 1] - dist[k]);
            for (size_t i = 0; i < plane; i++) o[i] = (float)((1.0 - w) * a[i] + w * b[i]);
        }
    }
}

void swin_stack_grid_free(struct swin_stack_grid *g)
{
    free(g->plane_of);
    g->plane_of = NULL;
}
