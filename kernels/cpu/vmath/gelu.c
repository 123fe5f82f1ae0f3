/* swin_cpu_gelu_erf: h = 0.5 h (1 + erf(h / sqrt 2)) in place (torch.nn.GELU(approximate=
 * 'none')), 4 lanes at a time.
 * erf(x), after N. Juffa's faithfully rounded erff (Stack Overflow question 35148198, the
 * algorithm ONNX Runtime's MLAS also uses), written here on vector extensions:
 *   |x| <= 0.921875:  erf = x + x P(x^2)                      P degree 5
 *   |x| >  0.921875:  erf = sign(x) (1 - exp(-(t + t Q(t))))  t = min(|x|, 3.725), Q degree 6
 * Both branches are computed and blended with masks. The exp is exp4_nonpos (~1 ulp), so
 * erf is within a few ulp; tests/kernels/cpu/test_gelu.c measures it against double erf. */
#include "kernels/cpu/vmath/cpu_rowops.h"
#include "kernels/cpu/vmath/cpu_vec.h"

#include <math.h>

static inline v4f erf4(v4f x)
{
    const v4i sign = (v4i)x & (int32_t)0x80000000;
    const v4f ax = (v4f)((v4i)x & 0x7fffffff);
    /* small |x| */
    const v4f s = x * x;
    v4f p = s * swin_erf_p[0] + swin_erf_p[1];
    for (int i = 2; i < SWIN_ERF_P_TERMS; i++) p = p * s + swin_erf_p[i];
    const v4f small = p * x + x;
    /* large |x| */
    const v4f cap = {SWIN_ERF_CAP, SWIN_ERF_CAP, SWIN_ERF_CAP, SWIN_ERF_CAP};
    const v4i below = ax < cap;
    const v4f t = (v4f)(((v4i)ax & below) | ((v4i)cap & ~below));
    v4f q = t * swin_erf_q[0] + swin_erf_q[1];
    for (int i = 2; i < SWIN_ERF_Q_TERMS; i++) q = q * t + swin_erf_q[i];
    q = q * t + t;
    const v4f large = (v4f)((v4i)(1.0f - exp4_nonpos(-q)) | sign);
    const v4i use_small = ax <= SWIN_ERF_SPLIT;
    return (v4f)(((v4i)small & use_small) | ((v4i)large & ~use_small));
}

void swin_cpu_gelu_erf(float *h, size_t n)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const v4f v = load4(h + i);
        const v4f y = 0.5f * v * (1.0f + erf4(v * (float)M_SQRT1_2));
        memcpy(h + i, &y, sizeof y);
    }
    if (i < n) {
        v4f v = {0.0f, 0.0f, 0.0f, 0.0f};
        for (size_t k = 0; i + k < n; k++) v[k] = h[i + k];
        const v4f y = 0.5f * v * (1.0f + erf4(v * (float)M_SQRT1_2));
        for (size_t k = 0; i + k < n; k++) h[i + k] = y[k];
    }
}
