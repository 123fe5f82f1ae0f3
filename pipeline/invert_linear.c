#include "pipeline/invert_linear.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int by_last_plane(const void *a, const void *b)
{
    const struct swin_lin_slice *x = a, *y = b;
    if (x->hi != y->hi) return x->hi < y->hi ? -1 : 1;
    return (x->t > y->t) - (x->t < y->t);
}

/* The two input axes other than q, in order. */
static void other_axes(int q, int *r1, int *r2)
{
    *r1 = q == 0 ? 1 : 0;
    *r2 = q == 2 ? 1 : 2;
}

swin_status swin_invert_linear_plan(struct swin_invert_linear *s, const struct swin_inverse *inv, int ax, int co,
                                    const int64_t in_dim[3])
{
    memset(s, 0, sizeof *s);
    s->inv = inv;
    s->co = co;
    s->ax = ax;
    s->o1 = ax == 0 ? 1 : 0;
    s->o2 = ax == 2 ? 1 : 2;
    s->plane = inv->grid_dim[s->o1] * inv->grid_dim[s->o2];
    memcpy(s->in_dim, in_dim, sizeof s->in_dim);
    for (int c = 1; c < 3; c++) /* in_to_ras is a permutation with flips: one entry per row */
        if (fabs(inv->in_to_ras.m[ax][c]) > fabs(inv->in_to_ras.m[ax][s->q])) s->q = c;
    int r1, r2;
    other_axes(s->q, &r1, &r2);
    const int64_t n = in_dim[s->q];
    if (!(s->slices = malloc((size_t)n * sizeof *s->slices))) return SWIN_ERR_NOMEM;
    s->depth = 1;
    for (int64_t t = 0; t < n; t++) {
        struct swin_lin_slice *sl = &s->slices[t];
        *sl = (struct swin_lin_slice){.t = t, .lo = INT64_MAX, .hi = -1};
        for (int corner = 0; corner < 4; corner++) { /* the extremes: see invert_linear.h */
            int64_t idx[3];
            idx[s->q] = t;
            idx[r1] = corner & 1 ? in_dim[r1] - 1 : 0;
            idx[r2] = corner & 2 ? in_dim[r2] - 1 : 0;
            struct swin_lerp l;
            swin_inverse_lerp(inv, idx[0], idx[1], idx[2], &l);
            if (l.lo[ax] < sl->lo) sl->lo = l.lo[ax];
            if (l.hi[ax] > sl->hi) sl->hi = l.hi[ax];
        }
        if (sl->hi - sl->lo + 1 > s->depth) s->depth = sl->hi - sl->lo + 1;
    }
    qsort(s->slices, (size_t)n, sizeof *s->slices, by_last_plane);
    return SWIN_OK;
}

size_t swin_invert_linear_bytes(const struct swin_invert_linear *s)
{
    return (size_t)s->in_dim[s->q] * sizeof *s->slices + (size_t)s->depth * (size_t)s->plane * (size_t)s->co * 4;
}

swin_status swin_invert_linear_start(struct swin_invert_linear *s, void *labels, int lb)
{
    s->labels = labels;
    s->lb = lb;
    s->next = 0;
    s->ring = malloc((size_t)s->depth * (size_t)s->plane * (size_t)s->co * sizeof *s->ring);
    return s->ring ? SWIN_OK : SWIN_ERR_NOMEM;
}

float *swin_invert_linear_voxel(struct swin_invert_linear *s, int64_t voxel)
{
    const int64_t *d = s->inv->grid_dim;
    int64_t x[3];
    x[2] = voxel % d[2];
    x[1] = voxel / d[2] % d[1];
    x[0] = voxel / d[2] / d[1];
    int64_t at = (x[s->ax] % s->depth) * s->plane + x[s->o1] * d[s->o2] + x[s->o2];
    return s->ring + at * s->co;
}

/* The labels of the input slice with index t along q, from the planes in the ring. */
static void label_slice(const struct swin_invert_linear *s, int64_t t)
{
    const int64_t *d = s->inv->grid_dim, nx = s->in_dim[0], ny = s->in_dim[1];
    const int64_t co = s->co;
    int r1, r2;
    other_axes(s->q, &r1, &r2);
    int64_t idx[3];
    idx[s->q] = t;
    for (idx[r2] = 0; idx[r2] < s->in_dim[r2]; idx[r2]++)
        for (idx[r1] = 0; idx[r1] < s->in_dim[r1]; idx[r1]++) {
            struct swin_lerp l;
            swin_inverse_lerp(s->inv, idx[0], idx[1], idx[2], &l);
            int64_t off[3][2]; /* per grid axis, lower and upper neighbour: offset in the ring */
            for (int e = 0; e < 2; e++) {
                off[s->ax][e] = ((e ? l.hi : l.lo)[s->ax] % s->depth) * s->plane * co;
                off[s->o1][e] = (e ? l.hi : l.lo)[s->o1] * d[s->o2] * co;
                off[s->o2][e] = (e ? l.hi : l.lo)[s->o2] * co;
            }
            const float *corner[8];
            for (int e = 0; e < 8; e++) corner[e] = s->ring + off[0][e >> 2] + off[1][(e >> 1) & 1] + off[2][e & 1];
            int best = 0, mask = 0;
            float best_p = -1; /* below any probability */
            for (int c = 0; c < co; c++) {
                const float f[8] = {corner[0][c], corner[1][c], corner[2][c], corner[3][c],
                                    corner[4][c], corner[5][c], corner[6][c], corner[7][c]};
                float p = (float)swin_lerp_blend(f, l.w);
                best = p > best_p ? c : best; /* the first maximum, as torch.argmax */
                best_p = p > best_p ? p : best_p;
                mask |= (p >= 0.5f) << c; /* masks: each channel's AsDiscrete(threshold=0.5) */
            }
            if (s->masks) best = mask;
            if (co == 1) best = best_p >= 0.5f; /* a sigmoid model: MONAI's AsDiscrete(threshold=0.5) */
            int64_t v = idx[0] + nx * (idx[1] + ny * idx[2]);
            if (s->lb == 1) ((uint8_t *)s->labels)[v] = (uint8_t)best;
            else ((uint16_t *)s->labels)[v] = (uint16_t)best;
        }
}

void swin_invert_linear_plane_done(struct swin_invert_linear *s, int64_t p)
{
    const int64_t n = s->in_dim[s->q];
    while (s->next < n && s->slices[s->next].hi <= p) label_slice(s, s->slices[s->next++].t);
}

void swin_invert_linear_free(struct swin_invert_linear *s)
{
    free(s->slices);
    free(s->ring);
    s->slices = NULL;
    s->ring = NULL;
}
