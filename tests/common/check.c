#include "tests/common/check.h"

#include <math.h>
#include <stdio.h>

bool check_close(const char *what, const float *got, const float *ref, size_t n, double atol,
                 double rtol)
{
    size_t bad = 0, worst = 0;
    double worst_excess = -1.0, max_abs = 0.0;
    for (size_t i = 0; i < n; i++) {
        double g = got[i], r = ref[i];
        double d = fabs(g - r);
        double lim = atol + rtol * fabs(r);
        if (!(d <= lim)) {  /* negated so NaN fails */
            if (bad < 5)
                fprintf(stderr, "  %s[%zu]: got %.9g ref %.9g |d| %.3g > %.3g\n", what, i, g, r, d, lim);
            bad++;
            double excess = isnan(d) ? INFINITY : d - lim;
            if (excess > worst_excess) { worst_excess = excess; worst = i; }
        }
        if (d > max_abs || isnan(d)) max_abs = isnan(d) ? NAN : (d > max_abs ? d : max_abs);
    }
    if (bad) {
        fprintf(stderr, "FAIL %s: %zu of %zu elements out of tolerance (atol %.3g rtol %.3g); worst at %zu: got %.9g ref %.9g\n",
                what, bad, n, atol, rtol, worst, (double)got[worst], (double)ref[worst]);
        return false;
    }
    fprintf(stderr, "ok   %s: %zu elements, max |d| %.3g (atol %.3g rtol %.3g)\n", what, n, max_abs, atol, rtol);
    return true;
}

bool check_close_scaled(const char *what, const float *got, const float *ref, size_t n, double rel)
{
    double m = 1.0;
    for (size_t i = 0; i < n; i++)
        if (fabs((double)ref[i]) > m) m = fabs((double)ref[i]);
    return check_close(what, got, ref, n, rel * m, 0.0);
}

bool check_true(const char *what, bool cond)
{
    fprintf(stderr, "%s %s\n", cond ? "ok  " : "FAIL", what);
    return cond;
}

int test_exit(bool ok)
{
    fprintf(stderr, ok ? "PASS\n" : "FAILED\n");
    return ok ? 0 : 1;
}

float test_rng_uniform(test_rng *r, float lo, float hi)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    uint64_t v = r->s * 2685821657736338717ULL;
    double u = (double)(v >> 11) * (1.0 / 9007199254740992.0);
    return lo + (float)(u * (hi - lo));
}

void test_fill_uniform(test_rng *r, float *x, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; i++) x[i] = test_rng_uniform(r, lo, hi);
}
