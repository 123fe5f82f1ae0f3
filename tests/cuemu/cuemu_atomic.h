/* Atomic functions for the types CUDA allows. Fibers of a block share one OS thread, so
 * relaxed GCC atomics are exact; floating-point and 16-bit forms use CAS loops on the
 * bit pattern. The _block and _system scopes behave the same here. */
#ifndef CUEMU_ATOMIC_H
#define CUEMU_ATOMIC_H

#include <cstring>

namespace cuemu {
template <typename T> inline T fetch_add(T *p, T v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
template <typename T> inline T fetch_sub(T *p, T v) { return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED); }
template <typename T> inline T fetch_and(T *p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_RELAXED); }
template <typename T> inline T fetch_or(T *p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_RELAXED); }
template <typename T> inline T fetch_xor(T *p, T v) { return __atomic_fetch_xor(p, v, __ATOMIC_RELAXED); }
template <typename T> inline T exchange(T *p, T v) { return __atomic_exchange_n(p, v, __ATOMIC_RELAXED); }
template <typename T> inline T cas(T *p, T expected, T desired)
{
    __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    return expected; /* the old value, whether or not it was swapped */
}

/* Read-modify-write of a value stored as the unsigned integer U through op(old). */
template <typename T, typename U, typename F> inline T rmw_bits(T *p, F op)
{
    U *q = reinterpret_cast<U *>(p);
    U old = __atomic_load_n(q, __ATOMIC_RELAXED), seen;
    for (;;) {
        T o, n;
        std::memcpy(static_cast<void *>(&o), &old, sizeof o);
        n = op(o);
        U nb;
        std::memcpy(&nb, static_cast<const void *>(&n), sizeof nb);
        seen = cas(q, old, nb);
        if (seen == old)
            return o;
        old = seen;
    }
}
template <typename T> inline T fetch_min(T *p, T v)
{
    T old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v < old && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return old;
}
template <typename T> inline T fetch_max(T *p, T v)
{
    T old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v > old && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return old;
}
} // namespace cuemu

#define CUEMU_INT_ATOMICS(T)                                                                  \
    inline T atomicAdd(T *p, T v) { return cuemu::fetch_add(p, v); }                          \
    inline T atomicExch(T *p, T v) { return cuemu::exchange(p, v); }                          \
    inline T atomicMin(T *p, T v) { return cuemu::fetch_min(p, v); }                          \
    inline T atomicMax(T *p, T v) { return cuemu::fetch_max(p, v); }                          \
    inline T atomicAnd(T *p, T v) { return cuemu::fetch_and(p, v); }                          \
    inline T atomicOr(T *p, T v) { return cuemu::fetch_or(p, v); }                            \
    inline T atomicXor(T *p, T v) { return cuemu::fetch_xor(p, v); }                          \
    inline T atomicCAS(T *p, T compare, T v) { return cuemu::cas(p, compare, v); }
CUEMU_INT_ATOMICS(int)
CUEMU_INT_ATOMICS(unsigned int)
CUEMU_INT_ATOMICS(unsigned long long)
#undef CUEMU_INT_ATOMICS

inline int atomicSub(int *p, int v) { return cuemu::fetch_sub(p, v); }
inline unsigned atomicSub(unsigned *p, unsigned v) { return cuemu::fetch_sub(p, v); }
inline long long atomicMin(long long *p, long long v) { return cuemu::fetch_min(p, v); }
inline long long atomicMax(long long *p, long long v) { return cuemu::fetch_max(p, v); }
inline unsigned short atomicCAS(unsigned short *p, unsigned short compare, unsigned short v)
{
    return cuemu::cas(p, compare, v);
}
inline float atomicExch(float *p, float v)
{
    return cuemu::rmw_bits<float, unsigned>(p, [v](float) { return v; });
}

/* CUDA's wrap rules: inc returns to 0 after reaching val; dec reloads val at 0 or above val. */
inline unsigned atomicInc(unsigned *p, unsigned val)
{
    return cuemu::rmw_bits<unsigned, unsigned>(p, [val](unsigned o) { return o >= val ? 0u : o + 1; });
}
inline unsigned atomicDec(unsigned *p, unsigned val)
{
    return cuemu::rmw_bits<unsigned, unsigned>(
        p, [val](unsigned o) { return (o == 0 || o > val) ? val : o - 1; });
}

inline float atomicAdd(float *p, float v)
{
    return cuemu::rmw_bits<float, unsigned>(p, [v](float o) { return o + v; });
}
inline double atomicAdd(double *p, double v)
{
    return cuemu::rmw_bits<double, unsigned long long>(p, [v](double o) { return o + v; });
}
/* Half-precision adds round the sum to the storage type, as the hardware does. */
inline __half atomicAdd(__half *p, __half v)
{
    return cuemu::rmw_bits<__half, unsigned short>(
        p, [v](__half o) { return __float2half_rn(__half2float(o) + __half2float(v)); });
}
inline __half2 atomicAdd(__half2 *p, __half2 v)
{
    return cuemu::rmw_bits<__half2, unsigned>(p, [v](__half2 o) {
        return __floats2half2_rn(__low2float(o) + __low2float(v), __high2float(o) + __high2float(v));
    });
}
inline __nv_bfloat16 atomicAdd(__nv_bfloat16 *p, __nv_bfloat16 v)
{
    return cuemu::rmw_bits<__nv_bfloat16, unsigned short>(p, [v](__nv_bfloat16 o) {
        return __float2bfloat16_rn(__bfloat162float(o) + __bfloat162float(v));
    });
}
inline __nv_bfloat162 atomicAdd(__nv_bfloat162 *p, __nv_bfloat162 v)
{
    return cuemu::rmw_bits<__nv_bfloat162, unsigned>(p, [v](__nv_bfloat162 o) {
        return __floats2bfloat162_rn(__low2float(o) + __low2float(v),
                                     __high2float(o) + __high2float(v));
    });
}

/* Scoped variants: same semantics on one CPU thread. */
#define CUEMU_SCOPED(name)                                                                    \
    template <typename T, typename... A> inline auto name##_block(T *p, A... a)               \
    {                                                                                         \
        return name(p, a...);                                                                 \
    }                                                                                         \
    template <typename T, typename... A> inline auto name##_system(T *p, A... a)              \
    {                                                                                         \
        return name(p, a...);                                                                 \
    }
CUEMU_SCOPED(atomicAdd)
CUEMU_SCOPED(atomicSub)
CUEMU_SCOPED(atomicExch)
CUEMU_SCOPED(atomicMin)
CUEMU_SCOPED(atomicMax)
CUEMU_SCOPED(atomicInc)
CUEMU_SCOPED(atomicDec)
CUEMU_SCOPED(atomicCAS)
CUEMU_SCOPED(atomicAnd)
CUEMU_SCOPED(atomicOr)
CUEMU_SCOPED(atomicXor)
#undef CUEMU_SCOPED

#endif
