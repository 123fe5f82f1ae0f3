/* What a context runs and the memory it takes: the backend and precision asked for and the
 * plan (swin_plan_info) the runtime fills; here, at the bottom, because the segmentation
 * report (core/segment_report.h) carries the plan. */
#ifndef SWIN_PLAN_INFO_H
#define SWIN_PLAN_INFO_H

#include <stddef.h>

typedef enum swin_backend {
    SWIN_BACKEND_CPU = 0,
    SWIN_BACKEND_CUDA = 1,
    SWIN_BACKEND_AUTO = 2,  /* CUDA when a GPU is usable, else CPU (the default) */
} swin_backend;

/* Storage and arithmetic of a context (swin_context_params.precision):
 *   FP32  float32 weights and activations, float32 arithmetic (both backends).
 *   FP16  CUDA only: weights and activations stored as float16, float32 arithmetic, half
 *         the device bytes; logits agree with float32 to about 1e-2 relative. A run whose
 *         float16 activations overflow (non-finite logits) fails with SWIN_ERR_BACKEND.
 *         The CPU backend refuses it; AUTO falling back to the CPU runs FP32.
 *   BF16  CPU only: the GEMM and convolution weights stored as bfloat16 (about half the
 *         weight bytes), their inputs rounded to bfloat16 (round to nearest even), products
 *         accumulated in float32; the convs reading the image (patch embedding, encoder1's
 *         first and 1x1x1 convs) and the output conv stay float32 with unrounded inputs
 *         (under 0.1 % of the weight bytes); norms, softmax, GELU, biases, the residual
 *         stream and the logits stay float32, and activations are stored as float32. The 3x3x3
 *         convs that run Winograd or per-tap GEMMs keep their input float32 and widen the
 *         weights. Runs on every CPU: with AVX512_BF16 on vdpbf16ps, elsewhere the bfloat16
 *         values widened to float32 for FMA (the same numerics up to summation order). The
 *         CUDA backend refuses it; AUTO picks the CPU for it. */
typedef enum swin_precision {
    SWIN_PRECISION_FP32 = 0,
    SWIN_PRECISION_FP16 = 1,
    SWIN_PRECISION_BF16 = 2,
} swin_precision;

/* Exact memory of one context, known before anything is allocated. */
typedef struct swin_plan_info {
    int cube[3];
    swin_backend backend;   /* the backend the plan is for: CPU or CUDA, never AUTO */
    swin_precision precision; /* what the context runs (AUTO falling back to the CPU: FP32) */
    const char *precision_note; /* how the CPU runs BF16 (which kernels, and why); "" otherwise */
    size_t weight_bytes;    /* weights (the backend's copy, in the precision's storage) */
    size_t arena_bytes;     /* every activation and op workspace, one allocation */
    size_t lower_bound;     /* largest sum of simultaneously live bytes in the plan */
    size_t context_bytes;   /* the backend's fixed scratch (CUDA: staging, reductions; CPU: 0) */
    size_t total_bytes;     /* weight_bytes + arena_bytes + context_bytes (+ ring_bytes): all device
                               (or host) bytes */
    int tensors;            /* activations and workspaces planned */
    int cpu_threads;        /* CPU backend: the threads its ops run on (also the pipeline's
                               around the forward pass); CUDA: 0 (the pipeline takes every core) */
    const char *cpu_isa;    /* CPU backend: the instruction-set level its kernels run at ("avx512bf16",
                               "avx512", "avx2", "baseline"); "" for CUDA */
    const char *cpu_isa_best; /* CPU backend: the best level this CPU has (cpu_isa is lower when capped) */
    char backend_reason[160]; /* why this backend, e.g. "auto: no usable CUDA device (...)" */
    /* A plan for a volume (swin_segment_plan): the grid its cubes slide over, and the device
     * bytes of the ring the CUDA backend blends them in (the open planes of the cubes' logits,
     * float32, and one plane of results; pipeline/sliding.h), counted in total_bytes. 0 for a
     * plan of the cube alone, and on the CPU backend (it blends on the host). */
    long long grid[3];
    size_t ring_bytes;
} swin_plan_info;

#endif
