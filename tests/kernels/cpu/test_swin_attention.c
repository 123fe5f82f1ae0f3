/* swin_attention against a float64 reference built the way docs/forward.md §3.3 describes it
 * (3.4.1-3.4.4), sharing no code with the op:
 *   LN1 over the real tokens; an explicit zero-padded grid P; an explicit rolled copy
 *   r[p] = u[(p + shift) mod P]; the region-label image built with MONAI's slice rules
 *   (slice(-w), slice(-w, -s), slice(-s, None), Python semantics, counter over 27 combos);
 *   per window and head: (scale q) k + table[R_full[i,t], h] (R_full of the configured
 *   window, i, t < n) + (-100 where labels differ), softmax, V, proj; un-roll, crop, add.
 * Variants of the reference that must be rejected (the test can fail): roll direction
 * flipped, geometrically "correct" bias for a shrunk window, padded tokens = LN(0) instead
 * of 0, no mask. */
#include "tests/kernels/cpu/op_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct variant {
    bool flip_roll, geometric_bias, pad_is_ln0, no_mask;
};

struct weights {
    struct swin_block_w blk;
    float *mem[8];
};

/* Python slice [start:stop] on an axis of length P, NONE for an omitted bound. */
#define NONE 1000000
static void pyslice(int start, int stop, int P, int *b, int *e)
{
    *b = start == NONE ? 0 : (start < 0 ? (start + P < 0 ? 0 : start + P) : (start > P ? P : start));
    *e = stop == NONE ? P : (stop < 0 ? (stop + P < 0 ? 0 : stop + P) : (stop > P ? P : stop));
    if (*e < *b) *e = *b;
}

/* ref (L1 L2 L3, C) = x + attention(x), x dense (L1 L2 L3, C). */
static void naive(float *ref, const float *x, int C, const struct swin_window_geom *g, const struct swin_block_w *w,
                  struct variant var)
{
    const int *L = g->L, *P = g->padded, *wn = g->win, *cw = g->cfg_window;
    int s[3];
    for (int k = 0; k < 3; k++) s[k] = var.flip_roll ? -g->shift[k] : g->shift[k];
    const size_t NP = (size_t)P[0] * P[1] * P[2];
    /* 1-2: LN1 then zero padding to P (or LN(0) = beta for the wrong variant) */
    double *u = calloc(NP * C, sizeof(double));
    for (int a = 0; a < P[0]; a++)
        for (int b = 0; b < P[1]; b++)
            for (int c = 0; c < P[2]; c++) {
                double *dst = u + (((size_t)a * P[1] + b) * P[2] + c) * C;
                if (a >= L[0] || b >= L[1] || c >= L[2]) {
                    if (var.pad_is_ln0)
                        for (int i = 0; i < C; i++) dst[i] = w->norm1_b[i];
                    continue;
                }
                const float *src = x + (((size_t)a * L[1] + b) * L[2] + c) * C;
                double mean = 0.0, v = 0.0;
                for (int i = 0; i < C; i++) mean += src[i];
                mean /= C;
                for (int i = 0; i < C; i++) v += (src[i] - mean) * (src[i] - mean);
                v /= C;
                for (int i = 0; i < C; i++) dst[i] = (src[i] - mean) / sqrt(v + 1e-5) * w->norm1_w[i] + w->norm1_b[i];
            }
    /* 3: rolled grid r[p] = u[(p + s) mod P] */
    double *r = malloc(NP * C * sizeof(double));
    for (int a = 0; a < P[0]; a++)
        for (int b = 0; b < P[1]; b++)
            for (int c = 0; c < P[2]; c++) {
                int qa = ((a + s[0]) % P[0] + P[0]) % P[0], qb = ((b + s[1]) % P[1] + P[1]) % P[1],
                    qc = ((c + s[2]) % P[2] + P[2]) % P[2];
                memcpy(r + (((size_t)a * P[1] + b) * P[2] + c) * C, u + (((size_t)qa * P[1] + qb) * P[2] + qc) * C,
                       (size_t)C * sizeof(double));
            }
    /* 3.4.4: region labels on the padded grid, MONAI's slices and counter */
    int *img = calloc(NP, sizeof(int));
    const bool masked = !var.no_mask && (g->shift[0] > 0 || g->shift[1] > 0 || g->shift[2] > 0);
    if (masked) {
        int sl[3][3][2];
        for (int k = 0; k < 3; k++) {
            pyslice(NONE, -wn[k], P[k], &sl[k][0][0], &sl[k][0][1]);
            pyslice(-wn[k], -g->shift[k], P[k], &sl[k][1][0], &sl[k][1][1]);
            pyslice(-g->shift[k], NONE, P[k], &sl[k][2][0], &sl[k][2][1]);
        }
        int cnt = 0;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                for (int k = 0; k < 3; k++, cnt++)
                    for (int a = sl[0][i][0]; a < sl[0][i][1]; a++)
                        for (int b = sl[1][j][0]; b < sl[1][j][1]; b++)
                            for (int c = sl[2][k][0]; c < sl[2][k][1]; c++) img[((size_t)a * P[1] + b) * P[2] + c] = cnt;
    }
    /* 4-5: windows */
    const int n = wn[0] * wn[1] * wn[2], heads = g->heads, hd = C / heads;
    const double scale = g->scale > 0 ? g->scale : 1.0 / sqrt((double)hd);
    double *T = malloc((size_t)n * C * sizeof(double)), *qkv = malloc((size_t)n * 3 * C * sizeof(double));
    double *O = malloc((size_t)n * C * sizeof(double)), *lg = malloc((size_t)n * sizeof(double));
    double *zr = calloc(NP * C, sizeof(double));
    size_t *pos = malloc((size_t)n * sizeof(size_t));
    int *lab = malloc((size_t)n * sizeof(int));
    for (int a0 = 0; a0 < P[0] / wn[0]; a0++)
        for (int a1 = 0; a1 < P[1] / wn[1]; a1++)
            for (int a2 = 0; a2 < P[2] / wn[2]; a2++) {
                for (int t = 0; t < n; t++) {
                    int t0 = t / (wn[1] * wn[2]), t1 = t / wn[2] % wn[1], t2 = t % wn[2];
                    pos[t] = ((size_t)(a0 * wn[0] + t0) * P[1] + (a1 * wn[1] + t1)) * P[2] + (a2 * wn[2] + t2);
                    lab[t] = img[pos[t]];
                    memcpy(T + (size_t)t * C, r + pos[t] * C, (size_t)C * sizeof(double));
                }
                for (int t = 0; t < n; t++)
                    for (int o = 0; o < 3 * C; o++) {
                        double acc = w->qkv_b ? w->qkv_b[o] : 0.0;
                        for (int i = 0; i < C; i++) acc += T[(size_t)t * C + i] * w->qkv_w[(size_t)i * 3 * C + o];
                        qkv[(size_t)t * 3 * C + o] = acc;
                    }
                for (int h = 0; h < heads; h++)
                    for (int i = 0; i < n; i++) {
                        /* token coordinates: in the configured window (MONAI's quirk) or, for the
                         * wrong variant, in the actual window */
                        const int *fr = var.geometric_bias ? wn : cw;
                        int i0 = i / (fr[1] * fr[2]), i1 = i / fr[2] % fr[1], i2 = i % fr[2];
                        double mx = -1e300;
                        for (int t = 0; t < n; t++) {
                            int t0 = t / (fr[1] * fr[2]), t1 = t / fr[2] % fr[1], t2 = t % fr[2];
                            int R = (i0 - t0 + cw[0] - 1) * (2 * cw[1] - 1) * (2 * cw[2] - 1) +
                                    (i1 - t1 + cw[1] - 1) * (2 * cw[2] - 1) + (i2 - t2 + cw[2] - 1);
                            double dot = 0.0;
                            for (int e = 0; e < hd; e++)
                                dot += scale * qkv[(size_t)i * 3 * C + h * hd + e] * qkv[(size_t)t * 3 * C + C + h * hd + e];
                            lg[t] = dot + w->bias_table[(size_t)R * heads + h] + (lab[i] != lab[t] ? -100.0 : 0.0);
                            if (lg[t] > mx) mx = lg[t];
                        }
                        double sum = 0.0;
                        for (int t = 0; t < n; t++) sum += (lg[t] = exp(lg[t] - mx));
                        for (int e = 0; e < hd; e++) {
                            double acc = 0.0;
                            for (int t = 0; t < n; t++) acc += lg[t] / sum * qkv[(size_t)t * 3 * C + 2 * C + h * hd + e];
                            O[(size_t)i * C + h * hd + e] = acc;
                        }
                    }
                for (int t = 0; t < n; t++)
                    for (int o = 0; o < C; o++) {
                        double acc = w->proj_b[o];
                        for (int i = 0; i < C; i++) acc += O[(size_t)t * C + i] * w->proj_w[(size_t)i * C + o];
                        zr[pos[t] * C + o] = acc;
                    }
            }
    /* 6-7: z[q] = zr[(q - s) mod P], crop to L, residual add */
    for (int a = 0; a < L[0]; a++)
        for (int b = 0; b < L[1]; b++)
            for (int c = 0; c < L[2]; c++) {
                int pa = ((a - s[0]) % P[0] + P[0]) % P[0], pb = ((b - s[1]) % P[1] + P[1]) % P[1],
                    pc = ((c - s[2]) % P[2] + P[2]) % P[2];
                const double *z = zr + (((size_t)pa * P[1] + pb) * P[2] + pc) * C;
                size_t v = ((size_t)a * L[1] + b) * L[2] + c;
                for (int i = 0; i < C; i++) ref[v * C + i] = (float)(x[v * C + i] + z[i]);
            }
    free(u); free(r); free(img); free(T); free(qkv); free(O); free(lg); free(zr); free(pos); free(lab);
}

static void make_weights(struct weights *W, test_rng *r, int C, int heads, const int cfg[3], bool qkv_bias)
{
    const size_t rows = (size_t)(2 * cfg[0] - 1) * (2 * cfg[1] - 1) * (2 * cfg[2] - 1);
    memset(W, 0, sizeof *W);
    W->blk.norm1_w = W->mem[0] = test_rand(r, (size_t)C, 0.5f, 1.5f);
    W->blk.norm1_b = W->mem[1] = test_rand(r, (size_t)C, -0.5f, 0.5f);
    W->blk.qkv_w = W->mem[2] = test_rand(r, (size_t)C * 3 * C, -0.6f, 0.6f);
    W->blk.qkv_b = W->mem[3] = qkv_bias ? test_rand(r, (size_t)3 * C, -0.5f, 0.5f) : NULL;
    W->blk.bias_table = W->mem[4] = test_rand(r, rows * heads, -1.0f, 1.0f);
    W->blk.proj_w = W->mem[5] = test_rand(r, (size_t)C * C, -0.4f, 0.4f);
    W->blk.proj_b = W->mem[6] = test_rand(r, (size_t)C, -0.5f, 0.5f);
}

static double max_diff(const float *a, const float *b, size_t n, double *scale)
{
    double m = 0.0;
    *scale = 1.0;
    for (size_t i = 0; i < n; i++) {
        m = fmax(m, fabs((double)a[i] - b[i]));
        *scale = fmax(*scale, fabs((double)b[i]));
    }
    return m;
}

/* fp32 op vs float64 reference: GEMMs with K <= 343, softmax over n <= 343 keys
 * (logits |.| < ~10) and fp32 LN: < 3e-5 of max(1, |ref|). Every wrong variant moves the
 * output by > 1e-3 (1e-3 .. 1e-2 on a whole model, docs/forward.md §4; here per block). */
#define ATTN_TOL 3e-5

/* scale: the logits' scale the geometry carries (0: 1/sqrt(head dim)) */
static bool run_case_scaled(struct swin_cpu_backend *be, int L0, int L1, int L2, const int cfg[3], int C, int heads,
                            bool odd_block, int pitch, bool qkv_bias, struct variant must_differ[], int nvar, float scale)
{
    const int L[3] = {L0, L1, L2};
    struct swin_window_geom g = swin_window_geom_make(L, cfg, heads, odd_block);
    g.scale = scale;
    char name[200];
    snprintf(name, sizeof name,
             "swin_attention L %dx%dx%d cfg %dx%dx%d win %dx%dx%d shift %d,%d,%d P %dx%dx%d C %d heads %d pitch %d qkv_b %d",
             L0, L1, L2, cfg[0], cfg[1], cfg[2], g.win[0], g.win[1], g.win[2], g.shift[0], g.shift[1], g.shift[2],
             g.padded[0], g.padded[1], g.padded[2], C, heads, pitch, qkv_bias);
    test_rng r = {0xabcdefULL + (uint64_t)(L0 * 100 + L1 * 10 + L2 + C * 1000 + odd_block)};
    tvol x = tvol_new(L0, L1, L2, C, pitch);
    tvol_fill(&x, &r, -2.0f, 2.0f);
    struct weights W;
    make_weights(&W, &r, C, heads, cfg, qkv_bias);
    float *xd = tvol_dense(&x);
    size_t n = swin_vol_voxels(x.v) * C;
    float *ref = malloc(n * sizeof(float));
    naive(ref, xd, C, &g, &W.blk, (struct variant){0});
    size_t wsb = swin_cpu_ops.swin_attention_ws(be, x.v, &g);
    void *ws = ws_new(wsb);
    bool ok = check_true(name, swin_cpu_ops.swin_attention(be, x.v, &W.blk, &g, ws, wsb) == 0);
    float *got = tvol_dense(&x);
    ok &= check_close_scaled(name, got, ref, n, ATTN_TOL);
    ok &= tvol_guard_ok(name, &x, 0, C);
    for (int i = 0; i < nvar; i++) {
        naive(ref, xd, C, &g, &W.blk, must_differ[i]);
        double sc, d = max_diff(got, ref, n, &sc);
        char what[160];
        snprintf(what, sizeof what, "swin_attention: wrong reference (flip_roll %d geometric_bias %d pad_ln0 %d no_mask %d) "
                 "rejected, max |d| %.3g (the test can fail)", must_differ[i].flip_roll, must_differ[i].geometric_bias,
                 must_differ[i].pad_is_ln0, must_differ[i].no_mask, d);
        ok &= check_true(what, d > ATTN_TOL * sc);
    }
    for (int i = 0; i < 8; i++) free(W.mem[i]);
    free(xd); free(ref); free(got);
    ok &= ws_free(ws);
    tvol_free(&x);
    return ok;
}

static bool run_case(struct swin_cpu_backend *be, int L0, int L1, int L2, const int cfg[3], int C, int heads,
                     bool odd_block, int pitch, bool qkv_bias, struct variant must_differ[], int nvar)
{
    return run_case_scaled(be, L0, L1, L2, cfg, C, heads, odd_block, pitch, qkv_bias, must_differ, nvar, 0);
}

/* All cases on the backend's current kernels (the softmax differs between levels). */
static bool all_cases(struct swin_cpu_backend *be)
{
    bool ok = true;
    const int c7[3] = {7, 7, 7}, c573[3] = {5, 7, 3};
    struct variant all_wrong[] = {{.flip_roll = true}, {.geometric_bias = true}, {.pad_is_ln0 = true}, {.no_mask = true}};
    /* the geometric bias equals the quirk unless H or W shrinks (token order is W fastest) */
    struct variant no_geo[] = {{.flip_roll = true}, {.pad_is_ln0 = true}, {.no_mask = true}};
    struct variant geo[] = {{.geometric_bias = true}, {.pad_is_ln0 = true}};
    /* shrink on D (5 <= 7), padding on H and W (9 -> 14, 13 -> 14), shift (0,3,3) */
    ok &= run_case(be, 5, 9, 13, c7, 12, 3, true, 14, true, no_geo, 3);
    ok &= run_case(be, 5, 9, 13, c7, 12, 3, false, 12, true, no_geo + 1, 1);
    /* shrink on H (5 <= 7): the bias quirk matters; shift (3,0,3) */
    ok &= run_case(be, 9, 5, 13, c7, 12, 3, true, 14, true, all_wrong, 4);
    ok &= run_case(be, 9, 5, 13, c7, 12, 3, false, 12, true, geo, 2);
    /* L = 7 exactly (no shift on that axis by the <= rule), 14, and an axis of length 1; hd 5 */
    ok &= run_case(be, 7, 14, 1, c7, 20, 4, true, 23, true, NULL, 0);
    /* non-cubic configured window, shift (2,0,1), padded 10x7x6; no qkv bias; hd 5 and hd 1 */
    ok &= run_case(be, 6, 7, 4, c573, 5, 1, true, 5, false, no_geo, 3);
    ok &= run_case(be, 6, 7, 4, c573, 3, 3, false, 4, true, NULL, 0);
    /* every axis shrinks: one 3x4x2 window, no shift, 24 tokens with the 7^3 index prefix */
    ok &= run_case(be, 3, 4, 2, c7, 12, 3, true, 12, true, geo, 1);
    /* padding 6 under a shift of 3: padded tokens share regions with real ones */
    ok &= run_case(be, 8, 8, 8, c7, 6, 2, true, 6, true, NULL, 0);
    /* full 7^3 windows, 8 of them, shifted */
    ok &= run_case(be, 14, 14, 14, c7, 12, 3, true, 13, true, NULL, 0);
    /* head dims of the fused kernels' tiles: 16 (every stage of the default model) in full 7^3
     * windows of 343 keys shifted on one axis, and 20 (one 16-column tile and a partial one) */
    ok &= run_case(be, 14, 7, 7, c7, 32, 2, true, 35, true, no_geo + 2, 1);
    ok &= run_case(be, 8, 7, 9, c7, 40, 2, true, 40, false, NULL, 0);
    /* a scale the model file stores other than 1/sqrt(head dim) (0.25 at head dim 16) */
    ok &= run_case_scaled(be, 14, 7, 7, c7, 32, 2, true, 35, true, NULL, 0, 0.17f);
    return ok;
}

int main(void) { return test_main_every_level(all_cases); }
