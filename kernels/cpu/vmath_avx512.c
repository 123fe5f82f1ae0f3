/* swin_cpu_softmax_row_avx512: the attention softmax (bias and mask added first) with 16-lane
 * AVX-512 (compiled for avx512f only; the backend calls it only where the CPU has it).
 * Same algorithm as swin_cpu_softmax_row in vexp.c (max-subtracted, Cephes expf with the
 * argument clamped at -87), with fused multiply-adds in the polynomial, so the two agree
 * to ~1 ulp, not bit for bit. The tail uses masked loads and stores. */
#include "kernels/cpu/cpu_rowops.h"

#include <immintrin.h>
#include <math.h>

__attribute__((target("avx512f"), always_inline))
static inline __m512 exp16_nonpos(__m512 x)
{
    const __m512 cx = _mm512_max_ps(x, _mm512_set1_ps(-87.0f));
    /* n = round(x / ln 2) */
    const __m512 fn = _mm512_roundscale_ps(_mm512_mul_ps(cx, _mm512_set1_ps(1.44269504088896341f)),
                                           _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(fn, _mm512_set1_ps(0.693359375f), cx);   /* ln 2 in two parts */
    r = _mm512_fnmadd_ps(fn, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_fmadd_ps(r, _mm512_set1_ps(1.9875691500e-4f), _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    p = _mm512_fmadd_ps(_mm512_mul_ps(p, r), r, _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    /* 2^n, n in [-126, 0], built in the exponent field */
    const __m512i bits = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(fn), _mm512_set1_epi32(127)), 23);
    return _mm512_mul_ps(p, _mm512_castsi512_ps(bits));
}

/* Logits + bias (+ mask) of the lanes in `m`, from r + j. */
__attribute__((target("avx512f"), always_inline))
static inline __m512 biased(const float *r, const float *bias, const int *label, int label_i, int j, __mmask16 m)
{
    __m512 v = _mm512_add_ps(_mm512_maskz_loadu_ps(m, r + j), _mm512_maskz_loadu_ps(m, bias + j));
    if (label) {
        const __mmask16 other =
            _mm512_mask_cmpneq_epi32_mask(m, _mm512_maskz_loadu_epi32(m, label + j), _mm512_set1_epi32(label_i));
        v = _mm512_mask_add_ps(v, other, v, _mm512_set1_ps(-100.0f));
    }
    return v;
}

__attribute__((target("avx512f")))
void swin_cpu_softmax_row_avx512(float *r, const float *bias, const int *label, int label_i, int n)
{
    const int n16 = n / 16 * 16;
    const __mmask16 all = 0xFFFF, tail = (__mmask16)((1u << (n - n16)) - 1u);
    __m512 vm = _mm512_set1_ps(-INFINITY);
    for (int j = 0; j < n16; j += 16) {
        const __m512 v = biased(r, bias, label, label_i, j, all);
        _mm512_storeu_ps(r + j, v);
        vm = _mm512_max_ps(vm, v);
    }
    if (tail) {
        const __m512 v = biased(r, bias, label, label_i, n16, tail);
        _mm512_mask_storeu_ps(r + n16, tail, v);
        vm = _mm512_mask_max_ps(vm, tail, vm, v);
    }
    const __m512 mx = _mm512_set1_ps(_mm512_reduce_max_ps(vm));
    __m512 acc = _mm512_setzero_ps();
    for (int j = 0; j < n16; j += 16) {
        const __m512 v = exp16_nonpos(_mm512_sub_ps(_mm512_loadu_ps(r + j), mx));
        _mm512_storeu_ps(r + j, v);
        acc = _mm512_add_ps(acc, v);
    }
    if (tail) {
        const __m512 v = exp16_nonpos(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, r + n16), mx));
        _mm512_mask_storeu_ps(r + n16, tail, v);
        acc = _mm512_mask_add_ps(acc, tail, acc, v);
    }
    const __m512 inv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(acc));
    for (int j = 0; j < n16; j += 16) _mm512_storeu_ps(r + j, _mm512_mul_ps(_mm512_loadu_ps(r + j), inv));
    if (tail) _mm512_mask_storeu_ps(r + n16, tail, _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, r + n16), inv));
}
