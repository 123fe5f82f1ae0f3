/* The C interface between the kernel-language header (cuemu.h, C++) and the emulator
 * library (C11). Kernels never include this directly; cuemu.h does.
 *
 * Execution model: a launch runs its blocks one after another on the calling OS thread;
 * inside a block every CUDA thread is a fiber. Barriers and warp collectives are the
 * only points where a fiber gives up the CPU. */
#ifndef CUEMU_ABI_H
#define CUEMU_ABI_H

#include <stddef.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The built-in variables of the running CUDA thread. */
struct cuemu_builtins {
    uint3 thread_idx;
    uint3 block_idx;
    dim3 block_dim;
    dim3 grid_dim;
};

/* Points at the running thread's built-ins; NULL outside a kernel. */
extern const struct cuemu_builtins *cuemu_self;

/* Reports a built-in read outside a kernel and aborts. */
void cuemu_outside_kernel(const char *what) __attribute__((noreturn));

/* Barrier kinds: __syncthreads and its three reducing forms. */
enum cuemu_bar_kind { CUEMU_BAR_SYNC, CUEMU_BAR_COUNT, CUEMU_BAR_AND, CUEMU_BAR_OR };

/* Waits until every live thread of the block has arrived at the same barrier.
 * Returns the reduction of pred over the block for COUNT/AND/OR (0 for SYNC). */
int cuemu_syncthreads(enum cuemu_bar_kind kind, int pred, const char *file, int line);

/* Warp collectives. Every lane in mask posts one of these and blocks; the last lane to
 * arrive computes every lane's result (`out`) and releases the others. */
enum cuemu_warp_kind {
    CUEMU_WARP_SYNC,       /* __syncwarp */
    CUEMU_WARP_SHFL_IDX,   /* param = srcLane */
    CUEMU_WARP_SHFL_UP,    /* param = delta */
    CUEMU_WARP_SHFL_DOWN,  /* param = delta */
    CUEMU_WARP_SHFL_XOR,   /* param = laneMask */
    CUEMU_WARP_BALLOT,     /* param = predicate */
    CUEMU_WARP_ANY,
    CUEMU_WARP_ALL,
    CUEMU_WARP_MATCH_ANY,  /* in = value (size 4 or 8) */
    CUEMU_WARP_MATCH_ALL,
    CUEMU_WARP_REDUCE,     /* in = 32-bit value, param = enum cuemu_reduce_op */
    CUEMU_WARP_CUSTOM      /* compute() does the work (wmma::mma_sync) */
};
enum cuemu_reduce_op {
    CUEMU_REDUCE_ADD, CUEMU_REDUCE_MIN_U, CUEMU_REDUCE_MAX_U, CUEMU_REDUCE_MIN_S,
    CUEMU_REDUCE_MAX_S, CUEMU_REDUCE_AND, CUEMU_REDUCE_OR, CUEMU_REDUCE_XOR
};

struct cuemu_warp_arg {
    enum cuemu_warp_kind kind;
    unsigned mask;
    const char *file;
    int line;
    const char *what;      /* the intrinsic's name, for reports */
    unsigned size;         /* operand bytes, at most 16 */
    int param;
    int width;             /* shuffles: 1, 2, 4, 8, 16 or 32 */
    union { unsigned char b[16]; unsigned long long q[2]; } in, out;
    /* CUSTOM only: lanes[i] is lane i's argument (NULL outside mask). Returns NULL, or
     * a message describing a kernel bug, which the emulator reports. */
    const char *(*compute)(struct cuemu_warp_arg *const lanes[32], unsigned mask);
    void *data;
};

void cuemu_warp_op(struct cuemu_warp_arg *a);

/* Lanes of the caller's warp that have not exited. An approximation: fibers cannot know
 * which lanes took the same branch, so code must not depend on it. */
unsigned cuemu_activemask(void);

/* Lane index (0..31) of the running thread. */
unsigned cuemu_lane_id(void);

/* The launch's dynamic shared memory (exact size, poisoned with 0xFF per block). */
void *cuemu_dynamic_smem(void);

/* Reports a kernel bug found by a header-side check (wmma preconditions), then aborts
 * or abandons the launch according to the detector mode. */
void cuemu_kernel_error(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Asynchronous copies (cuda_pipeline.h primitives, tests/cuemu/pipeline.h), per CUDA
 * thread: a copy of `size` bytes (4, 8 or 16, both pointers aligned to it) from global
 * src to shared dst, of which the last `zfill` bytes are zeros (src is not read for
 * them). The copy is performed at the wait that covers it; until then dst holds poison
 * (0xFF). commit closes the thread's open batch; wait_prior(n) performs, in issue
 * order, every copy of the batches older than the n most recently committed. */
void cuemu_async_copy(void *dst, const void *src, size_t size, size_t zfill, const char *file, int line);
void cuemu_async_commit(void);
void cuemu_async_wait_prior(size_t n, const char *file, int line);

/* One launch: body(ctx) is run by every CUDA thread of every block. */
struct cuemu_launch_desc {
    const void *kernel;       /* identity for cudaFuncSetAttribute */
    const char *name;
    dim3 grid, block;
    size_t smem;
    cudaStream_t stream;
    void (*body)(void *ctx);
    void *ctx;
};
/* Validates the configuration like the driver, runs the grid, records and returns the
 * error (also visible through cudaGetLastError). */
cudaError_t cuemu_launch(const struct cuemu_launch_desc *d);

/* wmma fragment layout: slot s of a fragment with E tile elements (E = 128 or 256)
 * holds tile element cuemu_wmma_slot_map(use, E)[s % E]. Identity by default; a random
 * permutation per use under CUEMU_WMMA_LAYOUT=scrambled:SEED. use: 0 = A, 1 = B, 2 = C. */
const unsigned short *cuemu_wmma_slot_map(int use, unsigned elements);

#ifdef __cplusplus
}
#endif
#endif
