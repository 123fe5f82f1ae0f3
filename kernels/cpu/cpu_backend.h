/* The CPU backend: the reference implementation of the op table (kernels/ops.h) and the
 * fallback for machines without a GPU.
 *
 *   struct swin_cpu_backend *be;
 *   if (swin_cpu_backend_create(0, &be, &err)) ...;          // 0 threads = all cores
 *   swin_cpu_ops.layernorm(be, out, in, gamma, beta);
 *   swin_cpu_backend_free(be);
 *
 * The backend owns a persistent thread pool created here; ops never create threads and
 * never allocate (scratch comes from the caller's `ws`, sized by the *_ws queries, which
 * depend on the shapes and on this backend's thread count). One backend context must be
 * used by one caller thread at a time; two contexts may run concurrently.
 *
 * BLAS: the GEMMs go to OpenBLAS, which is set to one thread per call at create time
 * (openblas_set_num_threads(1), process-wide) because the pool already splits the work. */
#ifndef SWIN_CPU_BACKEND_H
#define SWIN_CPU_BACKEND_H

#include "kernels/ops.h"
#include "runtime/status.h"

struct swin_cpu_backend;

/* threads: worker count including the calling thread; 0 = all online cores. */
swin_status swin_cpu_backend_create(int threads, struct swin_cpu_backend **out, swin_error *err);
/* Joins the pool and frees the context. NULL-safe. */
void swin_cpu_backend_free(struct swin_cpu_backend *be);
/* Threads the backend runs ops on (including the caller). */
int swin_cpu_backend_threads(const struct swin_cpu_backend *be);

/* Where the CPU has AVX-512F, conv3d runs an implicit-GEMM kernel (elsewhere im2col +
 * OpenBLAS), and the attention softmax and the MLP's GELU run 16-lane versions (elsewhere
 * 4 lanes). on = false forces the portable paths (tests run both); on = true selects the
 * AVX-512 kernels only if the CPU supports them. Returns whether they are in use. */
bool swin_cpu_backend_use_avx512(struct swin_cpu_backend *be, bool on);

extern const struct swin_ops swin_cpu_ops;

#endif
