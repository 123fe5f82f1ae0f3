/* Device math and bit intrinsics for the host compiler. The fast-math forms (__expf,
 * __fdividef, ...) are computed at full precision here, so tests must use tolerances.
 * Half and bfloat16 functions come from the vendor headers, which define them for the
 * host too. */
#ifndef CUEMU_MATH_H
#define CUEMU_MATH_H

#include <cmath>
#include <cstdint>
#include <cstring>

/* glibc declares __expf and friends (its internal names) without exporting them, so
 * they are defined here with C linkage, at global scope. */
extern "C" {
inline float __expf(float x) throw() { return expf(x); }
inline float __logf(float x) throw() { return logf(x); }
inline float __sinf(float x) throw() { return sinf(x); }
inline float __cosf(float x) throw() { return cosf(x); }
inline float __tanf(float x) throw() { return tanf(x); }
inline float __powf(float x, float y) throw() { return powf(x, y); }
inline float __exp10f(float x) throw() { return exp10f(x); }
inline float __log2f(float x) throw() { return log2f(x); }
inline float __log10f(float x) throw() { return log10f(x); }
}
inline void __sincosf(float x, float *s, float *c) { *s = sinf(x); *c = cosf(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fsqrt_rn(float x) { return sqrtf(x); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline float __saturatef(float x) { return x != x ? 0.0f : x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x; }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }

/* --- reinterpretation and conversions --- */
inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
inline int __float_as_int(float f) { int i; std::memcpy(&i, &f, 4); return i; }
inline float __uint_as_float(unsigned i) { float f; std::memcpy(&f, &i, 4); return f; }
inline unsigned __float_as_uint(float f) { unsigned i; std::memcpy(&i, &f, 4); return i; }
inline double __longlong_as_double(long long i) { double d; std::memcpy(&d, &i, 8); return d; }
inline long long __double_as_longlong(double d) { long long i; std::memcpy(&i, &d, 8); return i; }
/* Round-to-nearest-even is the default FP mode, which kernels must not change. */
inline int __float2int_rn(float x) { return (int)nearbyintf(x); }
inline int __float2int_rz(float x) { return (int)truncf(x); }
inline int __float2int_rd(float x) { return (int)floorf(x); }
inline int __float2int_ru(float x) { return (int)ceilf(x); }
inline unsigned __float2uint_rn(float x) { return (unsigned)nearbyintf(x); }
inline unsigned __float2uint_rz(float x) { return (unsigned)truncf(x); }
inline long long __float2ll_rn(float x) { return (long long)nearbyintf(x); }
inline float __int2float_rn(int i) { return (float)i; }
inline float __uint2float_rn(unsigned i) { return (float)i; }
inline float __double2float_rn(double d) { return (float)d; }

/* --- bit operations --- */
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned __brev(unsigned x)
{
    x = (x >> 1 & 0x55555555u) | (x & 0x55555555u) << 1;
    x = (x >> 2 & 0x33333333u) | (x & 0x33333333u) << 2;
    x = (x >> 4 & 0x0F0F0F0Fu) | (x & 0x0F0F0F0Fu) << 4;
    return __builtin_bswap32(x);
}
inline unsigned long long __brevll(unsigned long long x)
{
    return (unsigned long long)__brev((unsigned)x) << 32 | __brev((unsigned)(x >> 32));
}
/* Byte i of the result is byte s[4i+2:4i] of the 8-byte value {y, x} (x is bytes 0-3). */
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s)
{
    unsigned long long v = (unsigned long long)y << 32 | x;
    unsigned r = 0;
    for (int i = 0; i < 4; i++)
        r |= (unsigned)(v >> 8 * (s >> 4 * i & 7) & 0xFF) << 8 * i;
    return r;
}
/* Funnel shifts of the 64-bit value {hi, lo}: _l returns the high word after shifting
 * left, _r the low word after shifting right; the shift is masked (&31) or clamped (c). */
inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned sh)
{
    return (unsigned)((((unsigned long long)hi << 32 | lo) << (sh & 31)) >> 32);
}
inline unsigned __funnelshift_lc(unsigned lo, unsigned hi, unsigned sh)
{
    return (unsigned)((((unsigned long long)hi << 32 | lo) << (sh < 32 ? sh : 32)) >> 32);
}
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned sh)
{
    return (unsigned)(((unsigned long long)hi << 32 | lo) >> (sh & 31));
}
inline unsigned __funnelshift_rc(unsigned lo, unsigned hi, unsigned sh)
{
    return (unsigned)(((unsigned long long)hi << 32 | lo) >> (sh < 32 ? sh : 32));
}
/* 24-bit multiplies use the low 24 bits of each operand (signed for __mul24). */
inline int __mul24(int a, int b)
{
    long long a24 = (int)((unsigned)a << 8) >> 8, b24 = (int)((unsigned)b << 8) >> 8;
    return (int)(a24 * b24);
}
inline unsigned __umul24(unsigned a, unsigned b) { return (a & 0xFFFFFFu) * (b & 0xFFFFFFu); }
inline int __mulhi(int a, int b) { return (int)((long long)a * b >> 32); }
inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)((unsigned long long)a * b >> 32); }
inline long long __mul64hi(long long a, long long b) { return (long long)((__int128)a * b >> 64); }
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b)
{
    return (unsigned long long)((unsigned __int128)a * b >> 64);
}

/* --- loads and stores with cache hints: plain accesses here --- */
template <typename T> inline T __ldg(const T *p) { return *p; }
template <typename T> inline T __ldcg(const T *p) { return *p; }
template <typename T> inline T __ldca(const T *p) { return *p; }
template <typename T> inline T __ldcs(const T *p) { return *p; }
template <typename T> inline T __ldlu(const T *p) { return *p; }
template <typename T> inline void __stcg(T *p, T v) { *p = v; }
template <typename T> inline void __stcs(T *p, T v) { *p = v; }
template <typename T> inline void __stwb(T *p, T v) { *p = v; }

/* --- min / max (parenthesised names so that a min/max macro cannot break them) --- */
#define CUEMU_MINMAX(T)                                                                        \
    inline T(min)(T a, T b) { return a < b ? a : b; }                                          \
    inline T(max)(T a, T b) { return a > b ? a : b; }
CUEMU_MINMAX(int)
CUEMU_MINMAX(unsigned)
CUEMU_MINMAX(long)
CUEMU_MINMAX(unsigned long)
CUEMU_MINMAX(long long)
CUEMU_MINMAX(unsigned long long)
#undef CUEMU_MINMAX
/* Floating-point min/max follow fminf/fmaxf: a NaN operand yields the other one. */
inline float(min)(float a, float b) { return fminf(a, b); }
inline float(max)(float a, float b) { return fmaxf(a, b); }
inline double(min)(double a, double b) { return fmin(a, b); }
inline double(max)(double a, double b) { return fmax(a, b); }
/* CUDA's mixed signed/unsigned overloads compare as unsigned. */
inline unsigned(min)(int a, unsigned b) { return (min)((unsigned)a, b); }
inline unsigned(min)(unsigned a, int b) { return (min)(a, (unsigned)b); }
inline unsigned(max)(int a, unsigned b) { return (max)((unsigned)a, b); }
inline unsigned(max)(unsigned a, int b) { return (max)(a, (unsigned)b); }

/* --- timers --- */
inline long long clock64() { return (long long)__builtin_ia32_rdtsc(); }

#endif
