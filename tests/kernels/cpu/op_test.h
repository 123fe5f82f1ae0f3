/* Helpers for the CPU op tests: volumes with pitch and guard sentinels, random buffers,
 * bfloat16 copies of weights, workspaces deliberately misaligned, a backend per thread count.
 * The naive references live in each test file, not here. */
#ifndef SWIN_OP_TEST_H
#define SWIN_OP_TEST_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels/cpu/bf16.h"
#include "kernels/cpu/cpu_backend.h"
#include "tests/common/check.h"

/* A volume (d, h, w, c) with pitch; the unused channels [c, pitch) of every voxel and
 * TVOL_GUARD floats after the last voxel hold a sentinel that no op may touch. */
#define TVOL_GUARD 64
typedef struct {
    struct swin_vol v;
    float *mem;
    size_t total;   /* floats in mem */
} tvol;

tvol tvol_new(int d, int h, int w, int c, int pitch);
/* A view of channels [c0, c0 + c) of t (pitch t.v.pitch). */
struct swin_vol tvol_slice(const tvol *t, int c0, int c);
void tvol_fill(tvol *t, test_rng *r, float lo, float hi);
/* Element (z, y, x, ch) of a volume. */
static inline float *vol_at(struct swin_vol v, int z, int y, int x, int ch)
{
    return swin_vol_f32(v) + (((size_t)z * v.h + y) * v.w + x) * v.pitch + ch;
}
/* Dense copy (voxels, c) of the channels, malloc'ed. */
float *tvol_dense(const tvol *t);
/* true iff nothing outside channels [c0, c0 + c) changed: the other channels of [0, v.c)
 * still hold tvol_new's zeros (a concat's other half), [v.c, pitch) and the tail the sentinel.
 * Call it on a volume whose channels the test has not filled outside [c0, c0 + c). */
bool tvol_guard_ok(const char *what, const tvol *t, int c0, int c);
void tvol_free(tvol *t);

/* out = LReLU_0.01(IN(x) * g + b) in double, x dense (nv, c): InstanceNorm per channel over
 * all voxels (biased variance, eps 1e-5); g NULL: no affine. */
void test_in_lrelu_f64(double *out, const float *x, size_t nv, int c, const float *g, const float *b);

/* malloc'ed n floats uniform in [lo, hi). */
float *test_rand(test_rng *r, size_t n, float lo, float hi);

/* malloc'ed bfloat16 copy of w[0..n) (round to nearest even); rounded: NULL, or n floats that
 * receive the copy's values widened back (the weights a bfloat16 kernel computes with; may be w
 * itself). */
swin_bf16 *test_bf16_copy(const float *w, size_t n, float *rounded);

/* A workspace of `bytes` whose pointer is 4 bytes past an aligned address (ops must align
 * internally), followed by guard bytes; ws_free releases it and returns false (with a
 * message) if anything past `bytes` was written. */
void *ws_new(size_t bytes);
bool ws_free(void *ws);

/* The SIMD levels tests run every op at, best first; test_simd_select caps the backend at
 * levels[i] and returns false (with a note) where this CPU lacks that level. */
#define TEST_SIMD_LEVELS 4
extern const enum swin_cpu_simd test_simd_levels[TEST_SIMD_LEVELS];
bool test_simd_select(struct swin_cpu_backend *be, enum swin_cpu_simd level);
const char *test_simd_name(enum swin_cpu_simd level);

/* A backend with `threads` threads; prints the error and returns NULL on failure. */
struct swin_cpu_backend *test_backend(int threads);

/* A test's main: cases() on a 2-thread backend at every SIMD level this CPU has; the exit
 * status of test_exit. */
int test_main_every_level(bool (*cases)(struct swin_cpu_backend *be));

#endif
