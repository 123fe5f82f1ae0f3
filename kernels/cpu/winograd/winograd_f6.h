/* The one-axis transforms of Winograd F(6, 3), for winograd_tmpl.h (after a vec_*.h).
 *
 * Interpolation points 0, 1, -1, 2, -2, 1/2, -1/2 and infinity (Cook-Toom; the first rows of
 * B^T and G negated, which leaves their product unchanged):
 *   B^T = [ 1    0 -21/4     0  21/4     0  1  0 ]      G = [     1      0     0 ]
 *         [ 0    1     1 -17/4 -17/4     1  1  0 ]          [  -2/9   -2/9  -2/9 ]
 *         [ 0   -1     1  17/4 -17/4    -1  1  0 ]          [  -2/9    2/9  -2/9 ]
 *         [ 0  1/2   1/4  -5/2  -5/4     2  1  0 ]          [  1/90   1/45  2/45 ]
 *         [ 0 -1/2   1/4   5/2  -5/4    -2  1  0 ]          [  1/90  -1/45  2/45 ]
 *         [ 0    2     4  -5/2    -5   1/2  1  0 ]          [ 32/45  16/45  8/45 ]
 *         [ 0   -2     4   5/2    -5  -1/2  1  0 ]          [ 32/45 -16/45  8/45 ]
 *         [ 0   -1     0  21/4     0 -21/4  0  1 ]          [     0      0     1 ]
 *   A^T = [ 1 1  1  1   1    1     1 0 ]
 *         [ 0 1 -1  2  -2  1/2  -1/2 0 ]
 *         [ 0 1  1  4   4  1/4   1/4 0 ]
 *         [ 0 1 -1  8  -8  1/8  -1/8 0 ]
 *         [ 0 1  1 16  16 1/16  1/16 0 ]
 *         [ 0 1 -1 32 -32 1/32 -1/32 1 ]
 * Each pair of rows (1, 2), (3, 4), (5, 6) shares its even and odd halves: one sum and one
 * difference. B^T and A^T are exact in float32; G's ninths and 45ths round once per product.
 * The float32 error is about 5x F(4, 3)'s (bench/ops/winograd_error.py --f6), still far below
 * the rounding of bfloat16 weights, which is where the conv rule uses it (winograd.c). */
#define WINO_M 6

/* G along one axis: 3 values at stride si of g[] -> 8 at stride so of o[]. */
#define WINO_G(g, i0, si, o, o0, so)                                                                           \
    {                                                                                                          \
        const vf g0 = g[i0], g1 = g[i0 + (si)], g2 = g[i0 + 2 * (si)];                                         \
        const vf even1 = v_add(g0, g2), even3 = v_fmadd(v_set1(4.0f), g2, g0);                                 \
        const vf even5 = v_fmadd(v_set1(4.0f), g0, g2), g1x2 = v_add(g1, g1);                                  \
        const vf ninth2 = v_set1(-2.0f / 9.0f), ninetieth = v_set1(1.0f / 90.0f);                              \
        const vf fortyfifth8 = v_set1(8.0f / 45.0f);                                                           \
        o[o0] = g0;                                                                                            \
        o[o0 + (so)] = v_mul(v_add(even1, g1), ninth2);                                                        \
        o[o0 + 2 * (so)] = v_mul(v_sub(even1, g1), ninth2);                                                    \
        o[o0 + 3 * (so)] = v_mul(v_add(even3, g1x2), ninetieth);                                               \
        o[o0 + 4 * (so)] = v_mul(v_sub(even3, g1x2), ninetieth);                                               \
        o[o0 + 5 * (so)] = v_mul(v_add(even5, g1x2), fortyfifth8);                                             \
        o[o0 + 6 * (so)] = v_mul(v_sub(even5, g1x2), fortyfifth8);                                             \
        o[o0 + 7 * (so)] = g2;                                                                                 \
    }

/* B^T along one axis: 8 values at stride s of v[] in place. */
#define WINO_BT(v, i0, s)                                                                                      \
    {                                                                                                          \
        const vf d0 = v[i0], d1 = v[i0 + (s)], d2 = v[i0 + 2 * (s)], d3 = v[i0 + 3 * (s)];                     \
        const vf d4 = v[i0 + 4 * (s)], d5 = v[i0 + 5 * (s)], d6 = v[i0 + 6 * (s)], d7 = v[i0 + 7 * (s)];       \
        const vf c525 = v_set1(5.25f), m425 = v_set1(-4.25f), m25 = v_set1(-2.5f);                             \
        const vf e1 = v_fmadd(m425, d4, v_add(d2, d6)), o1 = v_fmadd(m425, d3, v_add(d1, d5));                 \
        const vf e3 = v_fmadd(v_set1(0.25f), d2, v_fmadd(v_set1(-1.25f), d4, d6));                             \
        const vf o3 = v_fmadd(v_set1(0.5f), d1, v_fmadd(m25, d3, v_add(d5, d5)));                              \
        const vf e5 = v_fmadd(v_set1(4.0f), d2, v_fmadd(v_set1(-5.0f), d4, d6));                               \
        const vf o5 = v_fmadd(v_set1(2.0f), d1, v_fmadd(m25, d3, v_mul(v_set1(0.5f), d5)));                    \
        v[i0] = v_fmadd(c525, v_sub(d4, d2), v_sub(d0, d6));                                                   \
        v[i0 + (s)] = v_add(e1, o1);                                                                           \
        v[i0 + 2 * (s)] = v_sub(e1, o1);                                                                       \
        v[i0 + 3 * (s)] = v_add(e3, o3);                                                                       \
        v[i0 + 4 * (s)] = v_sub(e3, o3);                                                                       \
        v[i0 + 5 * (s)] = v_add(e5, o5);                                                                       \
        v[i0 + 6 * (s)] = v_sub(e5, o5);                                                                       \
        v[i0 + 7 * (s)] = v_fmadd(c525, v_sub(d3, d5), v_sub(d7, d1));                                         \
    }

/* A^T along one axis: 8 values at stride s of v[] -> 6 at i0, i0 + s, ..., i0 + 5s. */
#define WINO_AT(v, i0, s)                                                                                      \
    {                                                                                                          \
        const vf m0 = v[i0], m1 = v[i0 + (s)], m2 = v[i0 + 2 * (s)], m3 = v[i0 + 3 * (s)];                     \
        const vf m4 = v[i0 + 4 * (s)], m5 = v[i0 + 5 * (s)], m6 = v[i0 + 6 * (s)], m7 = v[i0 + 7 * (s)];       \
        const vf s12 = v_add(m1, m2), d12 = v_sub(m1, m2), s34 = v_add(m3, m4), d34 = v_sub(m3, m4);           \
        const vf s56 = v_add(m5, m6), d56 = v_sub(m5, m6);                                                     \
        v[i0] = v_add(v_add(m0, s12), v_add(s34, s56));                                                        \
        v[i0 + (s)] = v_fmadd(v_set1(0.5f), d56, v_fmadd(v_set1(2.0f), d34, d12));                             \
        v[i0 + 2 * (s)] = v_fmadd(v_set1(0.25f), s56, v_fmadd(v_set1(4.0f), s34, s12));                        \
        v[i0 + 3 * (s)] = v_fmadd(v_set1(0.125f), d56, v_fmadd(v_set1(8.0f), d34, d12));                       \
        v[i0 + 4 * (s)] = v_fmadd(v_set1(0.0625f), s56, v_fmadd(v_set1(16.0f), s34, s12));                     \
        v[i0 + 5 * (s)] = v_add(v_fmadd(v_set1(0.03125f), d56, v_fmadd(v_set1(32.0f), d34, d12)), m7);         \
    }
