#include "tests/kernels/cpu/op_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const float SENTINEL = -12345.678f;

tvol tvol_new(int d, int h, int w, int c, int pitch)
{
    tvol t = {.v = {.data = NULL, .d = d, .h = h, .w = w, .c = c, .pitch = pitch, .dtype = SWIN_F32}};
    t.total = (size_t)d * h * w * pitch + TVOL_GUARD;
    t.mem = malloc(t.total * sizeof(float));
    if (!t.mem) {
        fprintf(stderr, "out of memory (%zu floats)\n", t.total);
        exit(1);
    }
    for (size_t i = 0; i < t.total; i++) t.mem[i] = SENTINEL;
    t.v.data = t.mem;
    for (size_t i = 0; i < swin_vol_voxels(t.v); i++) memset(t.mem + i * pitch, 0, (size_t)c * sizeof(float));
    return t;
}

struct swin_vol tvol_slice(const tvol *t, int c0, int c)
{
    struct swin_vol v = t->v;
    v.data = swin_vol_f32(v) + c0;
    v.c = c;
    return v;
}

void tvol_fill(tvol *t, test_rng *r, float lo, float hi)
{
    for (size_t i = 0; i < swin_vol_voxels(t->v); i++)
        test_fill_uniform(r, t->mem + i * t->v.pitch, (size_t)t->v.c, lo, hi);
}

float *tvol_dense(const tvol *t)
{
    size_t n = swin_vol_voxels(t->v);
    float *d = malloc(n * t->v.c * sizeof(float));
    for (size_t i = 0; i < n; i++) memcpy(d + i * t->v.c, swin_vol_f32(t->v) + i * t->v.pitch, (size_t)t->v.c * sizeof(float));
    return d;
}

bool tvol_guard_ok(const char *what, const tvol *t, int c0, int c)
{
    static const float zero = 0.0f;
    size_t n = swin_vol_voxels(t->v), bad = 0;
    for (size_t i = 0; i < n * t->v.pitch; i++) {
        int ch = (int)(i % t->v.pitch);
        if (ch >= c0 && ch < c0 + c) continue;
        /* channels [0, v.c) outside the written range keep tvol_new's +0, the rest the sentinel */
        bad += memcmp(&t->mem[i], ch < t->v.c ? &zero : &SENTINEL, sizeof(float)) != 0;
    }
    for (size_t i = n * t->v.pitch; i < t->total; i++) bad += memcmp(&t->mem[i], &SENTINEL, sizeof(float)) != 0;
    char msg[200];
    snprintf(msg, sizeof msg, "%s: guard channels and tail untouched (%zu changed)", what, bad);
    return check_true(msg, bad == 0);
}

void tvol_free(tvol *t)
{
    free(t->mem);
    t->mem = NULL;
}

void test_in_lrelu_f64(double *out, const float *x, size_t nv, int c, const float *g, const float *b)
{
    for (int ch = 0; ch < c; ch++) {
        double m = 0.0, var = 0.0;
        for (size_t v = 0; v < nv; v++) m += x[v * c + ch];
        m /= (double)nv;
        for (size_t v = 0; v < nv; v++) var += (x[v * c + ch] - m) * (x[v * c + ch] - m);
        const double rstd = 1.0 / sqrt(var / (double)nv + 1e-5);
        for (size_t v = 0; v < nv; v++) {
            double y = (x[v * c + ch] - m) * rstd;
            if (g) y = y * g[ch] + b[ch];
            out[v * c + ch] = y < 0 ? 0.01 * y : y;
        }
    }
}

float *test_rand(test_rng *r, size_t n, float lo, float hi)
{
    float *x = malloc((n ? n : 1) * sizeof(float));
    test_fill_uniform(r, x, n, lo, hi);
    return x;
}

swin_bf16 *test_bf16_copy(const float *w, size_t n, float *rounded)
{
    swin_bf16 *b = malloc((n ? n : 1) * sizeof *b);
    for (size_t i = 0; b && i < n; i++) {
        b[i] = swin_bf16_from_f32(w[i]);
        if (rounded) rounded[i] = swin_bf16_to_f32(b[i]);
    }
    return b;
}

/* Layout: [p ... header (p, bytes) | ws (4 bytes past a 64-byte boundary), bytes | 64 guard bytes]. */
#define WS_GUARD 64
void *ws_new(size_t bytes)
{
    char *p = malloc(bytes + 128 + WS_GUARD);
    if (!p) {
        fprintf(stderr, "out of memory (workspace %zu bytes)\n", bytes);
        exit(1);
    }
    char *aligned = (char *)(((size_t)p + 16 + 63) / 64 * 64);   /* >= p + 16 */
    memcpy(aligned - sizeof p, &p, sizeof p);
    memcpy(aligned - sizeof p - sizeof bytes, &bytes, sizeof bytes);
    memset(aligned + 4 + bytes, 0xA5, WS_GUARD);
    return aligned + 4;
}

bool ws_free(void *ws)
{
    if (!ws) return true;
    char *p, *a = (char *)ws - 4;
    size_t bytes;
    memcpy(&p, a - sizeof p, sizeof p);
    memcpy(&bytes, a - sizeof p - sizeof bytes, sizeof bytes);
    bool ok = true;
    for (int i = 0; i < WS_GUARD; i++) ok &= (unsigned char)((char *)ws)[bytes + i] == 0xA5;
    free(p);
    if (!ok) fprintf(stderr, "FAIL an op wrote past the end of its %zu-byte workspace\n", bytes);
    return ok;
}

struct swin_cpu_backend *test_backend(int threads)
{
    struct swin_cpu_backend *be = NULL;
    swin_error err = {0};
    if (swin_cpu_backend_create(threads, &be, &err)) {
        fprintf(stderr, "FAIL swin_cpu_backend_create(%d): %s\n", threads, err.msg);
        return NULL;
    }
    return be;
}

const enum swin_cpu_simd test_simd_levels[TEST_SIMD_LEVELS] = {SWIN_CPU_SIMD_AVX512_BF16, SWIN_CPU_SIMD_AVX512,
                                                              SWIN_CPU_SIMD_AVX2, SWIN_CPU_SIMD_BASELINE};

const char *test_simd_name(enum swin_cpu_simd level) { return swin_cpu_simd_name(level); }

bool test_simd_select(struct swin_cpu_backend *be, enum swin_cpu_simd level)
{
    if (swin_cpu_backend_set_simd(be, level) == level) {
        fprintf(stderr, "---- kernels: %s ----\n", test_simd_name(level));
        return true;
    }
    fprintf(stderr, "note: this CPU lacks %s; that level is not tested here\n", test_simd_name(level));
    return false;
}

int test_main_every_level(bool (*cases)(struct swin_cpu_backend *be))
{
    struct swin_cpu_backend *be = test_backend(2);
    if (!be) return 1;
    bool ok = true;
    for (int i = 0; i < TEST_SIMD_LEVELS; i++)
        if (test_simd_select(be, test_simd_levels[i])) ok &= cases(be);
    swin_cpu_backend_free(be);
    return test_exit(ok);
}
