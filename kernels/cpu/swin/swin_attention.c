/* swin_attention, in place on the residual stream x (L1, L2, L3, C), one Swin block's
 * attention half (MONAI SwinTransformerBlock.forward_part1 + residual; forward spec 3.4):
 *
 *   u = LN1(x) (affine), zero-padded to P = padded (after the norm: padded tokens are 0)
 *   r[p] = u[(p + shift) mod P]                          (roll toward lower indices)
 *   per window of n = win1 win2 win3 tokens (token t = (t1 win2 + t2) win3 + t3):
 *     qkv = T . qkv_w + qkv_b                            T (n, C), qkv (n, 3C)
 *     per head j (hd = C / heads, scale = hd^-1/2, or the rounded copy of it a model file stores: swin_window_geom.scale):
 *       S[i,t] = (scale q_i) . k_t + table[R_full[i,t], j] + (-100 if label(i) != label(t))
 *       O_j = softmax_t(S) . V_j                         padded tokens attend as keys
 *     Y = O . proj_w + proj_b
 *   x[q] += Y[t] where q = (p + shift) mod P is real (q < L on every axis)
 *
 * R_full is the relative-position index of the CONFIGURED window cfg_window, read at
 * i, t < n (the shrink quirk, spec 3.4.3). The mask (spec 3.4.4) is used iff some
 * shift > 0; labels come from the rolled padded coordinate p of each token.
 * Windows are disjoint, so each thread gathers, computes and scatters its windows in place.
 * Threads claim whole windows (a stage with a single window, e.g. stage 4 at 96^3, runs on
 * one thread). With AVX-512 or AVX2 + FMA each head runs fused per block of query rows
 * (attn_avx512.c, attn_avx2.c; attn_avx512bf16.c at the AVX512_BF16 level where the qkv
 * weight is bfloat16: q k^T and p v in bfloat16); otherwise OpenBLAS GEMMs and
 * swin_cpu_softmax_row. qkv and proj GEMMs: gemm_bf16.h's weight GEMMs.
 *
 * Workspace: shared bias (heads, n, n) = table[R_full[i,t], h], built once per call; per thread
 *   tok (n, C) gathered LN1 tokens, later the projection output
 *   qkv (n, 3C), s one head's logits: (n, n), or the row block of the fused heads,
 *   o (n, C), src (n) int64 voxel or -1, label (n) int, kt, vt the fused heads' k and v
 *   (attn_head.h gives their sizes). */
#include "kernels/cpu/swin/attn_head.h"
#include "kernels/cpu/cpu_internal.h"
#include "kernels/cpu/gemm/gemm_bf16.h"
#include "kernels/cpu/vmath/cpu_rowops.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

static long win_tokens(const struct swin_window_geom *g) { return (long)g->win[0] * g->win[1] * g->win[2]; }

static size_t attn_bias_bytes(long n, int heads) { return swin_cpu_round((size_t)heads * n * n * sizeof(float)); }

/* Per-thread scratch of the fused heads: k and v of one head rearranged. */
static size_t attn_tr_bytes(long n, int c, int heads)
{
    return swin_cpu_round(swin_cpu_attn_tr_floats((int)n, c / heads) * sizeof(float));
}

static size_t attn_s_bytes(long n)
{
    const size_t full = (size_t)n * n, blk = swin_cpu_attn_sblk_floats((int)n);
    return swin_cpu_round((full > blk ? full : blk) * sizeof(float));
}

static size_t attn_slice(long n, int c, int heads)
{
    return swin_cpu_round((size_t)n * c * sizeof(float)) * 2 + swin_cpu_round((size_t)n * 3 * c * sizeof(float)) +
           attn_s_bytes(n) + swin_cpu_round((size_t)n * sizeof(int64_t)) +
           swin_cpu_round((size_t)n * sizeof(int)) + 2 * attn_tr_bytes(n, c, heads);
}

size_t swin_cpu_swin_attention_ws(void *bev, struct swin_vol x, const struct swin_window_geom *g)
{
    struct swin_cpu_backend *be = bev;
    long n = win_tokens(g);
    return SWIN_CPU_ALIGN + attn_bias_bytes(n, g->heads) + (size_t)be->nthreads * attn_slice(n, x.c, g->heads);
}

struct attn_task {
    struct swin_vol x;
    const struct swin_block_w *w;
    const struct swin_window_geom *g;
    long n;
    bool masked;
    float *bias;             /* (heads, n, n) */
    swin_cpu_attn_head_fn *head; /* a fused head (attn_head.h), or NULL: OpenBLAS + swin_cpu_softmax_row */
    struct swin_cpu_wgemm qkv, proj; /* bfloat16 weights or not */
    swin_cpu_ln_row_fn *ln;
    char *ws;                /* per-thread slices */
    size_t slice;
    atomic_long next;
};

/* Region label of rolled padded coordinate p on one axis (spec 3.4.4). */
static int region(int p, int padded, int win, int shift)
{
    if (shift == 0) return 0;
    if (p < padded - win) return 0;
    return p < padded - shift ? 1 : 2;
}

/* Gather window widx: LN1 tokens (zero where padded), their source voxels and labels. */
static void gather(const struct attn_task *t, long widx, float *tok, int64_t *src, int *label)
{
    const struct swin_window_geom *g = t->g;
    const struct swin_vol x = t->x;
    const int c = x.c;
    const int nw1 = g->padded[1] / g->win[1], nw2 = g->padded[2] / g->win[2];
    const int a[3] = {(int)(widx / ((long)nw1 * nw2)), (int)(widx / nw2 % nw1), (int)(widx % nw2)};
    for (long ti = 0; ti < t->n; ti++) {
        const int tt[3] = {(int)(ti / ((long)g->win[1] * g->win[2])), (int)(ti / g->win[2] % g->win[1]),
                           (int)(ti % g->win[2])};
        int q[3], lab = 0;
        bool real = true;
        for (int k = 0; k < 3; k++) {
            const int p = a[k] * g->win[k] + tt[k];
            q[k] = (p + g->shift[k]) % g->padded[k];
            real = real && q[k] < g->L[k];
            lab = lab * 3 + region(p, g->padded[k], g->win[k], g->shift[k]);
        }
        label[ti] = lab;
        float *row = tok + ti * c;
        if (!real) {
            src[ti] = -1;
            memset(row, 0, (size_t)c * sizeof(float));
            continue;
        }
        src[ti] = ((int64_t)q[0] * x.h + q[1]) * x.w + q[2];
        t->ln(row, swin_vol_f32(x) + src[ti] * x.pitch, c, t->w->norm1_w, t->w->norm1_b);
    }
}

static void attn_run(void *p, int tid, int nth)
{
    struct attn_task *t = p;
    const struct swin_window_geom *g = t->g;
    const struct swin_block_w *w = t->w;
    const struct swin_vol x = t->x;
    const int c = x.c, c3 = 3 * c, heads = g->heads, hd = c / heads;
    const int n = (int)t->n;
    const float scale = g->scale > 0 ? g->scale : (float)(1.0 / sqrt((double)hd));
    char *base = t->ws + (size_t)tid * t->slice;
    float *tok = (float *)base;
    float *o = (float *)(base += swin_cpu_round((size_t)n * c * sizeof(float)));
    float *qkv = (float *)(base += swin_cpu_round((size_t)n * c * sizeof(float)));
    float *s = (float *)(base += swin_cpu_round((size_t)n * c3 * sizeof(float)));
    int64_t *src = (int64_t *)(base += attn_s_bytes(n));
    int *label = (int *)(base += swin_cpu_round((size_t)n * sizeof(int64_t)));
    float *kt = (float *)(base += swin_cpu_round((size_t)n * sizeof(int)));
    float *vt = (float *)(base + attn_tr_bytes(n, c, heads));
    const long nwin = (long)(g->padded[0] / g->win[0]) * (g->padded[1] / g->win[1]) * (g->padded[2] / g->win[2]);
    long wb, we;
    while (swin_cpu_claim(&t->next, nwin, 1, &wb, &we)) {
        gather(t, wb, tok, src, label);
        /* the mask matters only where the window holds more than one region */
        bool mixed = false;
        for (int i = 1; i < n && t->masked; i++) mixed |= label[i] != label[0];
        /* qkv = tok . qkv_w + qkv_b, then q *= scale (MONAI scales q before q k^T) */
        swin_cpu_wgemm_run(t->qkv, n, c3, c, tok, c, w->qkv_w, c3, w->qkv_b, false, qkv, c3);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < c; j++) qkv[(size_t)i * c3 + j] *= scale;
        for (int h = 0; h < heads; h++) {
            const float *q = qkv + h * hd, *k = qkv + c + h * hd, *v = qkv + 2 * c + h * hd;
            const float *bias = t->bias + (size_t)h * n * n;
            if (t->head) {
                t->head(o + h * hd, c, q, k, v, c3, n, hd, bias, mixed ? label : NULL, label, kt, vt, s);
                continue;
            }
            /* s = q_h k_h^T (n, n); + bias + mask, softmax over keys, row by row; o_h = s v_h */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, hd, 1.0f, q, c3, k, c3, 0.0f, s, n);
            for (int i = 0; i < n; i++)
                swin_cpu_softmax_row(s + (size_t)i * n, bias + (size_t)i * n, mixed ? label : NULL, label[i], n);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, hd, n, 1.0f, s, n, v, c3, 0.0f, o + h * hd, c);
        }
        /* tok = o . proj_w + proj_b, scattered onto the real positions */
        swin_cpu_wgemm_run(t->proj, n, c, c, o, c, w->proj_w, c, w->proj_b, false, tok, c);
        for (int i = 0; i < n; i++) {
            if (src[i] < 0) continue;
            float *dst = swin_vol_f32(x) + src[i] * x.pitch;
            const float *y = tok + (size_t)i * c;
            for (int j = 0; j < c; j++) dst[j] += y[j];
        }
    }
}

/* bias[h][i][k] = table[R_full[i, k], h], R_full of the configured window (spec 3.4.3: the
 * token index i < n is decoded in the configured window even when the window shrank).
 * Threads split the rows i; each row's keys k are walked as (k1, k2, k3) in the configured
 * window, in order, so that R_full needs no division per element. */
static void bias_run(void *p, int tid, int nth)
{
    struct attn_task *t = p;
    const int *cw = t->g->cfg_window, heads = t->g->heads;
    const long n = t->n;
    const int s1 = (2 * cw[1] - 1) * (2 * cw[2] - 1), s2 = 2 * cw[2] - 1;
    for (long i = tid; i < n; i += nth) {
        const int i1 = (int)(i / (cw[1] * cw[2])), i2 = (int)(i / cw[2] % cw[1]), i3 = (int)(i % cw[2]);
        /* r at key (k1, k2, k3) = base - k1 s1 - k2 s2 - k3 */
        const int base = (i1 + cw[0] - 1) * s1 + (i2 + cw[1] - 1) * s2 + (i3 + cw[2] - 1);
        for (int h = 0; h < heads; h++) {
            float *row = t->bias + ((size_t)h * n + i) * n;
            const float *table = t->w->bias_table + h;
            long k = 0;
            for (int k1 = 0; k1 < cw[0] && k < n; k1++)
                for (int k2 = 0; k2 < cw[1] && k < n; k2++)
                    for (int k3 = 0; k3 < cw[2] && k < n; k3++, k++)
                        row[k] = table[(size_t)(base - k1 * s1 - k2 * s2 - k3) * heads];
        }
    }
}

int swin_cpu_swin_attention(void *bev, struct swin_vol x, const struct swin_block_w *blk,
                            const struct swin_window_geom *g, void *ws, size_t ws_bytes)
{
    struct swin_cpu_backend *be = bev;
    struct attn_task t = {.x = x, .w = blk, .g = g, .n = win_tokens(g), .qkv = swin_cpu_wgemm_of(be, blk->qkv_w),
                          .proj = swin_cpu_wgemm_of(be, blk->proj_w), .ln = swin_cpu_ln_row_of(be)};
    t.masked = g->shift[0] > 0 || g->shift[1] > 0 || g->shift[2] > 0;
    t.head = be->simd >= SWIN_CPU_SIMD_AVX512_BF16 && t.qkv.bf16 ? swin_cpu_attn_head_avx512bf16
             : be->simd >= SWIN_CPU_SIMD_AVX512                  ? swin_cpu_attn_head_avx512
             : be->simd == SWIN_CPU_SIMD_AVX2 ? swin_cpu_attn_head_avx2
                                              : NULL;
    char *base = swin_cpu_align_ptr(ws);
    t.bias = (float *)base;
    swin_cpu_run(be, bias_run, &t);
    t.ws = base + attn_bias_bytes(t.n, g->heads);
    t.slice = attn_slice(t.n, x.c, g->heads);
    atomic_init(&t.next, 0);
    swin_cpu_run(be, attn_run, &t);
    return 0;
}
