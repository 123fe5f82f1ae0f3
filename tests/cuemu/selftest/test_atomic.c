/* Every atomic function and type, including CUDA's atomicInc/atomicDec wrap rules,
 * against results computed here in closed form or by plain loops. */
#include <stdio.h>
#include <string.h>

#include "tests/common/check.h"
#include "tests/cuemu/selftest/emu_util.h"
#include "tests/cuemu/selftest/k_atomic.h"

enum { BLOCKS = 3, THREADS = 100, N = BLOCKS * THREADS };

/* IEEE half / bfloat16 bit patterns of small integers, built from their definitions. */
static unsigned short half_bits(int v) /* 0 < v < 2048 */
{
    int e = 0;
    while ((v >> e) > 1)
        e++;
    return (unsigned short)((e + 15) << 10 | ((v << (10 - e)) & 0x3FF));
}
static unsigned short bf16_bits(int v) /* 0 < v <= 256 */
{
    int e = 0;
    while ((v >> e) > 1)
        e++;
    return (unsigned short)((e + 127) << 7 | ((v << (7 - e)) & 0x7F));
}

#define EXPECT(field, want) ok &= check_true(#field, got.field == (want))

int main(void)
{
    struct atomic_buf init, got;
    memset(&init, 0, sizeof init);
    init.i_min = 1000;
    init.i_max = -1000;
    init.i_and = -1;
    init.u_min = 0xFFFFFFFFu;
    init.u_and = 0xFFFFFFFFu;
    init.u_sub = 1000000;
    init.ull_min = ~0ull;
    init.ull_and = ~0ull;
    init.i_exch = -7;
    init.f_exch = 0.5f;
    init.inc = 3;
    init.dec = 2;
    init.inc_high = 100;
    init.dec_high = 9;
    init.dec_zero = 0;

    struct atomic_buf *d = emu_upload(&init, sizeof init);
    bool ok = check_true("atomic launch", ka_all(d, BLOCKS, THREADS) == cudaSuccess);
    emu_download(&got, d, sizeof got);
    emu_free(d);

    int i_add = 0, i_min = 1000, i_max = -1000, i_and = -1, i_or = 0, i_xor = 0;
    unsigned u_add = 0, u_sub = 1000000, u_min = ~0u, u_max = 0, u_and = ~0u, u_or = 0, u_xor = 0;
    unsigned long long ull_add = 0, ull_min = ~0ull, ull_max = 0, ull_and = ~0ull, ull_or = 0, ull_xor = 0;
    long long ll_min = 0, ll_max = 0, ids = 0;
    float f_add = 0.0f;
    double d_add = 0.0;
    int exch_ok = 0, uexch_ok = 0, ullexch_ok = 0;
    for (int g = 0; g < N; g++) {
        int a = g % 17 - 8;
        unsigned u = (unsigned)g * 2654435761u;
        unsigned long long w = (unsigned long long)u << 20 | (unsigned)g;
        i_add += a;
        i_min = a * 3 < i_min ? a * 3 : i_min;
        i_max = a * 5 > i_max ? a * 5 : i_max;
        i_and &= ~(1 << (g % 31));
        i_or |= 1 << (g % 13);
        i_xor ^= a;
        u_add += u;
        u_sub -= (unsigned)g;
        u_min = u < u_min ? u : u_min;
        u_max = u > u_max ? u : u_max;
        u_and &= ~(1u << (g % 32));
        u_or |= 1u << (g % 29);
        u_xor ^= u;
        ull_add += w;
        ull_min = w < ull_min ? w : ull_min;
        ull_max = w > ull_max ? w : ull_max;
        ull_and &= ~(1ull << (g % 64));
        ull_or |= 1ull << (g % 61);
        ull_xor ^= w;
        ll_min = (long long)a * 1000000007LL < ll_min ? (long long)a * 1000000007LL : ll_min;
        ll_max = (long long)a * 1000000007LL > ll_max ? (long long)a * 1000000007LL : ll_max;
        f_add += (float)(g % 7);
        d_add += 0.25 * g;
        ids += g;
        exch_ok |= got.i_exch == g;
        uexch_ok |= got.u_exch == (unsigned)g;
        ullexch_ok |= got.ull_exch == w;
    }
    EXPECT(i_add, i_add);
    EXPECT(i_sub, -i_add);
    EXPECT(i_min, i_min);
    EXPECT(i_max, i_max);
    EXPECT(i_and, i_and);
    EXPECT(i_or, i_or);
    EXPECT(i_xor, i_xor);
    EXPECT(i_cas, 2 * N);
    EXPECT(u_add, u_add);
    EXPECT(u_sub, u_sub);
    EXPECT(u_min, u_min);
    EXPECT(u_max, u_max);
    EXPECT(u_and, u_and);
    EXPECT(u_or, u_or);
    EXPECT(u_xor, u_xor);
    EXPECT(u_cas, 3u * N);
    EXPECT(ull_add, ull_add);
    EXPECT(ull_min, ull_min);
    EXPECT(ull_max, ull_max);
    EXPECT(ull_and, ull_and);
    EXPECT(ull_or, ull_or);
    EXPECT(ull_xor, ull_xor);
    EXPECT(ull_cas, 5ull * N);
    EXPECT(ll_min, ll_min);
    EXPECT(ll_max, ll_max);
    EXPECT(f_add, f_add); /* integer-valued: exact in any order */
    EXPECT(d_add, d_add);
    ok &= check_true("atomicExch int leaves some thread's id", exch_ok);
    ok &= check_true("atomicExch unsigned leaves some thread's id", uexch_ok);
    ok &= check_true("atomicExch ull leaves some thread's value", ullexch_ok);
    ok &= check_true("atomicExch int returns every earlier value once",
                     got.i_exch_olds + got.i_exch == -7 + ids);
    ok &= check_true("atomicExch float returns every earlier value once",
                     (double)got.f_exch_olds + got.f_exch == 0.0 + ids); /* 0.5 truncates to 0 */
    EXPECT(us_cas, (unsigned short)N);
    EXPECT(h_add, half_bits(N));
    EXPECT(h2_add, (unsigned)half_bits(2 * N) << 16 | half_bits(N));
    EXPECT(bf_add, bf16_bits(128));
    EXPECT(bf2_add, (unsigned)bf16_bits(128) << 16 | bf16_bits(64));
    /* atomicInc cycles through 0..val, atomicDec through val..0 (start within range). */
    EXPECT(inc, (3u + N) % (KA_INC_VAL + 1));
    EXPECT(dec, (unsigned)(((2 - N) % (int)(KA_DEC_VAL + 1) + (int)(KA_DEC_VAL + 1)) % (int)(KA_DEC_VAL + 1)));
    EXPECT(inc_high, 0u);
    EXPECT(dec_high, KA_DEC_VAL);
    EXPECT(dec_zero, KA_DEC_VAL);
    EXPECT(block_add, N);
    EXPECT(system_add, 2 * N);
    return test_exit(ok);
}
