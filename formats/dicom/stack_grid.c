/* An uneven CT stack on a regular grid (stack_grid.h). */
#include "formats/dicom/stack_grid.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

double swin_stack_grid_rounding(const double normal[3])
{
    /* each coordinate rounded by up to 0.005 mm moves a position along the unit normal by up to
     * 0.005 (|n_x| + |n_y| + |n_z|); two positions apart by twice that */
    return 0.01 * (fabs(normal[0]) + fabs(normal[1]) + fabs(normal[2]));
}

/* Two gaps are one spacing when they differ by at most this (positions written with two decimals). */
static double gap_tolerance(double gap, double rounding)
{
    return fmax(rounding, 1e-2 * gap);
}

static int cmp_gap(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The finest spacing of the stack: sorted, the first gap g (at most usual_gap) that at least a
 * tenth of the gaps (two at least) lie within [g, g + 2 tolerances] of, as those gaps' mean
 * (positions written with two decimals put 0.625 mm slices 0.62 and 0.63 mm apart: their mean
 * is the spacing, no one gap is); usual_gap where none is. A lone pair of slices closer than
 * the rest (a stray near-duplicate) is no spacing of its own. */
static swin_status finest_gap(const double *dist, int n, double usual_gap, double rounding, double *fine,
                              swin_error *err)
{
    int ngaps = n - 1, need = (ngaps + 9) / 10 > 2 ? (ngaps + 9) / 10 : 2;
    double *gaps = malloc((size_t)ngaps * sizeof *gaps);
    if (!gaps) return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for %d slices", n);
    for (int k = 0; k < ngaps; k++) gaps[k] = dist[k + 1] - dist[k];
    qsort(gaps, (size_t)ngaps, sizeof *gaps, cmp_gap);
    *fine = usual_gap;
    for (int i = 0, j = 0; i < ngaps && gaps[i] <= usual_gap; i++) {
        if (j < i) j = i;
        while (j < ngaps && gaps[j] <= gaps[i] + 2 * gap_tolerance(gaps[i], rounding)) j++;
        if (j - i >= need) {
            double sum = 0;
            for (int k = i; k < j; k++) sum += gaps[k];
            *fine = sum / (j - i);
            break;
        }
    }
    free(gaps);
    return SWIN_OK;
}

swin_status swin_stack_grid_plan(const double *dist, int n, double usual_gap, double rounding, int64_t max_planes,
                                 struct swin_stack_grid *g, swin_error *err)
{
    *g = (struct swin_stack_grid){.nz = n, .step = dist[n - 1] / (n - 1), .rounding = rounding};
    bool even = true;
    for (int k = 0; k + 1 < n; k++)
        if (fabs(dist[k + 1] - dist[k] - usual_gap) > gap_tolerance(usual_gap, rounding)) even = false;
    if (even) return SWIN_OK;
    double gap = usual_gap;
    swin_status st = finest_gap(dist, n, usual_gap, rounding, &gap, err);
    if (st) return st;
    double planes = nearbyint(dist[n - 1] / gap) + 1;
    if (planes > (double)max_planes)
        return swin_error_set(err, SWIN_ERR_FORMAT,
                              "%.1f mm of slices %.4g mm apart: %.0f planes, more than the %lld swinrun reads",
                              dist[n - 1], gap, planes, (long long)max_planes);
    g->nz = (int64_t)planes;
    g->step = dist[n - 1] / (double)(g->nz - 1);
    if (!(g->plane_of = malloc((size_t)n * sizeof *g->plane_of)))
        return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for %d slices", n);
    g->on_planes = true;
    for (int k = 0; k < n; k++) {
        g->plane_of[k] = (int64_t)nearbyint(dist[k] / g->step);
        g->on_planes = g->on_planes && fabs(dist[k] - (double)g->plane_of[k] * g->step) <= rounding &&
                       (k == 0 || g->plane_of[k] > g->plane_of[k - 1]);
    }
    int k = 0;
    for (int64_t p = 0; p < g->nz; p++) {
        double t = (double)p * g->step;
        while (k + 1 < n && dist[k + 1] - rounding <= t) k++;
        bool on = fabs(t - dist[k]) <= rounding || (k + 1 < n && fabs(dist[k + 1] - t) <= rounding);
        g->filled += !on;
    }
    return SWIN_OK;
}

/* Plane p (at t mm) between slices a (at da) and b (at db), each copied where t is on it
 * (within on mm). */
static void plane_between(double t, double on, const float *a, double da, const float *b, double db, size_t plane,
                          float *o)
{
    if (fabs(t - da) <= on) {
        if (o != a) memcpy(o, a, plane * sizeof *o);
    } else if (fabs(db - t) <= on) {
        if (o != b) memcpy(o, b, plane * sizeof *o);
    } else {
        double w = (t - da) / (db - da);
        for (size_t i = 0; i < plane; i++) o[i] = (float)((1.0 - w) * a[i] + w * b[i]);
    }
}

/* The plane's position: the last plane exactly on the last slice. */
static double plane_at(const struct swin_stack_grid *g, const double *dist, int n, int64_t p)
{
    return p == g->nz - 1 ? dist[n - 1] : (double)p * g->step;
}

void swin_stack_grid_fill(const struct swin_stack_grid *g, const double *dist, int n, const float *src,
                          size_t plane, float *dst)
{
    int k = 0; /* the last slice at or before the plane, at most n - 2 */
    for (int64_t p = 0; p < g->nz; p++) {
        double t = plane_at(g, dist, n, p);
        while (k + 2 < n && dist[k + 1] <= t) k++;
        const float *a = src + (size_t)k * plane;
        plane_between(t, g->rounding, a, dist[k], a + plane, dist[k + 1], plane, dst + (size_t)p * plane);
    }
}

void swin_stack_grid_fill_gaps(const struct swin_stack_grid *g, const double *dist, int n, size_t plane, float *grid)
{
    for (int k = 0; k + 1 < n; k++)
        for (int64_t p = g->plane_of[k] + 1; p < g->plane_of[k + 1]; p++)
            plane_between(plane_at(g, dist, n, p), g->rounding, grid + (size_t)g->plane_of[k] * plane, dist[k],
                          grid + (size_t)g->plane_of[k + 1] * plane, dist[k + 1], plane, grid + (size_t)p * plane);
}

void swin_stack_grid_free(struct swin_stack_grid *g)
{
    free(g->plane_of);
    g->plane_of = NULL;
}
