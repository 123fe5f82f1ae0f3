#include "runtime/pipeline/resample.h"

#include <math.h>

static inline double clampd(double x, double hi) { return x < 0 ? 0 : (x > hi ? hi : x); }

/* Trilinear at (x0, x1, x2) of a volume with x2 fastest in memory (strides s0, s1, 1). */
static double trilinear(const float *v, const int64_t d[3], int64_t s0, int64_t s1, double x0, double x1, double x2)
{
    x0 = clampd(x0, (double)(d[0] - 1));
    x1 = clampd(x1, (double)(d[1] - 1));
    x2 = clampd(x2, (double)(d[2] - 1));
    int64_t a = (int64_t)x0, b = (int64_t)x1, c = (int64_t)x2;
    double fa = x0 - (double)a, fb = x1 - (double)b, fc = x2 - (double)c;
    int64_t a1 = a + 1 < d[0] ? a + 1 : a, b1 = b + 1 < d[1] ? b + 1 : b, c1 = c + 1 < d[2] ? c + 1 : c;
    const float *p00 = v + a * s0 + b * s1, *p01 = v + a * s0 + b1 * s1;
    const float *p10 = v + a1 * s0 + b * s1, *p11 = v + a1 * s0 + b1 * s1;
    double l0 = (p00[c] * (1 - fc) + p00[c1] * fc) * (1 - fb) + (p01[c] * (1 - fc) + p01[c1] * fc) * fb;
    double l1 = (p10[c] * (1 - fc) + p10[c1] * fc) * (1 - fb) + (p11[c] * (1 - fc) + p11[c1] * fc) * fb;
    return l0 * (1 - fa) + l1 * fa;
}

void swin_resample_in(const float *in, const int64_t in_dim[3], const struct swin_grid *g,
                      struct swin_intensity win, float *out)
{
    /* the input is stored i fastest: view it as (k, j, i) with i the fastest axis */
    const int64_t rev[3] = {in_dim[2], in_dim[1], in_dim[0]};
    const swin_mat4 *m = &g->to_in;
    float scale = win.hi - win.lo;
    for (int64_t u0 = 0; u0 < g->dim[0]; u0++)
        for (int64_t u1 = 0; u1 < g->dim[1]; u1++) {
            float *row = out + (u0 * g->dim[1] + u1) * g->dim[2];
            for (int64_t u2 = 0; u2 < g->dim[2]; u2++) {
                double x[3];
                for (int r = 0; r < 3; r++)
                    x[r] = m->m[r][0] * (double)u0 + m->m[r][1] * (double)u1 + m->m[r][2] * (double)u2 + m->m[r][3];
                float v = (float)trilinear(in, rev, in_dim[0] * in_dim[1], in_dim[0], x[2], x[1], x[0]);
                if (win.enabled) { /* float32, in MONAI's order of operations */
                    v = (v - win.lo) / scale;
                    v = v < 0 ? 0 : (v > 1 ? 1 : v);
                }
                row[u2] = v;
            }
        }
}

/* u = from_in * (i, j, k), rounded half to even and clamped to the grid. */
static inline int64_t nearest_index(swin_mat4 m, const int64_t d[3], int64_t i, int64_t j, int64_t k)
{
    int64_t u[3];
    for (int r = 0; r < 3; r++) {
        double x = m.m[r][0] * (double)i + m.m[r][1] * (double)j + m.m[r][2] * (double)k + m.m[r][3];
        u[r] = (int64_t)clampd(nearbyint(x), (double)(d[r] - 1));
    }
    return (u[0] * d[1] + u[1]) * d[2] + u[2];
}

void swin_plane_nearest_u8(const uint8_t *src, const int64_t d[3], swin_mat4 m, int64_t nx, int64_t ny, int64_t k,
                           uint8_t *plane)
{
    for (int64_t j = 0; j < ny; j++)
        for (int64_t i = 0; i < nx; i++) plane[j * nx + i] = src[nearest_index(m, d, i, j, k)];
}

void swin_plane_nearest_u16(const uint16_t *src, const int64_t d[3], swin_mat4 m, int64_t nx, int64_t ny, int64_t k,
                            uint16_t *plane)
{
    for (int64_t j = 0; j < ny; j++)
        for (int64_t i = 0; i < nx; i++) plane[j * nx + i] = src[nearest_index(m, d, i, j, k)];
}

void swin_plane_trilinear(const float *src, const int64_t d[3], swin_mat4 m, int64_t nx, int64_t ny, int64_t k,
                          float *plane)
{
    for (int64_t j = 0; j < ny; j++)
        for (int64_t i = 0; i < nx; i++) {
            double x[3];
            for (int r = 0; r < 3; r++)
                x[r] = m.m[r][0] * (double)i + m.m[r][1] * (double)j + m.m[r][2] * (double)k + m.m[r][3];
            plane[j * nx + i] = (float)trilinear(src, d, d[1] * d[2], d[2], x[0], x[1], x[2]);
        }
}
