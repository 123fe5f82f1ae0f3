/* Constants of the vectorised exp and erf, shared by every width: cpu_vec.h and gelu.c
 * (4 lanes), vmath_avx2.c (8) and vmath_avx512.c (16). Polynomials are listed highest
 * degree first and evaluated by Horner's rule: p = c[0]; p = p * x + c[i] for i >= 1. */
#ifndef SWIN_CPU_VMATH_COEF_H
#define SWIN_CPU_VMATH_COEF_H

/* expf for x in [-87, 0] (Cephes): n = round(x / ln 2), r = x - n ln 2 with ln 2 in two
 * parts (the first exact in float), exp(r) = 1 + r + r^2 P(r), 2^n built in the exponent. */
#define SWIN_EXP_MIN (-87.0f)
#define SWIN_EXP_LOG2E 1.44269504088896341f
#define SWIN_EXP_LN2_HI 0.693359375f
#define SWIN_EXP_LN2_LO (-2.12194440e-4f)
#define SWIN_EXP_P_TERMS 6
static const float swin_exp_p[SWIN_EXP_P_TERMS] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                                   4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};

/* 2^f for f in [-0.5, 0.5] (the AVX2 exp, vmath_avx2.c): degree 6, fitted here for relative
 * error (1.9e-9 in exact arithmetic, 7.9e-8 evaluated in float32 by Horner's rule with FMA). */
#define SWIN_EXP2_P_TERMS 7
static const float swin_exp2_p[SWIN_EXP2_P_TERMS] = {1.5345806605e-04f, 1.3399932068e-03f, 9.6184890717e-03f,
                                                     5.5503286421e-02f, 2.4022646248e-01f, 6.9314718246e-01f,
                                                     1.0000000000e+00f};

/* 2^f for f in [-0.5, 0.5] where the result is rounded to bfloat16 next (the bfloat16 attention
 * head's p): degree 3 with 2^0 = 1 exactly (a row's maximum gives p = 1), fitted here for
 * relative error (1.0e-4 evaluated in float32), 1/39 of bfloat16's rounding step (2^-8
 * relative). SWIN_EXP2_BF16_REL_ERR bounds the whole exp's relative error (1.022e-4 measured
 * over [-20, 0] with the range reduction). */
#define SWIN_EXP2_BF16_P_TERMS 4
#define SWIN_EXP2_BF16_REL_ERR 1.1e-4
static const float swin_exp2_bf16_p[SWIN_EXP2_BF16_P_TERMS] = {5.5008951575e-02f, 2.4221101403e-01f,
                                                               6.9328290224e-01f, 1.0f};

/* erff after N. Juffa (the algorithm ONNX Runtime's MLAS also uses):
 *   |x| <= SWIN_ERF_SPLIT:  erf = x + x P(x^2)
 *   |x| >  SWIN_ERF_SPLIT:  erf = sign(x) (1 - exp(-(t + t Q(t)))), t = min(|x|, SWIN_ERF_CAP) */
#define SWIN_ERF_SPLIT 0.921875f
#define SWIN_ERF_CAP 3.725f
#define SWIN_ERF_P_TERMS 6
static const float swin_erf_p[SWIN_ERF_P_TERMS] = {-5.99104969e-4f, 4.99339588e-3f, -2.67667342e-2f,
                                                   1.12818025e-1f,  -3.76124859e-1f, 1.28379151e-1f};
#define SWIN_ERF_Q_TERMS 7
static const float swin_erf_q[SWIN_ERF_Q_TERMS] = {1.72948930e-5f,  -3.83208680e-4f, 3.88393435e-3f, -2.42545605e-2f,
                                                   1.06777847e-1f, 6.34846687e-1f,  1.28717512e-1f};

#endif
