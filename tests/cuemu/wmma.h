/* nvcuda::wmma for the emulated build: m16n16k16 with __half or __nv_bfloat16 inputs and
 * float or __half accumulators, and m16n16k8 with precision::tf32 inputs.
 *
 * CUDA leaves the mapping between a lane's fragment slots x[i] and tile elements
 * unspecified. Here slot i of lane l holds element map[(l * num_elements + i) % E] of
 * the E-element tile (row-major index), where map is the identity or, under
 * CUEMU_WMMA_LAYOUT=scrambled:SEED, a random permutation: a kernel that assumes a
 * layout fails. Fragments with more slots than elements (__half A/B: 512 slots, 256
 * elements) hold each element twice; mma_sync checks that both copies agree.
 * num_elements, the member names and the free functions are those of crt/mma.h. */
#ifndef CUEMU_WMMA_H
#define CUEMU_WMMA_H

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace nvcuda {
namespace wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };
namespace precision {
struct tf32 {};
} // namespace precision

/* Rounds to tf32 (10-bit mantissa), to nearest even, as __float_to_tf32 does. */
inline float __float_to_tf32(float f)
{
    uint32_t b;
    std::memcpy(&b, &f, 4);
    if ((b & 0x7F800000u) != 0x7F800000u) /* not inf or NaN */
        b = (b + 0xFFFu + (b >> 13 & 1u)) & ~0x1FFFu;
    std::memcpy(&f, &b, 4);
    return f;
}

template <typename T, int N, typename S = T> struct __align__(8) __frag_base {
    enum { num_elements = N, num_storage_elements = N };
    typedef T element_type;
    typedef S storage_element_type;
    S x[N];
};

namespace detail {
/* Tile shape and slot count per fragment kind, as in crt/mma.h. */
template <typename Use, int M, int N, int K, typename T> struct traits;
template <int M, int N, int K> struct dims_a { enum { rows = M, cols = K, use = 0 }; };
template <int M, int N, int K> struct dims_b { enum { rows = K, cols = N, use = 1 }; };
template <int M, int N, int K> struct dims_c { enum { rows = M, cols = N, use = 2 }; };
template <> struct traits<matrix_a, 16, 16, 16, __half> : dims_a<16, 16, 16> { enum { slots = 16 }; typedef __half storage; };
template <> struct traits<matrix_b, 16, 16, 16, __half> : dims_b<16, 16, 16> { enum { slots = 16 }; typedef __half storage; };
template <> struct traits<matrix_a, 16, 16, 16, __nv_bfloat16> : dims_a<16, 16, 16> { enum { slots = 8 }; typedef __nv_bfloat16 storage; };
template <> struct traits<matrix_b, 16, 16, 16, __nv_bfloat16> : dims_b<16, 16, 16> { enum { slots = 8 }; typedef __nv_bfloat16 storage; };
template <> struct traits<accumulator, 16, 16, 16, float> : dims_c<16, 16, 16> { enum { slots = 8 }; typedef float storage; };
template <> struct traits<accumulator, 16, 16, 16, __half> : dims_c<16, 16, 16> { enum { slots = 8 }; typedef __half storage; };
template <> struct traits<matrix_a, 16, 16, 8, precision::tf32> : dims_a<16, 16, 8> { enum { slots = 4 }; typedef float storage; };
template <> struct traits<matrix_b, 16, 16, 8, precision::tf32> : dims_b<16, 16, 8> { enum { slots = 4 }; typedef float storage; };
template <> struct traits<accumulator, 16, 16, 8, float> : dims_c<16, 16, 8> { enum { slots = 8 }; typedef float storage; };

inline float to_float(float v) { return v; }
inline float to_float(__half v) { return __half2float(v); }
inline float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename S> inline S from_float(float v);
template <> inline float from_float<float>(float v) { return v; }
template <> inline __half from_float<__half>(float v) { return __float2half_rn(v); }
template <> inline __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
} // namespace detail

template <typename Use, int M, int N, int K, typename T, typename Layout = void>
class fragment : public __frag_base<T, detail::traits<Use, M, N, K, T>::slots,
                                    typename detail::traits<Use, M, N, K, T>::storage> {
public:
    typedef detail::traits<Use, M, N, K, T> traits;
    enum { rows = traits::rows, cols = traits::cols, use = traits::use };
};

template <typename Use, int M, int N, int K, typename T, typename L>
inline void fill_fragment(fragment<Use, M, N, K, T, L> &f,
                          const typename fragment<Use, M, N, K, T, L>::storage_element_type &v)
{
    for (int i = 0; i < f.num_elements; i++)
        f.x[i] = v;
}

namespace detail {
/* Visits every slot of the calling lane's fragment with its tile (row, col). */
template <typename F, typename Fn> inline void each_slot(unsigned lane, Fn fn)
{
    constexpr unsigned E = F::rows * F::cols;
    const unsigned short *map = cuemu_wmma_slot_map(F::use, E);
    for (unsigned i = 0; i < (unsigned)F::num_elements; i++) {
        unsigned e = map[(lane * F::num_elements + i) % E];
        fn(i, e / F::cols, e % F::cols);
    }
}

/* CUDA's preconditions: a 256-bit aligned pointer and ldm a multiple of 16 bytes. */
template <typename T> inline void check_ptr(const T *p, unsigned ldm, const char *fn, cuemu::site s)
{
    if (reinterpret_cast<uintptr_t>(p) % 32 != 0)
        cuemu_kernel_error(s.file, s.line, "%s: pointer %p is not 32-byte aligned", fn,
                           static_cast<const void *>(p));
    if (ldm * sizeof(T) % 16 != 0)
        cuemu_kernel_error(s.file, s.line, "%s: ldm %u is not a multiple of %u elements", fn,
                           ldm, (unsigned)(16 / sizeof(T)));
}
} // namespace detail

/* A and B: the memory layout is part of the fragment type. */
template <typename Use, int M, int N, int K, typename T, typename L, typename P>
inline void load_matrix_sync(fragment<Use, M, N, K, T, L> &f, const P *p, unsigned ldm,
                             cuemu::site s = CUEMU_SITE)
{
    static_assert(std::is_same<L, row_major>::value || std::is_same<L, col_major>::value,
                  "load_matrix_sync without a layout argument is for matrix_a/matrix_b");
    typedef fragment<Use, M, N, K, T, L> F;
    detail::check_ptr(p, ldm, "load_matrix_sync", s);
    constexpr bool row = std::is_same<L, row_major>::value;
    detail::each_slot<F>(cuemu_lane_id(), [&](unsigned i, unsigned r, unsigned c) {
        f.x[i] = static_cast<typename F::storage_element_type>(p[row ? r * ldm + c : c * ldm + r]);
    });
}

template <int M, int N, int K, typename T, typename P>
inline void load_matrix_sync(fragment<accumulator, M, N, K, T> &f, const P *p, unsigned ldm,
                             layout_t layout, cuemu::site s = CUEMU_SITE)
{
    detail::check_ptr(p, ldm, "load_matrix_sync", s);
    detail::each_slot<fragment<accumulator, M, N, K, T>>(cuemu_lane_id(), [&](unsigned i, unsigned r, unsigned c) {
        f.x[i] = p[layout == mem_row_major ? r * ldm + c : c * ldm + r];
    });
}

template <int M, int N, int K, typename T, typename P>
inline void store_matrix_sync(P *p, const fragment<accumulator, M, N, K, T> &f, unsigned ldm,
                              layout_t layout, cuemu::site s = CUEMU_SITE)
{
    detail::check_ptr(p, ldm, "store_matrix_sync", s);
    detail::each_slot<fragment<accumulator, M, N, K, T>>(cuemu_lane_id(), [&](unsigned i, unsigned r, unsigned c) {
        p[layout == mem_row_major ? r * ldm + c : c * ldm + r] = f.x[i];
    });
}

namespace detail {
struct mma_lane {
    void *d;
    const void *a, *b, *c;
};

/* Reassembles the tile of fragment type F from all 32 lanes into out[rows * cols].
 * Returns an error message when two copies of one element differ. */
template <typename F> inline const char *gather(cuemu_warp_arg *const lanes[32], const void *mma_lane::*which,
                                                float *out, bool tf32)
{
    typedef typename F::storage_element_type S;
    bool seen[F::rows * F::cols] = {};
    S first[F::rows * F::cols];
    for (unsigned l = 0; l < 32; l++) {
        const F *f = static_cast<const F *>(static_cast<mma_lane *>(lanes[l]->data)->*which);
        const char *err = nullptr;
        each_slot<F>(l, [&](unsigned i, unsigned r, unsigned c) {
            unsigned e = r * F::cols + c;
            if (seen[e] && std::memcmp(&first[e], &f->x[i], sizeof(S)) != 0)
                err = "the copies of one fragment element differ between slots: the kernel "
                      "changed fragment elements by position";
            seen[e] = true;
            first[e] = f->x[i];
            float v = to_float(f->x[i]);
            out[e] = tf32 ? __float_to_tf32(v) : v;
        });
        if (err)
            return err;
    }
    return nullptr;
}

template <typename FD, typename FA, typename FB, typename FC>
const char *mma_compute(cuemu_warp_arg *const lanes[32], unsigned)
{
    constexpr int M = FA::rows, K = FA::cols, N = FB::cols;
    constexpr bool tf32 = std::is_same<typename FA::element_type, precision::tf32>::value;
    float a[M * K], b[K * N], c[M * N];
    const char *err = gather<FA>(lanes, &mma_lane::a, a, tf32);
    if (!err)
        err = gather<FB>(lanes, &mma_lane::b, b, tf32);
    if (!err)
        err = gather<FC>(lanes, &mma_lane::c, c, false);
    if (err)
        return err;
    /* d = a * b + c with fp32 products and sums (products of halves are exact). */
    float d[M * N];
    for (int r = 0; r < M; r++)
        for (int col = 0; col < N; col++) {
            float acc = c[r * N + col];
            for (int k = 0; k < K; k++)
                acc += a[r * K + k] * b[k * N + col];
            d[r * N + col] = acc;
        }
    for (unsigned l = 0; l < 32; l++) {
        FD *f = static_cast<FD *>(static_cast<mma_lane *>(lanes[l]->data)->d);
        each_slot<FD>(l, [&](unsigned i, unsigned r, unsigned col) {
            f->x[i] = from_float<typename FD::storage_element_type>(d[r * N + col]);
        });
    }
    return nullptr;
}
} // namespace detail

/* A warp collective: all 32 lanes must call it. */
template <int M, int N, int K, typename TD, typename TA, typename TB, typename LA, typename LB,
          typename TC>
inline void mma_sync(fragment<accumulator, M, N, K, TD> &d, const fragment<matrix_a, M, N, K, TA, LA> &a,
                     const fragment<matrix_b, M, N, K, TB, LB> &b,
                     const fragment<accumulator, M, N, K, TC> &c, bool satf = false,
                     cuemu::site s = CUEMU_SITE)
{
    static_assert(std::is_same<TA, TB>::value, "mma_sync: A and B must have the same type");
    detail::mma_lane lane{&d, &a, &b, &c};
    cuemu_warp_arg arg = cuemu::warp_arg(CUEMU_WARP_CUSTOM, "wmma::mma_sync", 0xFFFFFFFFu, s);
    arg.compute = &detail::mma_compute<fragment<accumulator, M, N, K, TD>, fragment<matrix_a, M, N, K, TA, LA>,
                                       fragment<matrix_b, M, N, K, TB, LB>, fragment<accumulator, M, N, K, TC>>;
    arg.data = &lane;
    cuemu::warp_run(arg);
    (void)satf;
}

} // namespace wmma
} // namespace nvcuda

#endif
