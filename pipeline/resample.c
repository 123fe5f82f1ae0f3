#include "pipeline/resample.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/parallel.h"

static inline double clampd(double x, double hi) { return x < 0 ? 0 : (x > hi ? hi : x); }

/* monai.utils.misc AFFINE_TOL, and numpy.allclose's relative tolerance */
#define AFFINE_TOL 1e-3
#define ALLCLOSE_RTOL 1e-5

static bool allclose(swin_mat4 a, swin_mat4 b)
{
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++)
            if (!(fabs(a.m[r][c] - b.m[r][c]) <= AFFINE_TOL + ALLCLOSE_RTOL * fabs(b.m[r][c]))) return false;
    return true;
}

static swin_mat4 normalise(const int64_t n[3]);

/* Whether a normalised-coordinate map's 3x3 part is diagonal: each output axis then reads one
 * input axis, the other products exact zeros (separable tables). */
static bool theta_diagonal(const double t[3][4])
{
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            if (a != b && t[a][b] != 0) return false;
    return true;
}

/* torch.linspace(-1, 1, n) * (n - 1) / n: affine_grid's base coordinates (align_corners=False),
 * symmetric with fused multiply-adds as torch computes them. */
static double *base_coords(int64_t n)
{
    double *b = malloc((size_t)n * sizeof *b);
    if (!b) return NULL;
    const int64_t half = n / 2;
    const double step = n > 1 ? 2.0 / (double)(n - 1) : 0;
    for (int64_t i = 0; i < n; i++) {
        double v = n == 1 ? -1.0 : i < half ? fma(step, (double)i, -1.0) : fma(-step, (double)(n - 1 - i), 1.0);
        b[i] = v * (double)(n - 1) / (double)n;
    }
    return b;
}

static inline double ras_coord(const struct swin_forward *f, int a, int64_t u0, int64_t u1, int64_t u2);
static inline void corners(const struct swin_forward *f, int a, double c, int64_t o[2], double w[2]);

/* Per grid axis a of a separable grid: the lower and upper corner's offset and the distances
 * torch weighs them by (as sample() computes them), from ras_coord itself with the other two
 * axes at 0. */
static swin_status separable_taps(struct swin_forward *f)
{
    for (int a = 0; a < 3; a++) {
        struct swin_axis_taps *t = &f->taps[a];
        const size_t n = (size_t)f->dim[a];
        t->lo = malloc(n * sizeof *t->lo), t->hi = malloc(n * sizeof *t->hi);
        t->w_lo = malloc(n * sizeof *t->w_lo), t->w_hi = malloc(n * sizeof *t->w_hi);
        if (!t->lo || !t->hi || !t->w_lo || !t->w_hi) return SWIN_ERR_NOMEM;
        for (int64_t u = 0; u < f->dim[a]; u++) {
            int64_t idx[3] = {0, 0, 0}, o[2];
            double w[2];
            idx[a] = u;
            corners(f, a, ras_coord(f, a, idx[0], idx[1], idx[2]), o, w);
            t->lo[u] = o[0], t->hi[u] = o[1], t->w_lo[u] = w[0], t->w_hi[u] = w[1];
        }
    }
    return SWIN_OK;
}

swin_status swin_forward_init(const struct swin_grid *g, const int64_t in_dim[3], struct swin_forward *f)
{
    memset(f, 0, sizeof *f);
    memcpy(f->dim, g->dim, sizeof f->dim);
    memcpy(f->ras_dim, g->ras_dim, sizeof f->ras_dim);
    /* spatial_resample: xform = solve(src_affine, dst_affine); nothing resampled when the
     * grid is the oriented one within AFFINE_TOL */
    swin_mat4 xform, dninv;
    if (!swin_mat4_solve(g->ras_affine, g->affine, &xform) ||
        !swin_mat4_solve(normalise(g->dim), swin_mat4_identity(), &dninv))
        return SWIN_ERR_SHAPE;
    const bool same_dim = !memcmp(g->dim, g->ras_dim, sizeof g->dim);
    f->unchanged = same_dim && (allclose(g->ras_affine, g->affine) || allclose(xform, swin_mat4_identity()));
    /* to_norm_affine: src_xform @ xform @ inv(dst_xform) */
    swin_mat4 t = swin_mat4_mul(swin_mat4_mul(normalise(g->ras_dim), xform), dninv);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++) f->theta[r][c] = t.m[r][c];
    /* RAS index along axis a -> its share of the input offset (i fastest): Orientation is a
     * permutation with flips, exact */
    const int64_t stride[3] = {1, in_dim[0], in_dim[0] * in_dim[1]};
    for (int a = 0; a < 3; a++) {
        f->base[a] = base_coords(g->dim[a]);
        f->off[a] = malloc((size_t)g->ras_dim[a] * sizeof *f->off[a]);
        if (!f->base[a] || !f->off[a]) {
            swin_forward_free(f);
            return SWIN_ERR_NOMEM;
        }
        int t_in = 0; /* the input axis RAS axis a reads */
        for (int r = 0; r < 3; r++)
            if (g->ras_to_in.m[r][a] != 0) t_in = r;
        const double sign = g->ras_to_in.m[t_in][a], shift = g->ras_to_in.m[t_in][3];
        for (int64_t x = 0; x < g->ras_dim[a]; x++)
            f->off[a][x] = (int64_t)nearbyint(sign * (double)x + shift) * stride[t_in];
    }
    f->separable = theta_diagonal(f->theta);
    if (f->separable && !f->unchanged && separable_taps(f)) {
        swin_forward_free(f);
        return SWIN_ERR_NOMEM;
    }
    return SWIN_OK;
}

void swin_forward_free(struct swin_forward *f)
{
    for (int a = 0; a < 3; a++) {
        free(f->base[a]);
        free(f->off[a]);
        free(f->taps[a].lo);
        free(f->taps[a].hi);
        free(f->taps[a].w_lo);
        free(f->taps[a].w_hi);
    }
    memset(f, 0, sizeof *f);
}

/* RAS coordinate a (voxels, clamped) of grid voxel u: affine_grid's bmm then grid_sample's
 * unnormalisation and border clamp. */
static inline double ras_coord(const struct swin_forward *f, int a, int64_t u0, int64_t u1, int64_t u2)
{
    const double *t = f->theta[a];
    const double gn = ((f->base[2][u2] * t[2] + f->base[1][u1] * t[1]) + f->base[0][u0] * t[0]) + t[3];
    return clampd(((gn + 1.0) * (double)f->ras_dim[a] - 1.0) / 2.0, (double)(f->ras_dim[a] - 1));
}

/* torch's grid_sample in float64 (aten GridSampler.cpp, 3D bilinear): the eight corners of
 * the (D, H, W) = (z, y, x) cell weighted by products of distances ((x * y) * z) and summed in
 * its order tnw, tne, tsw, tse, bnw, bne, bsw, bse. o[a]: the lower and upper corner's input
 * offset along RAS axis a (0 z, 1 y, 2 x), w[a] their distances. An upper corner past the
 * last voxel, which torch skips, is passed as the lower one: its distance is then exactly 0
 * (the coordinate is clamped to the last voxel), and a finite value times 0 adds nothing (the
 * intensities are finite: swin_image_read refuses others). The loads come first,
 * independent of one another. */
static inline double blend8(const float *in, const int64_t o[3][2], const double w[3][2])
{
    const double tnw = in[o[0][0] + o[1][0] + o[2][0]], tne = in[o[0][0] + o[1][0] + o[2][1]];
    const double tsw = in[o[0][0] + o[1][1] + o[2][0]], tse = in[o[0][0] + o[1][1] + o[2][1]];
    const double bnw = in[o[0][1] + o[1][0] + o[2][0]], bne = in[o[0][1] + o[1][0] + o[2][1]];
    const double bsw = in[o[0][1] + o[1][1] + o[2][0]], bse = in[o[0][1] + o[1][1] + o[2][1]];
    double out = 0;
    out += tnw * (w[2][0] * w[1][0] * w[0][0]);
    out += tne * (w[2][1] * w[1][0] * w[0][0]);
    out += tsw * (w[2][0] * w[1][1] * w[0][0]);
    out += tse * (w[2][1] * w[1][1] * w[0][0]);
    out += bnw * (w[2][0] * w[1][0] * w[0][1]);
    out += bne * (w[2][1] * w[1][0] * w[0][1]);
    out += bsw * (w[2][0] * w[1][1] * w[0][1]);
    out += bse * (w[2][1] * w[1][1] * w[0][1]);
    return out;
}

/* The corners along RAS axis a of coordinate c: their offsets (the upper one past the last
 * voxel passed as the lower, blend8) and distances. */
static inline void corners(const struct swin_forward *f, int a, double c, int64_t o[2], double w[2])
{
    const int64_t i0 = (int64_t)c, i1 = i0 + 1; /* floor: c >= 0 */
    o[0] = f->off[a][i0];
    o[1] = f->off[a][i1 < f->ras_dim[a] ? i1 : i0];
    w[0] = (double)i1 - c;
    w[1] = c - (double)i0;
}

/* Grid voxel u sampled from the input (padding_mode="border", align_corners=False). */
static inline double sample(const struct swin_forward *f, const float *in, int64_t u0, int64_t u1, int64_t u2)
{
    int64_t o[3][2];
    double w[3][2];
    for (int a = 0; a < 3; a++) corners(f, a, ras_coord(f, a, u0, u1, u2), o[a], w[a]);
    return blend8(in, o, w);
}

/* The same when theta's 3x3 part is diagonal (Spacing of an axis-aligned image): RAS axis a
 * then depends on grid axis a alone, the products of the other axes exactly zero, so each
 * axis' corners and distances come from its table (struct swin_axis_taps). */
static inline double sample_separable(const struct swin_forward *f, const float *in, int64_t u0, int64_t u1,
                                      int64_t u2)
{
    const int64_t u[3] = {u0, u1, u2};
    int64_t o[3][2];
    double w[3][2];
    for (int a = 0; a < 3; a++) {
        const struct swin_axis_taps *t = &f->taps[a];
        o[a][0] = t->lo[u[a]], o[a][1] = t->hi[u[a]];
        w[a][0] = t->w_lo[u[a]], w[a][1] = t->w_hi[u[a]];
    }
    return blend8(in, o, w);
}

struct resample_job {
    const float *in;
    const struct swin_forward *f;
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
    const struct swin_forward *f = j->f;
    const int64_t *d = f->dim;
    const struct swin_intensity win = j->win;
    float scale = win.hi - win.lo;
    for (int64_t t0 = b * TILE; t0 < e * TILE && t0 < d[0]; t0 += TILE)
        for (int64_t t1 = 0; t1 < d[1]; t1 += TILE)
            for (int64_t t2 = 0; t2 < d[2]; t2 += TILE)
                for (int64_t u0 = t0; u0 < t0 + TILE && u0 < d[0]; u0++)
                    for (int64_t u1 = t1; u1 < t1 + TILE && u1 < d[1]; u1++) {
                        float *row = j->out + (u0 * d[1] + u1) * d[2];
                        for (int64_t u2 = t2; u2 < t2 + TILE && u2 < d[2]; u2++) {
                            float v = f->unchanged    ? j->in[f->off[0][u0] + f->off[1][u1] + f->off[2][u2]]
                                      : f->separable ? (float)sample_separable(f, j->in, u0, u1, u2)
                                                     : (float)sample(f, j->in, u0, u1, u2);
                            if (win.enabled) { /* float32, in MONAI's order of operations */
                                v = (v - win.lo) / scale;
                                v = v < 0 ? 0 : (v > 1 ? 1 : v);
                            }
                            row[u2] = v;
                        }
                    }
}

void swin_resample_in(const float *in, const struct swin_forward *f, struct swin_intensity win, float *out,
                      int threads)
{
    struct resample_job j = {.in = in, .f = f, .win = win, .out = out};
    swin_parallel_for(threads, (f->dim[0] + TILE - 1) / TILE, resample_slabs, &j);
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
        if (!(inv->base[a] = base_coords(g->ras_dim[a]))) {
            swin_inverse_free(inv);
            return SWIN_ERR_NOMEM;
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
    if (!theta_diagonal(v->theta)) return SWIN_OK;
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
