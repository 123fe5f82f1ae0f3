/* One head of window attention, fused per block of query rows: attn_avx512.c (call only
 * where the CPU has AVX-512F), attn_avx512bf16.c (its products in bfloat16; call only at the
 * AVX512_BF16 level) and attn_avx2.c (AVX2 + FMA). Without them, swin_attention uses
 * OpenBLAS and swin_cpu_softmax_row. */
#ifndef SWIN_CPU_ATTN_HEAD_H
#define SWIN_CPU_ATTN_HEAD_H

#include <stddef.h>
#include <string.h>

/* Rounds n up to the 16-float rows the scratch matrices use. */
static inline int swin_cpu_attn_npad(int n) { return (n + 15) / 16 * 16; }

/* Floats of each of the two per-thread scratch matrices kt and vt: (hd rounded up to 16) rows
 * of npad floats, which holds both kernels' layouts. */
static inline size_t swin_cpu_attn_tr_floats(int n, int hd)
{
    return (size_t)((hd + 15) / 16 * 16) * swin_cpu_attn_npad(n);
}

/* Floats of the logit block sblk: 12 rows of npad floats (attn_avx2.c's block and row stride). */
static inline size_t swin_cpu_attn_sblk_floats(int n) { return (size_t)12 * swin_cpu_attn_npad(n); }

/* dst (rows_pad, npad): dst[e][t] = src[t*ld + e] for e < cols, t < n; zero elsewhere */
static inline void swin_cpu_attn_transpose_pad(float *dst, int rows_pad, int npad, const float *src, int ld, int n,
                                               int cols)
{
    memset(dst, 0, (size_t)rows_pad * npad * sizeof(float));
    for (int t = 0; t < n; t++)
        for (int e = 0; e < cols; e++) dst[(size_t)e * npad + t] = src[(size_t)t * ld + e];
}

/* o rows i < n (stride ldo, hd columns) = softmax_t(q_i . k_t + bias[i][t] + mask) . v_t
 * where q_i = q + i*ld (already scaled), likewise k_t, v_t; bias (n, n) of this head; the
 * mask is -100 where label[t] != label_all[i] (label NULL: no mask; label_all is always
 * the window's labels). Scratch: kt and vt swin_cpu_attn_tr_floats, sblk
 * swin_cpu_attn_sblk_floats. */
typedef void swin_cpu_attn_head_fn(float *o, int ldo, const float *q, const float *k, const float *v, int ld, int n,
                                   int hd, const float *bias, const int *label, const int *label_all, float *kt,
                                   float *vt, float *sblk);
swin_cpu_attn_head_fn swin_cpu_attn_head_avx512;
swin_cpu_attn_head_fn swin_cpu_attn_head_avx512bf16;
swin_cpu_attn_head_fn swin_cpu_attn_head_avx2;

#endif
