/* The bfloat16 attention head (attn_avx512bf16.c, the AVX512_BF16 level's head for blocks whose
 * qkv weight is bfloat16) against a float64 loop that rounds where the head rounds:
 *   s[i][t] = bf(q_i) . bf(k_t) + bias[i][t] (- 100 where label[t] != label[i])
 *   p[i][t] = exp(s[i][t] - max_t s[i][t]),  o_i = sum_t bf(p[i][t]) bf(v_t) / sum_t p[i][t]
 * (bf: round to the nearest bfloat16, ties to even). On shapes that cross the kernel's tiles:
 * a full 7^3 window (343 keys) with head dims 16 (the default model's) and 5 (odd: a half
 * pair), 24 keys with hd 20 (a 16-column tile and a partial one), an odd key count (97) with
 * hd 33, and one key; masked and unmasked; a row stride wider than the head.
 * The head's exp is accurate to SWIN_EXP2_BF16_REL_ERR (vmath_coef.h) relative, not to the
 * float64 one, so each output element is allowed, beyond ATOL (float32 summation, ~1e-6 here):
 *   rel |o|-weight:  SWIN_EXP2_BF16_REL_ERR sum_t bf(p) |bf(v_t)| / sum_t p  (the sum's error),
 *   flips:           sum over the p within that relative error of a bfloat16 midpoint of one
 *                    bfloat16 step times |bf(v_t)| / sum_t p  (p rounded to the other neighbour).
 * Both come from the reference's own values and the documented bound. A reference that skips the
 * rounding of q, k and v, or of p (where more than one key makes p other than 1), must miss ATOL
 * beyond that slack (the test can fail). */
#include "tests/kernels/cpu/op_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/cpu/bf16.h"
#include "kernels/cpu/swin/attn_head.h"
#include "kernels/cpu/vmath/vmath_coef.h"

/* Outputs are O(1) (|v| <= 2, convex weights): absolute tolerance for float32 summation; skipping
 * a rounding moves o by 7e-4 or more on these shapes. */
#define ATOL 5e-5

struct rounding {
    bool qkv, p;
};

static double bf(float x, bool round) { return round ? (double)swin_bf16_round(x) : (double)x; }

/* Whether the bfloat16 rounding of p > 0 can go either way for a p known to rel relative: a
 * midpoint between two bfloat16 neighbours lies within rel p of it. Sets *step to their gap. */
static bool near_midpoint(double p, double rel, double *step)
{
    int e;
    frexp(p, &e); /* p in [2^(e-1), 2^e): 8 significant bits, steps of 2^(e-8) */
    *step = ldexp(1.0, e - 8);
    const double mid = (floor(p / *step) + 0.5) * *step;
    return fabs(p - mid) <= rel * p || fabs(p - (mid - *step)) <= rel * p;
}

/* o (n, hd, stride ldo) of one head; q, k, v rows of stride ld. slack: NULL, or per element of o
 * what the head's exp error may add (the top of the file). */
static void reference(double *o, double *slack, int ldo, const float *q, const float *k, const float *v, int ld,
                      int n, int hd, const float *bias, const int *label, struct rounding rd)
{
    double *s = malloc((size_t)n * sizeof(double));
    for (int i = 0; i < n; i++) {
        double mx = -INFINITY, sum = 0.0;
        for (int t = 0; t < n; t++) {
            double d = 0.0;
            for (int e = 0; e < hd; e++) d += bf(q[(size_t)i * ld + e], rd.qkv) * bf(k[(size_t)t * ld + e], rd.qkv);
            s[t] = d + bias[(size_t)i * n + t] + (label && label[t] != label[i] ? -100.0 : 0.0);
            mx = fmax(mx, s[t]);
        }
        for (int t = 0; t < n; t++) sum += s[t] = exp(s[t] - mx);
        for (int e = 0; e < hd; e++) {
            double acc = 0.0, weight = 0.0, flips = 0.0, step;
            for (int t = 0; t < n; t++) {
                const double vt = fabs(bf(v[(size_t)t * ld + e], rd.qkv));
                acc += bf((float)s[t], rd.p) * bf(v[(size_t)t * ld + e], rd.qkv);
                weight += bf((float)s[t], rd.p) * vt;
                if (near_midpoint(s[t], SWIN_EXP2_BF16_REL_ERR, &step)) flips += step * vt;
            }
            o[(size_t)i * ldo + e] = acc / sum;
            if (slack) slack[(size_t)i * ldo + e] = (SWIN_EXP2_BF16_REL_ERR * weight + flips) / sum;
        }
    }
    free(s);
}

/* The largest |got - ref| beyond slack (NULL: none). */
static double max_abs_diff(const float *got, const double *ref, const double *slack, int n, int hd, int ldo)
{
    double m = 0.0;
    for (int i = 0; i < n; i++)
        for (int e = 0; e < hd; e++) {
            const size_t at = (size_t)i * ldo + e;
            m = fmax(m, fabs((double)got[at] - ref[at]) - (slack ? slack[at] : 0.0));
        }
    return m;
}

static bool run_case(int n, int hd, int ld, bool masked)
{
    char name[120];
    snprintf(name, sizeof name, "attn_head_avx512bf16 n %d hd %d ld %d mask %d", n, hd, ld, masked);
    test_rng r = {7ULL + (uint64_t)(n * 1000 + hd * 10 + masked)};
    const int ldo = hd + 3;
    float *q = test_rand(&r, (size_t)n * ld, -0.5f, 0.5f), *k = test_rand(&r, (size_t)n * ld, -2.0f, 2.0f);
    float *v = test_rand(&r, (size_t)n * ld, -2.0f, 2.0f), *bias = test_rand(&r, (size_t)n * n, -1.0f, 1.0f);
    int *label = malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++) label[i] = (i * 7 / 3) % 3;
    float *kt = calloc(swin_cpu_attn_tr_floats(n, hd), sizeof(float));
    float *vt = calloc(swin_cpu_attn_tr_floats(n, hd), sizeof(float));
    float *sblk = calloc(swin_cpu_attn_sblk_floats(n), sizeof(float));
    float *o = malloc((size_t)n * ldo * sizeof(float));
    double *ref = malloc((size_t)n * ldo * sizeof(double)), *slack = malloc((size_t)n * ldo * sizeof(double));
    for (size_t i = 0; i < (size_t)n * ldo; i++) o[i] = ref[i] = 1e9f; /* the gaps between rows stay as they are */
    swin_cpu_attn_head_avx512bf16(o, ldo, q, k, v, ld, n, hd, bias, masked ? label : NULL, label, kt, vt, sblk);
    reference(ref, slack, ldo, q, k, v, ld, n, hd, bias, masked ? label : NULL, (struct rounding){true, true});
    const double d = max_abs_diff(o, ref, slack, n, hd, ldo);
    char what[300];
    double most = 0.0;
    for (size_t i = 0; i < (size_t)n * ldo; i++) most = fmax(most, (size_t)(i % ldo) < (size_t)hd ? slack[i] : 0.0);
    snprintf(what, sizeof what, "%s: max |d| - exp slack (up to %.2g) %.3g <= %.1g", name, most, d, ATOL);
    bool ok = check_true(what, d <= ATOL);
    bool gaps = true;
    for (int i = 0; i < n; i++)
        for (int e = hd; e < ldo; e++) gaps &= o[(size_t)i * ldo + e] == 1e9f;
    ok &= check_true("the columns past hd are left alone", gaps);
    const struct rounding wrong[] = {{false, true}, {true, false}};
    for (int w = 0; w < (n > 1 ? 2 : 1); w++) {
        reference(ref, slack, ldo, q, k, v, ld, n, hd, bias, masked ? label : NULL, wrong[w]);
        const double dw = max_abs_diff(o, ref, slack, n, hd, ldo);
        snprintf(what, sizeof what, "%s: a reference that skips the rounding of %s is rejected, max |d| - exp slack %.3g "
                 "(the test can fail)", name, w == 0 ? "q, k, v" : "p", dw);
        ok &= check_true(what, dw > ATOL);
    }
    free(q); free(k); free(v); free(bias); free(label); free(kt); free(vt); free(sblk); free(o); free(ref); free(slack);
    return ok;
}

int main(void)
{
    if (swin_cpu_simd_of_cpu() < SWIN_CPU_SIMD_AVX512_BF16) {
        fprintf(stderr, "note: this CPU lacks AVX512_BF16; the bfloat16 attention head is not tested here\n");
        return test_exit(true);
    }
    bool ok = true;
    ok &= run_case(343, 16, 48 * 3, false);
    ok &= run_case(343, 16, 48 * 3, true);
    ok &= run_case(343, 5, 15, true);
    ok &= run_case(24, 20, 60, false);
    ok &= run_case(97, 33, 99, true);
    ok &= run_case(1, 16, 16, false);
    return test_exit(ok);
}
