/* The CUDA kernel language for the host compiler. Force-included into every .cu file of
 * the emulated build:
 *
 *   g++ -std=c++17 -x c++ -DSWIN_EMU -include tests/cuemu/cuemu.h -I<cuda>/include ...
 *
 * (see swin_emu_cuda_sources in tests/cuemu/CMakeLists.txt). Keywords are defined first,
 * so that the vendor headers, which define them only when nvcc has not, keep ours; the
 * vendor headers then give the real dim3, float4, __half, cudaError_t, cuBLAS and cuDNN
 * types. The built-in variables come last: vendor structs have fields named gridDim and
 * blockDim. */
#ifndef CUEMU_H
#define CUEMU_H

#if !defined(__cplusplus) || __cplusplus < 201703L
#error "tests/cuemu/cuemu.h needs C++17 (compile .cu files with -x c++ -std=c++17)"
#endif
#if defined(__CUDACC__)
#error "tests/cuemu/cuemu.h is for the host-compiler build, not nvcc"
#endif

/* --- keywords --- */
#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __launch_bounds__(...)
#define __grid_constant__
#if defined(__SANITIZE_ADDRESS__)
/* GCC's ASan skips globals placed in a named section, so ASan builds keep shared arrays
 * as plain statics (with redzones: overruns are reported) and lose the per-block 0xFF
 * poisoning. */
#define __shared__ static __attribute__((aligned(16)))
#else
/* One section for all static shared memory, poisoned before every block (launch.c). */
#define __shared__ static __attribute__((section("cuemu_shared"), aligned(16)))
#endif

#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cublas_v2.h>
#include <cudnn.h>

#include "tests/cuemu/cuemu_abi.h"
#include "tests/cuemu/cuemu_api.h"

/* cuda_runtime.h declares this C++ overload for nvcc only. */
template <class T> inline cudaError_t cudaFuncSetAttribute(T *func, cudaFuncAttribute attr, int value)
{
    return ::cudaFuncSetAttribute(reinterpret_cast<const void *>(func), attr, value);
}

/* --- built-in variables (read-only) --- */
namespace cuemu {
inline const cuemu_builtins &builtins(const char *what)
{
    if (__builtin_expect(!cuemu_self, 0))
        cuemu_outside_kernel(what);
    return *cuemu_self;
}
} // namespace cuemu

#define threadIdx (::cuemu::builtins("threadIdx").thread_idx)
#define blockIdx (::cuemu::builtins("blockIdx").block_idx)
#define blockDim (::cuemu::builtins("blockDim").block_dim)
#define gridDim (::cuemu::builtins("gridDim").grid_dim)
#define warpSize 32

/* --- barriers --- */
namespace cuemu {
/* The opaque call stops the compiler from keeping shared values in registers across the
 * barrier; the memory clobbers also cover statics whose address never escapes. The call
 * site (for the divergence check) is the caller's, through __builtin_FILE/LINE. */
inline int barrier(cuemu_bar_kind kind, int pred, const char *file = __builtin_FILE(),
                   int line = __builtin_LINE())
{
    __asm__ volatile("" ::: "memory");
    int r = cuemu_syncthreads(kind, pred != 0, file, line);
    __asm__ volatile("" ::: "memory");
    return r;
}
} // namespace cuemu
#define __syncthreads() ((void)::cuemu::barrier(CUEMU_BAR_SYNC, 1))
#define __syncthreads_count(pred) ::cuemu::barrier(CUEMU_BAR_COUNT, (pred))
#define __syncthreads_and(pred) ::cuemu::barrier(CUEMU_BAR_AND, (pred))
#define __syncthreads_or(pred) ::cuemu::barrier(CUEMU_BAR_OR, (pred))

inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

#include "tests/cuemu/cuemu_warp.h"
#include "tests/cuemu/cuemu_atomic.h"
#include "tests/cuemu/cuemu_math.h"
#include "tests/cuemu/cuemu_launch.h"
#include "tests/cuemu/wmma.h"
#include "tests/cuemu/pipeline.h"

#endif
