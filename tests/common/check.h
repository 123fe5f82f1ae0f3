/* Comparisons for tests, written so that NaN and infinities fail.
 *
 *   ok &= check_close("conv3d out", got, ref, n, atol, rtol);
 *
 * An element passes iff  |got - ref| <= atol + rtol*|ref|  (written negated, so NaN fails).
 * On failure it prints the worst element and the first mismatches to stderr.
 * Each test's main returns test_exit(ok): 0 when every check passed, 1 otherwise. */
#ifndef SWIN_TEST_CHECK_H
#define SWIN_TEST_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

bool check_close(const char *what, const float *got, const float *ref, size_t n, double atol,
                 double rtol);
/* Same, but the tolerance scales with the reference's largest magnitude:
 * |got - ref| <= rel * max(1, max|ref|). */
bool check_close_scaled(const char *what, const float *got, const float *ref, size_t n, double rel);
bool check_true(const char *what, bool cond);
int test_exit(bool ok);

/* Deterministic pseudo-random numbers for test inputs (xorshift64*). */
typedef struct { uint64_t s; } test_rng;
float test_rng_uniform(test_rng *r, float lo, float hi);
void test_fill_uniform(test_rng *r, float *x, size_t n, float lo, float hi);

#endif
