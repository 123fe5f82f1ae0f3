/* An uneven stack on a regular grid (formats/dicom/stack_grid.h) against what each case
 * means, worked out by hand: an even stack (with the 0.005 mm jitter of positions written
 * with two decimals) is its own grid; one missing slice and two in a row give the planes
 * between, interpolated by distance; two spacings give the finer one's grid, the coarse
 * slices every other plane, whether the finer spacing is the median gap or not; a lone pair
 * of slices closer than the rest is no spacing (each slice on its nearest plane of the usual
 * grid); 300 slices 0.625 mm apart at two decimals with one missing give 300 planes; an
 * oblique stack at two decimals (gaps up to 0.0173 mm off) is its slices, none blended; a plane
 * count over the limit is refused. The
 * filled planes are checked against a reference interpolation written here in float64
 * (plane p at p * step, between the slices around it), and where every slice is on a plane
 * of its own, the in-place fill against the two-buffer one (the same bits). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "formats/dicom/stack_grid.h"

static int failures;

static void expect(int ok, const char *what)
{
    printf("%s %s\n", ok ? "ok  " : "FAIL", what);
    failures += !ok;
}

/* Each slice's plane values are its index + 1 (pixel 0) and 10 x that (pixel 1). */
static int fill_matches(const struct swin_stack_grid *g, const double *dist, int n)
{
    static float src[2 * 512], dst[2 * 512];
    for (int k = 0; k < n; k++) src[2 * k] = (float)(k + 1), src[2 * k + 1] = (float)(10 * (k + 1));
    swin_stack_grid_fill(g, dist, n, src, 2, dst);
    if (g->on_planes) { /* in place: the slices at their planes, the gaps filled: the same values */
        static float grid[2 * 512];
        memset(grid, 0xff, sizeof grid);
        for (int k = 0; k < n; k++) memcpy(grid + 2 * g->plane_of[k], src + 2 * k, 2 * sizeof *grid);
        swin_stack_grid_fill_gaps(g, dist, n, 2, grid);
        if (memcmp(grid, dst, (size_t)g->nz * 2 * sizeof *grid)) {
            printf("     in place: not the values of the two-buffer fill\n");
            return 0;
        }
    }
    for (int64_t p = 0; p < g->nz; p++) {
        double t = (double)p * dist[n - 1] / (double)(g->nz - 1);
        int k = 0;
        while (k + 2 < n && dist[k + 1] <= t + g->rounding) k++;
        double w = fmin(1.0, fmax(0.0, (t - dist[k]) / (dist[k + 1] - dist[k])));
        if (fabs(t - dist[k]) <= g->rounding) w = 0;
        if (fabs(dist[k + 1] - t) <= g->rounding) w = 1;
        for (int i = 0; i < 2; i++) {
            double want = (1 - w) * src[2 * k + i] + w * src[2 * (k + 1) + i];
            if (fabs(dst[2 * p + i] - want) > 1e-5 * fabs(want)) {
                printf("     plane %lld pixel %d: %g, want %g\n", (long long)p, i, dst[2 * p + i], want);
                return 0;
            }
        }
    }
    return 1;
}

/* rounding: swin_stack_grid_rounding of the stack's normal */
static void case_at(const char *what, const double *dist, int n, double usual, double rounding, int64_t want_nz,
                    const int64_t *want_plane_of, int want_filled, bool want_on_planes)
{
    struct swin_stack_grid g;
    swin_error err;
    swin_status st = swin_stack_grid_plan(dist, n, usual, rounding, 1000, &g, &err);
    int ok = st == SWIN_OK && g.nz == want_nz && g.filled == want_filled && g.on_planes == want_on_planes &&
             (want_plane_of ? g.plane_of && !memcmp(g.plane_of, want_plane_of, (size_t)n * sizeof *want_plane_of)
                            : !g.plane_of);
    if (ok && g.plane_of) ok = fill_matches(&g, dist, n);
    char line[160];
    snprintf(line, sizeof line, "%s: %lld planes, %d filled", what, (long long)g.nz, g.filled);
    expect(ok, line);
    swin_stack_grid_free(&g);
}

/* an axial, coronal or sagittal stack */
static void case_of(const char *what, const double *dist, int n, double usual, int64_t want_nz,
                    const int64_t *want_plane_of, int want_filled, bool want_on_planes)
{
    case_at(what, dist, n, usual, 0.01, want_nz, want_plane_of, want_filled, want_on_planes);
}

int main(void)
{
    const double even[] = {0, 2.5, 5.005, 7.495, 10};
    case_of("even, positions jittered 0.005 mm", even, 5, 2.5, 5, NULL, 0, false);
    const double one[] = {0, 2.5, 5, 10, 12.5};
    case_of("one missing slice", one, 5, 2.5, 6, (const int64_t[]){0, 1, 2, 4, 5}, 1, true);
    const double two[] = {0, 1.25, 2.5, 6.25, 7.5};
    case_of("two missing slices in a row", two, 5, 1.25, 7, (const int64_t[]){0, 1, 2, 5, 6}, 2, true);
    const double mixed[] = {0, 2.5, 5, 6.25, 7.5, 8.75, 10, 12.5};
    case_of("2.5 mm and 1.25 mm slices: the 1.25 mm grid", mixed, 8, 1.25, 11,
            (const int64_t[]){0, 2, 4, 5, 6, 7, 8, 10}, 3, true);
    const double coarse[] = {0, 2.5, 5, 7.5, 10, 11.25, 12.5};
    case_of("mostly 2.5 mm, two 1.25 mm gaps: the 1.25 mm grid", coarse, 7, 2.5, 11,
            (const int64_t[]){0, 2, 4, 6, 8, 9, 10}, 4, true);
    const double stray[] = {0, 2.5, 5, 5.1, 7.5, 10};
    case_of("one pair 0.1 mm apart: the 2.5 mm grid, both on plane 2", stray, 6, 2.5, 5,
            (const int64_t[]){0, 1, 2, 2, 3, 4}, 0, false);
    /* 0.625 mm slices, positions written with two decimals (gaps of 0.62 and 0.63), slice 150 of
     * 300 missing: the grid is 300 planes, every slice on its own (a step of one gap, 0.62 or
     * 0.63 mm, would make 302 or 298) */
    static double rounded[299];
    static int64_t rounded_plane[299];
    for (int k = 0, p = 0; p < 300; p++)
        if (p != 150) rounded_plane[k] = p, rounded[k++] = round(p * 62.5) / 100.0;
    case_of("0.625 mm at two decimals, one of 300 missing: 300 planes", rounded, 299, 0.63, 300, rounded_plane, 1,
            true);
    const double off[] = {0, 3, 6, 7.5, 10.5};
    /* 10.5 mm in 3 mm gaps: 4 gaps of 2.625 mm; only the first and last planes on a slice */
    case_of("slices off the planes: each on its nearest", off, 5, 3, 5, (const int64_t[]){0, 1, 2, 3, 4}, 3, false);
    /* an oblique stack along n = (1, 1, 1) / sqrt 3, 0.6 mm apart, positions written with two
     * decimals: each distance along n off by up to 0.005 sqrt 3 = 0.0087 mm; here every other
     * slice 0.0085 mm one way and the rest the other (gaps of 0.583 and 0.617 mm). Read with
     * the 0.01 mm of an axial stack, that was 41 planes, every one a blend of two slices. */
    const double n3[3] = {1 / sqrt(3.0), 1 / sqrt(3.0), 1 / sqrt(3.0)};
    expect(fabs(swin_stack_grid_rounding(n3) - 0.01 * sqrt(3.0)) < 1e-12 &&
               fabs(swin_stack_grid_rounding((const double[]){0, 0, -1}) - 0.01) < 1e-15,
           "rounding: 0.01 mm along an axis, 0.01 sqrt 3 mm along (1, 1, 1) / sqrt 3");
    static double oblique[40];
    static int64_t oblique_plane[40];
    for (int k = 0; k < 40; k++) {
        oblique[k] = 0.6 * k + (k % 2 ? 0.0085 : -0.0085) + 0.0085;
        oblique_plane[k] = k;
    }
    {
        /* even (no plane_of) or every slice on its own plane; either way the grid is the slices */
        struct swin_stack_grid g;
        swin_error err;
        static float src[40], dst[40];
        for (int k = 0; k < 40; k++) src[k] = (float)(k + 1);
        bool ok = swin_stack_grid_plan(oblique, 40, 0.6, swin_stack_grid_rounding(n3), 1000, &g, &err) == SWIN_OK &&
                  g.nz == 40 && g.filled == 0 && (!g.plane_of || (g.on_planes && !memcmp(g.plane_of, oblique_plane,
                                                                                        sizeof oblique_plane)));
        if (ok && g.plane_of) {
            swin_stack_grid_fill(&g, oblique, 40, src, 1, dst);
            ok = !memcmp(src, dst, sizeof src);
        }
        expect(ok, "oblique 0.6 mm at two decimals: the grid is the slices, none blended");
        swin_stack_grid_free(&g);
    }
    const double far[] = {0, 1, 2, 3000};
    struct swin_stack_grid g;
    swin_error err;
    expect(swin_stack_grid_plan(far, 4, 1, 0.01, 1000, &g, &err) == SWIN_ERR_FORMAT && strstr(err.msg, "1000"),
           "3001 planes over a limit of 1000: refused, the limit named");
    swin_stack_grid_free(&g);
    printf("%s\n", failures ? "FAILED" : "PASS");
    return failures != 0;
}
