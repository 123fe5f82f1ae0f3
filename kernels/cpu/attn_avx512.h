/* One head of window attention with AVX-512 (attn_avx512.c); call only where the CPU has
 * AVX-512F. Elsewhere swin_attention uses OpenBLAS and swin_cpu_softmax_row. */
#ifndef SWIN_CPU_ATTN_AVX512_H
#define SWIN_CPU_ATTN_AVX512_H

/* Rounds n up to the 16-float rows the scratch matrices use. */
static inline int swin_cpu_attn_npad(int n) { return (n + 15) / 16 * 16; }

/* o rows i < n (stride ldo, hd columns) = softmax_t(q_i . k_t + bias[i][t] + mask) . v_t
 * where q_i = q + i*ld (already scaled), likewise k_t, v_t; bias (n, n) of this head; the
 * mask is -100 where label[t] != label_all[i] (label NULL: no mask; label_all is always
 * the window's labels). Scratch: kt hd*npad, vt round_up(hd, 4)*npad, sblk 8*n floats. */
void swin_cpu_attn_head_avx512(float *o, int ldo, const float *q, const float *k, const float *v, int ld, int n,
                               int hd, const float *bias, const int *label, const int *label_all, float *kt,
                               float *vt, float *sblk);

#endif
