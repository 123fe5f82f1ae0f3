/* Integer and conversion intrinsics against bit-by-bit definitions from the CUDA Math
 * API documentation, on random and edge-case operands. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tests/common/check.h"
#include "tests/cuemu/selftest/emu_util.h"
#include "tests/cuemu/selftest/k_intrin.h"

enum { N = 96 };

static unsigned bit(unsigned long long v, int i) { return (unsigned)(v >> i & 1); }

static unsigned popc(unsigned long long v, int bits)
{
    unsigned c = 0;
    for (int i = 0; i < bits; i++)
        c += bit(v, i);
    return c;
}
static unsigned clz(unsigned long long v, int bits)
{
    unsigned c = 0;
    for (int i = bits - 1; i >= 0 && !bit(v, i); i--)
        c++;
    return c;
}
static unsigned ffs_(unsigned long long v, int bits) /* 1-based lowest set bit, 0 if none */
{
    for (int i = 0; i < bits; i++)
        if (bit(v, i))
            return (unsigned)i + 1;
    return 0;
}
static unsigned long long brev(unsigned long long v, int bits)
{
    unsigned long long r = 0;
    for (int i = 0; i < bits; i++)
        r |= (unsigned long long)bit(v, i) << (bits - 1 - i);
    return r;
}
/* Bytes 0-3 of x then 0-3 of y; selector nibble i picks result byte i. */
static unsigned byte_perm(unsigned x, unsigned y, unsigned s)
{
    unsigned char bytes[8];
    for (int i = 0; i < 4; i++) {
        bytes[i] = (unsigned char)(x >> (8 * i));
        bytes[4 + i] = (unsigned char)(y >> (8 * i));
    }
    unsigned r = 0;
    for (int i = 0; i < 4; i++)
        r |= (unsigned)bytes[(s >> (4 * i)) & 7] << (8 * i);
    return r;
}
/* Funnel shifts of hi:lo; the shift is taken mod 32, or clamped to 32 (the c forms). */
static unsigned fsh_l(unsigned lo, unsigned hi, unsigned s) { return s == 0 ? hi : s == 32 ? lo : hi << s | lo >> (32 - s); }
static unsigned fsh_r(unsigned lo, unsigned hi, unsigned s) { return s == 0 ? lo : s == 32 ? hi : lo >> s | hi << (32 - s); }
static int sext24(unsigned v) { return (int)(v & 0x7FFFFF) - (int)(v & 0x800000); }
static int round_half_even(float f)
{
    double fl = floor(f), frac = f - fl;
    if (frac > 0.5 || (frac == 0.5 && fmod(fl, 2.0) != 0.0))
        fl += 1.0;
    return (int)fl;
}

int main(void)
{
    test_rng rng = {0x1F00};
    unsigned a[N], b[N], s[N], out[N * KI_OUTS];
    float f[N];
    static const unsigned edge[] = {0u, 1u, 0xFFFFFFFFu, 0x80000000u, 0x00800000u, 0x7FFFFFFFu};
    for (int i = 0; i < N; i++) {
        a[i] = i < 6 ? edge[i] : (unsigned)(test_rng_uniform(&rng, 0.0f, 1.0f) * 4294967295.0);
        b[i] = i >= 6 && i < 12 ? edge[i - 6] : (unsigned)(test_rng_uniform(&rng, 0.0f, 1.0f) * 4294967295.0);
        s[i] = i < 40 ? (unsigned)i : (unsigned)(test_rng_uniform(&rng, 0.0f, 65535.0f));
        /* halves (ties), negatives and in-between values */
        f[i] = i < 20 ? (float)(i - 10) * 0.5f : test_rng_uniform(&rng, -100.0f, 100.0f);
    }
    unsigned *da = emu_upload(a, sizeof a), *db = emu_upload(b, sizeof b), *ds = emu_upload(s, sizeof s);
    float *df = emu_upload(f, sizeof f);
    unsigned *dout = emu_alloc(sizeof out);
    bool ok = check_true("launch", ki_all(da, db, ds, df, dout, N) == cudaSuccess);
    emu_download(out, dout, sizeof out);
    int bad[KI_OUTS] = {0};
    for (int i = 0; i < N; i++) {
        unsigned x = a[i], y = b[i], sh = s[i];
        unsigned long long w = (unsigned long long)x << 32 | y;
        float sat = f[i] / 8.0f;
        sat = sat < 0.0f ? 0.0f : sat > 1.0f ? 1.0f : sat;
        unsigned sat_bits;
        memcpy(&sat_bits, &sat, 4);
        unsigned want[KI_OUTS] = {
            popc(x, 32), clz(x, 32), ffs_(x, 32), (unsigned)brev(x, 32), byte_perm(x, y, sh),
            fsh_l(x, y, sh % 32), fsh_r(x, y, sh % 32), fsh_l(x, y, sh < 32 ? sh : 32),
            fsh_r(x, y, sh < 32 ? sh : 32),
            (unsigned)(int)((long long)sext24(x) * sext24(y)), (x & 0xFFFFFF) * (y & 0xFFFFFF),
            (unsigned)(int)(((long long)(int)x * (int)y) >> 32),
            (unsigned)(((unsigned long long)x * y) >> 32), popc(w, 64), clz(w, 64), ffs_(w, 64),
            (unsigned)brev(w, 64), (unsigned)(brev(w, 64) >> 32), (unsigned)round_half_even(f[i]),
            (unsigned)(int)truncf(f[i]), (unsigned)(int)floorf(f[i]), (unsigned)(int)ceilf(f[i]),
            sat_bits, x < y ? x : y, x > y ? x : y};
        for (int k = 0; k < KI_OUTS; k++)
            if (out[i * KI_OUTS + k] != want[k]) {
                if (bad[k]++ < 2)
                    fprintf(stderr, "  result %d, thread %d (a=%08x b=%08x s=%u f=%g): got %08x want %08x\n",
                            k, i, x, y, sh, f[i], out[i * KI_OUTS + k], want[k]);
            }
    }
    static const char *const names[KI_OUTS] = {
        "__popc", "__clz", "__ffs", "__brev", "__byte_perm", "__funnelshift_l", "__funnelshift_r",
        "__funnelshift_lc", "__funnelshift_rc", "__mul24", "__umul24", "__mulhi", "__umulhi",
        "__popcll", "__clzll", "__ffsll", "__brevll (low)", "__brevll (high)", "__float2int_rn",
        "__float2int_rz", "__float2int_rd", "__float2int_ru", "__saturatef",
        "min(int, unsigned)", "max(unsigned, int)"};
    for (int k = 0; k < KI_OUTS; k++)
        ok &= check_true(names[k], bad[k] == 0);
    emu_free(da), emu_free(db), emu_free(ds), emu_free(df), emu_free(dout);
    return test_exit(ok);
}
