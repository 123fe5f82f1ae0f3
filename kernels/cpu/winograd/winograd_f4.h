/* The one-axis transforms of Winograd F(4, 3), for winograd_tmpl.h (after a vec_*.h).
 *
 * Interpolation points 0, 1, -1, 2, -1/2 and infinity (a Cook-Toom construction; the
 * pair 2, -1/2 instead of the usual +-2 keeps the constants of A^T between 1/8 and 8 and
 * halves the float32 error of the usual points, bench/ops/winograd_error.py):
 *   B^T = [ 1  3/2   -2  -3/2    1  0 ]      G = [    1     0     0 ]
 *         [ 0   -1 -5/2  -1/2    1  0 ]          [ -1/3  -1/3  -1/3 ]
 *         [ 0    1  1/2  -5/2    1  0 ]          [  1/3  -1/3   1/3 ]
 *         [ 0 -1/2   -1   1/2    1  0 ]          [ 1/15  2/15  4/15 ]
 *         [ 0    2   -1    -2    1  0 ]          [-16/15 8/15 -4/15 ]
 *         [ 0    1  3/2    -2 -3/2  1 ]          [    0     0     1 ]
 *   A^T = [ 1 1  1 1    1 0 ]
 *         [ 0 1 -1 2 -1/2 0 ]
 *         [ 0 1  1 4  1/4 0 ]
 *         [ 0 1 -1 8 -1/8 1 ]
 * B^T and A^T are exact in float32 (dyadic); G's thirds and fifteenths round once per
 * product. */
#define WINO_M 4

/* G along one axis: 3 values at stride si of g[] -> 6 at stride so of o[]. */
#define WINO_G(g, i0, si, o, o0, so)                                                                           \
    {                                                                                                          \
        const vf g0 = g[i0], g1 = g[i0 + (si)], g2 = g[i0 + 2 * (si)];                                         \
        const vf s = v_add(g0, g2), third = v_set1(1.0f / 3.0f);                                               \
        const vf fifteenth = v_set1(1.0f / 15.0f);                                                             \
        o[o0] = g0;                                                                                            \
        o[o0 + (so)] = v_mul(v_add(s, g1), v_set1(-1.0f / 3.0f));                                              \
        o[o0 + 2 * (so)] = v_mul(v_sub(s, g1), third);                                                         \
        o[o0 + 3 * (so)] = v_mul(v_fmadd(v_set1(4.0f), g2, v_fmadd(v_set1(2.0f), g1, g0)), fifteenth);         \
        o[o0 + 4 * (so)] =                                                                                     \
            v_mul(v_fmadd(v_set1(-4.0f), g2, v_fmadd(v_set1(8.0f), g1, v_mul(v_set1(-16.0f), g0))), fifteenth); \
        o[o0 + 5 * (so)] = g2;                                                                                 \
    }

/* B^T along one axis: 6 values at stride s of v[] in place. */
#define WINO_BT(v, i0, s)                                                                                      \
    {                                                                                                          \
        const vf d0 = v[i0], d1 = v[i0 + (s)], d2 = v[i0 + 2 * (s)], d3 = v[i0 + 3 * (s)];                     \
        const vf d4 = v[i0 + 4 * (s)], d5 = v[i0 + 5 * (s)];                                                   \
        const vf h = v_set1(0.5f), mh = v_set1(-0.5f);                                                         \
        const vf c15 = v_set1(1.5f), m2 = v_set1(-2.0f), m25 = v_set1(-2.5f);                                  \
        const vf t13 = v_sub(d1, d3), e = v_sub(d4, d2);                                                       \
        v[i0] = v_fmadd(c15, t13, v_fmadd(m2, d2, v_add(d0, d4)));                                             \
        v[i0 + (s)] = v_fmadd(m25, d2, v_fmadd(mh, d3, v_sub(d4, d1)));                                        \
        v[i0 + 2 * (s)] = v_fmadd(h, d2, v_fmadd(m25, d3, v_add(d4, d1)));                                     \
        v[i0 + 3 * (s)] = v_fmadd(mh, t13, e);                                                                 \
        v[i0 + 4 * (s)] = v_fmadd(v_set1(2.0f), t13, e);                                                       \
        v[i0 + 5 * (s)] = v_fmadd(c15, v_sub(d2, d4), v_fmadd(m2, d3, v_add(d5, d1)));                         \
    }

/* A^T along one axis: 6 values at stride s of v[] -> 4 at i0, i0 + s, i0 + 2s, i0 + 3s. */
#define WINO_AT(v, i0, s)                                                                                      \
    {                                                                                                          \
        const vf m0 = v[i0], m1 = v[i0 + (s)], m2 = v[i0 + 2 * (s)], m3 = v[i0 + 3 * (s)];                     \
        const vf m4 = v[i0 + 4 * (s)], m5 = v[i0 + 5 * (s)];                                                   \
        const vf sp = v_add(m1, m2), sm = v_sub(m1, m2);                                                       \
        v[i0] = v_add(v_add(m0, sp), v_add(m3, m4));                                                           \
        v[i0 + (s)] = v_fmadd(v_set1(-0.5f), m4, v_fmadd(v_set1(2.0f), m3, sm));                               \
        v[i0 + 2 * (s)] = v_fmadd(v_set1(0.25f), m4, v_fmadd(v_set1(4.0f), m3, sp));                           \
        v[i0 + 3 * (s)] = v_add(v_fmadd(v_set1(-0.125f), m4, v_fmadd(v_set1(8.0f), m3, sm)), m5);              \
    }
