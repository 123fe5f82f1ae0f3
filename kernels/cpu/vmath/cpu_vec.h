/* 4-lane float vectors (GCC/Clang vector extensions, one SSE2 register) for the loops the
 * compiler will not vectorise by itself: selects under the default -ftrapping-math.
 * Loads and stores go through constant-size memcpy (one unaligned move). */
#ifndef SWIN_CPU_VEC_H
#define SWIN_CPU_VEC_H

#include <stdint.h>
#include <string.h>

#include "kernels/cpu/vmath/vmath_coef.h"

typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));

static inline v4f load4(const float *p)
{
    v4f v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* exp(x) per lane for x <= 0: Cephes expf (range reduction by ln 2 in two parts, degree-5
 * polynomial, exponent by integer add), ~1 ulp on [-87, 0]; x below -87 is clamped to -87
 * (1.6e-38 instead of a smaller number). Selects are written with masks because the
 * compiler will not if-convert a float compare under the default -ftrapping-math. */
static inline v4f exp4_nonpos(v4f x)
{
    const v4f lo = {SWIN_EXP_MIN, SWIN_EXP_MIN, SWIN_EXP_MIN, SWIN_EXP_MIN};
    const v4i keep = x > lo;                                  /* all-ones lanes where x > -87 */
    const v4f cx = (v4f)(((v4i)x & keep) | ((v4i)lo & ~keep));
    /* n = round(x / ln 2) with the 1.5 * 2^23 trick (round to nearest in float) */
    const v4f fn = (cx * SWIN_EXP_LOG2E + 12582912.0f) - 12582912.0f;
    v4f r = cx - fn * SWIN_EXP_LN2_HI;
    r = r - fn * SWIN_EXP_LN2_LO;
    v4f p = r * swin_exp_p[0] + swin_exp_p[1];
    for (int i = 2; i < SWIN_EXP_P_TERMS; i++) p = p * r + swin_exp_p[i];
    p = p * r * r + r + 1.0f;
    /* 2^n, n in [-126, 0], built in the exponent field */
    const v4i bits = (__builtin_convertvector(fn, v4i) + 127) << 23;
    return p * (v4f)bits;
}

#endif
