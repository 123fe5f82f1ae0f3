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
 * depend on the shapes and on this backend's thread count). A plan needs no pool:
 * swin_cpu_backend_create_for_plan makes a context that answers the *_ws queries, and
 * swin_cpu_backend_start starts its pool when it is to run (swin_cpu_backend_create is the
 * two). One backend context must be used by one caller thread at a time; two contexts may
 * run concurrently.
 *
 * BLAS: the GEMMs go to OpenBLAS, which is set to one thread per call at create time
 * (openblas_set_num_threads(1), process-wide) because the pool already splits the work. */
#ifndef SWIN_CPU_BACKEND_H
#define SWIN_CPU_BACKEND_H

#include <stdbool.h>

#include "kernels/ops.h"
#include "core/status.h"

struct swin_cpu_backend;

/* threads: worker count including the calling thread; 0 = all online cores. */
swin_status swin_cpu_backend_create(int threads, struct swin_cpu_backend **out, swin_error *err);
/* The context without its pool: it answers the *_ws queries and the getters and setters
 * below, starts no thread and allocates nothing but itself. Its ops run only once
 * swin_cpu_backend_start has started the pool (once; after a failed start, only free). */
swin_status swin_cpu_backend_create_for_plan(int threads, struct swin_cpu_backend **out, swin_error *err);
swin_status swin_cpu_backend_start(struct swin_cpu_backend *be, swin_error *err);
/* Joins the pool and frees the context. NULL-safe. */
void swin_cpu_backend_free(struct swin_cpu_backend *be);
/* Threads the backend runs ops on (including the caller). */
int swin_cpu_backend_threads(const struct swin_cpu_backend *be);

/* Instruction sets the kernels may use (kernels/cpu/README.md). By default the backend uses the
 * best the CPU has:
 *   AVX512_BF16  AVX512's kernels, and the bfloat16 weight GEMMs and attention products on
 *                vdpbf16ps
 *   AVX512       (F, BW, DQ, VL) every kernel of AVX2 at 16 lanes: Winograd, the per-tap and the
 *                implicit-GEMM convs, the weight GEMMs, the attention head, softmax and GELU
 *   AVX2         (AVX2 + FMA) conv3d as Winograd (3x3x3 stride-1 convs: F(4x4x4, 3x3x3) on grids
 *                of at least 24 per axis, F(2x2x2, 3x3x3) on grids of 6 to 23), per-tap GEMMs
 *                (small grids) or an implicit GEMM; the project's own weight GEMMs (no
 *                OpenBLAS); the fused attention head; 8-lane rows
 *   BASELINE     conv3d: im2col + OpenBLAS sgemm (OpenBLAS picks its own kernels at run time);
 *                softmax and GELU: 4-lane SSE2 vectors
 * Results agree across levels to fp32 rounding (different summation orders), not bit for bit. */
enum swin_cpu_simd {
    SWIN_CPU_SIMD_BASELINE = 0,
    SWIN_CPU_SIMD_AVX2 = 1,
    SWIN_CPU_SIMD_AVX512 = 2,
    SWIN_CPU_SIMD_AVX512_BF16 = 3,
};
/* The best level this CPU supports (cpuid). */
enum swin_cpu_simd swin_cpu_simd_of_cpu(void);
/* Caps the level at `max` (tests run every level); returns the level now in use, which is
 * lower than max where the CPU lacks it. */
enum swin_cpu_simd swin_cpu_backend_set_simd(struct swin_cpu_backend *be, enum swin_cpu_simd max);
/* The level's name ("baseline", "avx2", "avx512", "avx512bf16"), and the level of a name
 * (false if none). */
const char *swin_cpu_simd_name(enum swin_cpu_simd level);
bool swin_cpu_simd_parse(const char *name, enum swin_cpu_simd *level);

/* Which conv3d kernel runs at the AVX2 and AVX-512 levels: by shape (the default: the
 * implicit-GEMM kernel, the per-tap GEMMs on small grids, or OpenBLAS where it was measured
 * faster, conv3d.c), or one kernel on every shape (tests, so that each is checked on every
 * shape): the implicit GEMM, or the per-tap GEMMs (float32 weights; bfloat16 ones keep their
 * im2col path). */
enum swin_cpu_conv_choice {
    SWIN_CPU_CONV_BY_SHAPE = 0,
    SWIN_CPU_CONV_IMPLICIT_ONLY = 1,
    SWIN_CPU_CONV_TAPS_ONLY = 2,
};
void swin_cpu_backend_set_conv_choice(struct swin_cpu_backend *be, enum swin_cpu_conv_choice choice);

/* Precision BF16 (core/plan_info.h): every GEMM weight the ops receive (conv3d and
 * conv_transpose2 w, qkv_w, proj_w, fc1_w, fc2_w, patch_merge red_w) whose address lies in
 * [lo, lo + bytes) is read as bfloat16 (kernels/cpu/model_bf16.h puts a model copy's bfloat16
 * tensors there) and its GEMM rounds the other operand to bfloat16 and accumulates in
 * float32 (gemm_bf16.h: vdpbf16ps at the AVX512_BF16 level, else bfloat16 widened for FMA).
 * Weights outside the range run float32 GEMMs on unrounded inputs. At the AVX512_BF16 level a
 * block whose qkv weight is bfloat16 also runs QK^T and PV in bfloat16 (attn_avx512bf16.c).
 * Norms, softmax, GELU and biases stay float32. The Winograd 3x3x3 convs and
 * the per-tap GEMMs widen bfloat16 weights exactly and keep their input float32; the other
 * convs run im2col + the bfloat16 GEMM (conv3d_ws learns the weights' precision from w).
 * Default: no bfloat16 weights. */
void swin_cpu_backend_set_bf16(struct swin_cpu_backend *be, const void *lo, size_t bytes);
/* The backend will hold bfloat16 weights (precision BF16) though their range is not set yet:
 * a plan made before the bfloat16 copy exists, on the float32 weights. From now on the
 * workspace queries whose kernel depends on the weights' precision (conv3d_ws) return the
 * larger of the float32 and the bfloat16 kernel's workspace. */
void swin_cpu_backend_plan_bf16(struct swin_cpu_backend *be);
/* What BF16 runs on this CPU, for the plan ("bfloat16 widened to float32, AVX2 FMA ..."). */
const char *swin_cpu_bf16_note(const struct swin_cpu_backend *be);

/* The kernel conv3d runs for these arguments, in words ("Winograd F(2x2x2,3x3x3)",
 * "implicit GEMM avx2", "im2col + sgemm", "1x1 sgemm", "1x1 AVX2 GEMM", "im2col + bf16 GEMM"):
 * the same choice swin_cpu_ops.conv3d makes (profiles label their rows with it). */
const char *swin_cpu_conv3d_kernel(const struct swin_cpu_backend *be, struct swin_vol out, struct swin_vol in,
                                   const float *w, int k, int stride, int pad);

/* Thread-seconds the Winograd convs spent in each phase, added up over every call and
 * thread while set (bench/ops/profile_cpu_forward.c): the weight transform, the input
 * transform, the GEMMs and the output transform (with the bias and the store). */
struct swin_cpu_wino_phases {
    double weights_s, input_s, gemm_s, output_s;
};
/* Starts adding to *p (NULL stops). Timing costs a clock read per tile block and phase. */
void swin_cpu_backend_set_wino_phases(struct swin_cpu_backend *be, struct swin_cpu_wino_phases *p);

extern const struct swin_ops swin_cpu_ops;

#endif
