/* Warp intrinsics (the _sync forms only; the mask-less ones are invalid on cc70+).
 * Each is a collective over the lanes of `mask` (see cuemu_warp_op in sched.c): all
 * named lanes must call the same intrinsic at the same call site with the same mask. */
#ifndef CUEMU_WARP_H
#define CUEMU_WARP_H

#include <cstring>
#include <type_traits>

namespace cuemu {
/* The caller's source location: GCC evaluates __builtin_FILE/LINE in a default argument
 * at the call site, so `site s = site()` as a last parameter names the kernel's line. */
struct site {
    const char *file;
    int line;
    site(const char *f = __builtin_FILE(), int l = __builtin_LINE()) : file(f), line(l) {}
};

inline cuemu_warp_arg warp_arg(cuemu_warp_kind kind, const char *what, unsigned mask, site s)
{
    cuemu_warp_arg a{};
    a.kind = kind;
    a.mask = mask;
    a.file = s.file;
    a.line = s.line;
    a.what = what;
    a.width = 32;
    return a;
}

inline void warp_run(cuemu_warp_arg &a)
{
    __asm__ volatile("" ::: "memory");
    cuemu_warp_op(&a);
    __asm__ volatile("" ::: "memory");
}

template <typename T>
inline T shfl(cuemu_warp_kind kind, const char *what, unsigned mask, T var, int param, int width,
              site s)
{
    static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= 16,
                  "shuffles move trivially copyable values of at most 16 bytes");
    cuemu_warp_arg a = warp_arg(kind, what, mask, s);
    a.size = sizeof(T);
    a.param = param;
    a.width = width;
    std::memcpy(a.in.b, &var, sizeof(T));
    warp_run(a);
    T r;
    std::memcpy(&r, a.out.b, sizeof(T));
    return r;
}

inline unsigned vote(cuemu_warp_kind kind, const char *what, unsigned mask, int pred, site s)
{
    cuemu_warp_arg a = warp_arg(kind, what, mask, s);
    a.param = pred != 0;
    warp_run(a);
    unsigned r;
    std::memcpy(&r, a.out.b, sizeof r);
    return r;
}

template <typename T>
inline unsigned match(cuemu_warp_kind kind, const char *what, unsigned mask, T value, int *pred,
                      site s)
{
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "match takes 32- or 64-bit values");
    cuemu_warp_arg a = warp_arg(kind, what, mask, s);
    a.size = sizeof(T);
    std::memcpy(a.in.b, &value, sizeof(T));
    warp_run(a);
    if (pred)
        *pred = (int)a.out.q[1];
    unsigned r;
    std::memcpy(&r, a.out.b, sizeof r);
    return r;
}

inline unsigned reduce(cuemu_reduce_op op, const char *what, unsigned mask, unsigned v, site s)
{
    cuemu_warp_arg a = warp_arg(CUEMU_WARP_REDUCE, what, mask, s);
    a.size = 4;
    a.param = op;
    std::memcpy(a.in.b, &v, sizeof v);
    warp_run(a);
    std::memcpy(&v, a.out.b, sizeof v);
    return v;
}
} // namespace cuemu

#define CUEMU_SITE ::cuemu::site()

template <typename T>
inline T __shfl_sync(unsigned mask, T var, int srcLane, int width = 32, cuemu::site s = CUEMU_SITE)
{
    return cuemu::shfl(CUEMU_WARP_SHFL_IDX, "__shfl_sync", mask, var, srcLane, width, s);
}
template <typename T>
inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32,
                        cuemu::site s = CUEMU_SITE)
{
    return cuemu::shfl(CUEMU_WARP_SHFL_UP, "__shfl_up_sync", mask, var, (int)delta, width, s);
}
template <typename T>
inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32,
                          cuemu::site s = CUEMU_SITE)
{
    return cuemu::shfl(CUEMU_WARP_SHFL_DOWN, "__shfl_down_sync", mask, var, (int)delta, width, s);
}
template <typename T>
inline T __shfl_xor_sync(unsigned mask, T var, int laneMask, int width = 32,
                         cuemu::site s = CUEMU_SITE)
{
    return cuemu::shfl(CUEMU_WARP_SHFL_XOR, "__shfl_xor_sync", mask, var, laneMask, width, s);
}

inline unsigned __ballot_sync(unsigned mask, int pred, cuemu::site s = CUEMU_SITE)
{
    return cuemu::vote(CUEMU_WARP_BALLOT, "__ballot_sync", mask, pred, s);
}
inline int __any_sync(unsigned mask, int pred, cuemu::site s = CUEMU_SITE)
{
    return (int)cuemu::vote(CUEMU_WARP_ANY, "__any_sync", mask, pred, s);
}
inline int __all_sync(unsigned mask, int pred, cuemu::site s = CUEMU_SITE)
{
    return (int)cuemu::vote(CUEMU_WARP_ALL, "__all_sync", mask, pred, s);
}
inline void __syncwarp(unsigned mask = 0xFFFFFFFFu, cuemu::site s = CUEMU_SITE)
{
    cuemu::vote(CUEMU_WARP_SYNC, "__syncwarp", mask, 0, s);
}
/* Approximation: the lanes of the warp that have not exited (see cuemu_abi.h). */
inline unsigned __activemask() { return cuemu_activemask(); }

template <typename T>
inline unsigned __match_any_sync(unsigned mask, T value, cuemu::site s = CUEMU_SITE)
{
    return cuemu::match(CUEMU_WARP_MATCH_ANY, "__match_any_sync", mask, value, nullptr, s);
}
template <typename T>
inline unsigned __match_all_sync(unsigned mask, T value, int *pred, cuemu::site s = CUEMU_SITE)
{
    return cuemu::match(CUEMU_WARP_MATCH_ALL, "__match_all_sync", mask, value, pred, s);
}

inline unsigned __reduce_add_sync(unsigned mask, unsigned v, cuemu::site s = CUEMU_SITE)
{
    return cuemu::reduce(CUEMU_REDUCE_ADD, "__reduce_add_sync", mask, v, s);
}
inline int __reduce_add_sync(unsigned mask, int v, cuemu::site s = CUEMU_SITE)
{
    return (int)cuemu::reduce(CUEMU_REDUCE_ADD, "__reduce_add_sync", mask, (unsigned)v, s);
}
inline unsigned __reduce_min_sync(unsigned mask, unsigned v, cuemu::site s = CUEMU_SITE)
{
    return cuemu::reduce(CUEMU_REDUCE_MIN_U, "__reduce_min_sync", mask, v, s);
}
inline int __reduce_min_sync(unsigned mask, int v, cuemu::site s = CUEMU_SITE)
{
    return (int)cuemu::reduce(CUEMU_REDUCE_MIN_S, "__reduce_min_sync", mask, (unsigned)v, s);
}
inline unsigned __reduce_max_sync(unsigned mask, unsigned v, cuemu::site s = CUEMU_SITE)
{
    return cuemu::reduce(CUEMU_REDUCE_MAX_U, "__reduce_max_sync", mask, v, s);
}
inline int __reduce_max_sync(unsigned mask, int v, cuemu::site s = CUEMU_SITE)
{
    return (int)cuemu::reduce(CUEMU_REDUCE_MAX_S, "__reduce_max_sync", mask, (unsigned)v, s);
}
inline unsigned __reduce_and_sync(unsigned mask, unsigned v, cuemu::site s = CUEMU_SITE)
{
    return cuemu::reduce(CUEMU_REDUCE_AND, "__reduce_and_sync", mask, v, s);
}
inline unsigned __reduce_or_sync(unsigned mask, unsigned v, cuemu::site s = CUEMU_SITE)
{
    return cuemu::reduce(CUEMU_REDUCE_OR, "__reduce_or_sync", mask, v, s);
}
inline unsigned __reduce_xor_sync(unsigned mask, unsigned v, cuemu::site s = CUEMU_SITE)
{
    return cuemu::reduce(CUEMU_REDUCE_XOR, "__reduce_xor_sync", mask, v, s);
}

#endif
