#include "pipeline/resample.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/parallel.h"

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

struct resample_job {
    const float *in;
    const int64_t *in_dim;
    const struct swin_grid *g;
    struct swin_intensity win;
    float *out;
};

/* The grid is resampled in tiles of TILE^3 voxels: a tile reads a small box of the input
 * (about TILE times the scale per axis) that stays in cache while its voxels use it, whichever
 * grid axis runs along the input's fastest one, and writes whole rows of TILE values. */
enum { TILE = 16 };

/* Slabs [b, e) of TILE planes u0 of the grid, tile by tile. */
static void resample_slabs(void *user, int tid, int64_t b, int64_t e)
{
    (void)tid;
    const struct resample_job *j = user;
    const struct swin_grid *g = j->g;
    const int64_t *in_dim = j->in_dim, *d = g->dim;
    /* the input is stored i fastest: view it as (k, j, i) with i the fastest axis */
    const int64_t rev[3] = {in_dim[2], in_dim[1], in_dim[0]};
    const swin_mat4 *m = &g->to_in;
    const struct swin_intensity win = j->win;
    float scale = win.hi - win.lo;
    for (int64_t t0 = b * TILE; t0 < e * TILE && t0 < d[0]; t0 += TILE)
        for (int64_t t1 = 0; t1 < d[1]; t1 += TILE)
            for (int64_t t2 = 0; t2 < d[2]; t2 += TILE)
                for (int64_t u0 = t0; u0 < t0 + TILE && u0 < d[0]; u0++)
                    for (int64_t u1 = t1; u1 < t1 + TILE && u1 < d[1]; u1++) {
                        float *row = j->out + (u0 * d[1] + u1) * d[2];
                        for (int64_t u2 = t2; u2 < t2 + TILE && u2 < d[2]; u2++) {
                            double x[3];
                            for (int r = 0; r < 3; r++)
                                x[r] = m->m[r][0] * (double)u0 + m->m[r][1] * (double)u1 + m->m[r][2] * (double)u2 +
                                       m->m[r][3];
                            float v = (float)trilinear(j->in, rev, in_dim[0] * in_dim[1], in_dim[0], x[2], x[1], x[0]);
                            if (win.enabled) { /* float32, in MONAI's order of operations */
                                v = (v - win.lo) / scale;
                                v = v < 0 ? 0 : (v > 1 ? 1 : v);
                            }
                            row[u2] = v;
                        }
                    }
}

void swin_resample_in(const float *in, const int64_t in_dim[3], const struct swin_grid *g,
                      struct swin_intensity win, float *out, int threads)
{
    struct resample_job j = {.in = in, .in_dim = in_dim, .g = g, .win = win, .out = out};
    swin_parallel_for(threads, (g->dim[0] + TILE - 1) / TILE, resample_slabs, &j);
}

/* monai.networks.utils.normalize_transform(shape, align_corners=False): voxel -> [-1, 1] */
static swin_mat4 normalise(const int64_t n[3])
{
    swin_mat4 m = swin_mat4_identity();
    for (int r = 0; r < 3; r++) {
        m.m[r][r] = 2.0 / (double)n[r];
        m.m[r][3] = 1.0 / (double)n[r] - 1.0;
    }
    return m;
}

static swin_status nearest_tables(struct swin_inverse *v);

swin_status swin_inverse_init(const struct swin_grid *g, struct swin_inverse *inv)
{
    memset(inv, 0, sizeof *inv);
    memcpy(inv->grid_dim, g->dim, sizeof g->dim);
    memcpy(inv->ras_dim, g->ras_dim, sizeof g->ras_dim);
    swin_mat4 xform, dninv;
    /* spatial_resample: xform = solve(src_affine, dst_affine); to_norm_affine:
     * src_xform @ xform @ inv(dst_xform) */
    if (!swin_mat4_inverse(g->ras_to_in, &inv->in_to_ras) || !swin_mat4_solve(g->affine, g->ras_affine, &xform) ||
        !swin_mat4_solve(normalise(g->ras_dim), swin_mat4_identity(), &dninv))
        return SWIN_ERR_SHAPE;
    swin_mat4 t = swin_mat4_mul(swin_mat4_mul(normalise(g->dim), xform), dninv);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++) inv->theta[r][c] = t.m[r][c];
    for (int a = 0; a < 3; a++) {
        int64_t n = g->ras_dim[a], half = n / 2;
        if (!(inv->base[a] = malloc((size_t)n * sizeof(double)))) {
            swin_inverse_free(inv);
            return SWIN_ERR_NOMEM;
        }
        double step = n > 1 ? 2.0 / (double)(n - 1) : 0;
        for (int64_t i = 0; i < n; i++) { /* torch.linspace: symmetric, fused multiply-add */
            double v = n == 1 ? -1.0 : i < half ? fma(step, (double)i, -1.0) : fma(-step, (double)(n - 1 - i), 1.0);
            inv->base[a][i] = v * (double)(n - 1) / (double)n;
        }
    }
    if (nearest_tables(inv)) {
        swin_inverse_free(inv);
        return SWIN_ERR_NOMEM;
    }
    return SWIN_OK;
}

void swin_inverse_free(struct swin_inverse *inv)
{
    for (int a = 0; a < 3; a++) {
        free(inv->base[a]);
        free(inv->nearest[a]);
    }
    memset(inv, 0, sizeof *inv);
}

/* Grid coordinates (voxel units, clamped to the grid) of input voxel (i, j, k). */
static inline void grid_coords(const struct swin_inverse *v, int64_t i, int64_t j, int64_t k, double u[3])
{
    double x[3];
    int64_t r[3];
    const swin_mat4 *p = &v->in_to_ras;
    for (int a = 0; a < 3; a++) { /* exact: a permutation with flips */
        double rr = p->m[a][0] * (double)i + p->m[a][1] * (double)j + p->m[a][2] * (double)k + p->m[a][3];
        r[a] = (int64_t)nearbyint(rr);
        x[a] = v->base[a][r[a]];
    }
    for (int a = 0; a < 3; a++) {
        /* affine_grid's bmm over (W, H, D, 1) = RAS axes 2, 1, 0 in that order */
        double gn = ((x[2] * v->theta[a][2] + x[1] * v->theta[a][1]) + x[0] * v->theta[a][0]) + v->theta[a][3];
        double c = ((gn + 1.0) * (double)v->grid_dim[a] - 1.0) / 2.0; /* grid_sample unnormalise */
        u[a] = clampd(c, (double)(v->grid_dim[a] - 1));                  /* padding_mode="border" */
    }
}

static inline int64_t nearest_index(const struct swin_inverse *v, int64_t i, int64_t j, int64_t k)
{
    double u[3];
    grid_coords(v, i, j, k, u);
    const int64_t *d = v->grid_dim;
    return ((int64_t)nearbyint(u[0]) * d[1] + (int64_t)nearbyint(u[1])) * d[2] + (int64_t)nearbyint(u[2]);
}

/* The separable nearest (swin_inverse.nearest), when theta's 3x3 part is diagonal: with the
 * other products exactly zero, grid_coords' sums add zeros to one term, so u[a] depends on RAS
 * axis a alone, and RAS axis a on one input axis (in_to_ras is a permutation). Each table is
 * grid_coords itself along one input axis, the other two at 0. */
static swin_status nearest_tables(struct swin_inverse *v)
{
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            if (a != b && v->theta[a][b] != 0) return SWIN_OK;
    const int64_t stride[3] = {v->grid_dim[1] * v->grid_dim[2], v->grid_dim[2], 1};
    for (int t = 0; t < 3; t++) {
        int a = 0; /* the RAS (and grid) axis input axis t runs along */
        for (int r = 1; r < 3; r++)
            if (v->in_to_ras.m[r][t] != 0) a = r;
        const int64_t n = v->ras_dim[a];
        if (!(v->nearest[t] = malloc((size_t)n * sizeof *v->nearest[t]))) return SWIN_ERR_NOMEM;
        for (int64_t x = 0; x < n; x++) {
            int64_t idx[3] = {0, 0, 0};
            double u[3];
            idx[t] = x;
            grid_coords(v, idx[0], idx[1], idx[2], u);
            v->nearest[t][x] = (int64_t)nearbyint(u[a]) * stride[a];
        }
    }
    return SWIN_OK;
}

/* swin_plane_nearest_u8 / _u16: the same gathers for either label width. */
#define PLANE_NEAREST(NAME, T)                                                                              \
    void NAME(const struct swin_inverse *v, const T *src, int64_t nx, int64_t ny, int64_t k, T *plane)      \
    {                                                                                                       \
        if (!v->nearest[0]) {                                                                               \
            for (int64_t j = 0; j < ny; j++)                                                                \
                for (int64_t i = 0; i < nx; i++) plane[j * nx + i] = src[nearest_index(v, i, j, k)];       \
            return;                                                                                         \
        }                                                                                                   \
        const int64_t *ni = v->nearest[0];                                                                  \
        for (int64_t j = 0; j < ny; j++) {                                                                  \
            const T *row = src + v->nearest[2][k] + v->nearest[1][j];                                       \
            for (int64_t i = 0; i < nx; i++) plane[j * nx + i] = row[ni[i]];                                \
        }                                                                                                   \
    }
PLANE_NEAREST(swin_plane_nearest_u8, uint8_t)
PLANE_NEAREST(swin_plane_nearest_u16, uint16_t)

void swin_inverse_lerp(const struct swin_inverse *v, int64_t i, int64_t j, int64_t k, struct swin_lerp *l)
{
    double u[3];
    grid_coords(v, i, j, k, u); /* clamped: u in [0, d - 1] */
    for (int a = 0; a < 3; a++) {
        l->lo[a] = (int64_t)u[a];
        l->hi[a] = l->lo[a] + 1 < v->grid_dim[a] ? l->lo[a] + 1 : l->lo[a];
        l->w[a] = u[a] - (double)l->lo[a];
    }
}

void swin_plane_trilinear(const struct swin_inverse *v, const float *src, int64_t nx, int64_t ny, int64_t k,
                          float *plane)
{
    const int64_t s0 = v->grid_dim[1] * v->grid_dim[2], s1 = v->grid_dim[2];
    for (int64_t j = 0; j < ny; j++)
        for (int64_t i = 0; i < nx; i++) {
            struct swin_lerp l;
            swin_inverse_lerp(v, i, j, k, &l);
            float f[8];
            for (int e = 0; e < 8; e++)
                f[e] = src[(e & 4 ? l.hi[0] : l.lo[0]) * s0 + (e & 2 ? l.hi[1] : l.lo[1]) * s1 +
                           (e & 1 ? l.hi[2] : l.lo[2])];
            plane[j * nx + i] = (float)swin_lerp_blend(f, l.w);
        }
}
