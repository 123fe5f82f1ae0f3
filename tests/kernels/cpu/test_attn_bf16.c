/* The bfloat16 attention head (attn_avx512bf16.c, the AVX512_BF16 level's head for blocks whose
 * qkv weight is bfloat16) against a float64 loop that rounds where the head rounds:
 *   s[i][t] = bf(q_i) . bf(k_t) + bias[i][t] (- 100 where label[t] != label[i])
 *   p[i][t] = exp(s[i][t] - max_t s[i][t]),  o_i = sum_t bf(p[i][t]) bf(v_t) / sum_t p[i][t]
 * (bf: round to the nearest bfloat16, ties to even). On shapes that cross the kernel's tiles:
 * a full 7^3 window (343 keys) with head dims 16 (the default model's) and 5 (odd: a half
 * pair), 24 keys with hd 20 (a 16-column tile and a partial one), an odd key count (97) with
 * hd 33, and one key; masked and unmasked; a row stride wider than the head.
 * What is left between the two is float32 summation (~1e-6 here) and the rare p whose float32
 * exp rounds to the other bfloat16 than the float64 one (one bfloat16 step, 2^-8 relative, of
 * one term of a sum over n keys): both below ATOL. A reference that skips the rounding of
 * q, k and v, or of p (where more than one key makes p other than 1), must miss ATOL (the test
 * can fail). */
#include "tests/kernels/cpu/op_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/cpu/bf16.h"
#include "kernels/cpu/swin/attn_head.h"

/* Outputs are O(1) (|v| <= 2, convex weights): absolute tolerance. One p that rounds the other
 * way moves o by 2^-8 p |v| / sum, up to ~2e-5 in the masked rows (small sums); skipping a
 * rounding moves it by 7e-4 or more on these shapes. */
#define ATOL 5e-5

struct rounding {
    bool qkv, p;
};

static double bf(float x, bool round) { return round ? (double)swin_bf16_round(x) : (double)x; }

/* o (n, hd, stride ldo) of one head; q, k, v rows of stride ld. */
static void reference(double *o, int ldo, const float *q, const float *k, const float *v, int ld, int n, int hd,
                      const float *bias, const int *label, struct rounding rd)
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
            double acc = 0.0;
            for (int t = 0; t < n; t++) acc += bf((float)s[t], rd.p) * bf(v[(size_t)t * ld + e], rd.qkv);
            o[(size_t)i * ldo + e] = acc / sum;
        }
    }
    free(s);
}

static double max_abs_diff(const float *got, const double *ref, int n, int hd, int ldo)
{
    double m = 0.0;
    for (int i = 0; i < n; i++)
        for (int e = 0; e < hd; e++) m = fmax(m, fabs((double)got[(size_t)i * ldo + e] - ref[(size_t)i * ldo + e]));
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
    double *ref = malloc((size_t)n * ldo * sizeof(double));
    for (size_t i = 0; i < (size_t)n * ldo; i++) o[i] = ref[i] = 1e9f; /* the gaps between rows stay as they are */
    swin_cpu_attn_head_avx512bf16(o, ldo, q, k, v, ld, n, hd, bias, masked ? label : NULL, label, kt, vt, sblk);
    reference(ref, ldo, q, k, v, ld, n, hd, bias, masked ? label : NULL, (struct rounding){true, true});
    const double d = max_abs_diff(o, ref, n, hd, ldo);
    char what[300];
    snprintf(what, sizeof what, "%s: max |d| %.3g <= %.1g", name, d, ATOL);
    bool ok = check_true(what, d <= ATOL);
    bool gaps = true;
    for (int i = 0; i < n; i++)
        for (int e = hd; e < ldo; e++) gaps &= o[(size_t)i * ldo + e] == 1e9f;
    ok &= check_true("the columns past hd are left alone", gaps);
    const struct rounding wrong[] = {{false, true}, {true, false}};
    for (int w = 0; w < (n > 1 ? 2 : 1); w++) {
        reference(ref, ldo, q, k, v, ld, n, hd, bias, masked ? label : NULL, wrong[w]);
        const double dw = max_abs_diff(o, ref, n, hd, ldo);
        snprintf(what, sizeof what, "%s: a reference that skips the rounding of %s is rejected, max |d| %.3g "
                 "(the test can fail)", name, w == 0 ? "q, k, v" : "p", dw);
        ok &= check_true(what, dw > ATOL);
    }
    free(q); free(k); free(v); free(bias); free(label); free(kt); free(vt); free(sblk); free(o); free(ref);
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
