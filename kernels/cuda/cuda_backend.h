/* The CUDA backend: the op table (kernels/ops.h) on an NVIDIA GPU, or on the CPU through
 * the emulation layer tests/cuemu/ (same sources compiled by g++, see CMakeLists.txt).
 *
 *   struct swin_cuda_backend *be;
 *   if (swin_cuda_backend_create(0, model, SWIN_F32, &be, &err)) ...;  // uploads model->flat once
 *   void *arena = swin_cuda_arena_alloc(be, plan_bytes, &err); // device memory, once
 *   swin_cuda_ops_for(SWIN_F32)->layernorm(be, out, in, gamma, beta); // volumes point into arena
 *   swin_cuda_arena_free(be, arena);
 *   swin_cuda_backend_free(be);
 *
 * Storage: SWIN_F32 keeps weights and activations in float32; SWIN_F16 (half mode) keeps
 * both in IEEE binary16 (the weights converted once at upload, round to nearest even),
 * with float32 arithmetic and accumulation in every kernel (statistics of the norms in
 * float32/double as in fp32 mode). Half mode halves the weight copy and the arena. The
 * op table of a storage type (swin_cuda_ops_for) carries it as act_dtype, and every
 * volume an op receives must have the backend's dtype.
 *
 * Pointers the ops receive:
 *   - every swin_vol.data and every `ws` is DEVICE memory (the arena);
 *   - every weight pointer is a HOST pointer into model->flat (float32), as the struct
 *     graph holds it; the backend reads element (host_ptr - model->flat) of its device
 *     copy. A
 *     weight pointer outside model->flat is an error (SWIN_ERR_ARG);
 *   - pack_input reads and unpack_output writes HOST float32 memory (synchronous copies).
 * Ops are asynchronous on the backend's stream; unpack_output and swin_cuda_synchronize
 * wait for them. *_ws queries are pure functions of the shapes and of the chunk budget
 * (below; data may be NULL).
 *
 * Besides weights and arena, the context holds a fixed device scratch of
 * swin_cuda_context_bytes(): the pack/unpack staging buffer and the instance-norm
 * reduction partials (ops never allocate). One context is used by one host thread at a
 * time. */
#ifndef SWIN_CUDA_BACKEND_H
#define SWIN_CUDA_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "kernels/ops.h"
#include "core/model.h"
#include "core/status.h"

struct swin_cuda_backend;

/* Selects `device`, creates the stream and scratch, uploads m->flat once as `dtype`
 * (swin_cuda_weight_bytes). SWIN_ERR_BACKEND with the CUDA error text when there is no
 * usable device; SWIN_ERR_NOMEM when the weights or scratch do not fit. */
swin_status swin_cuda_backend_create(int device, const struct swin_model *m, enum swin_dtype dtype,
                                     struct swin_cuda_backend **out, swin_error *err);
/* swin_cuda_backend_create in two steps. create_for_plan makes a host-only context: it
 * answers the *_ws queries (with the chunk budget below, from the environment too) and
 * touches no device; m must outlive it. start then does the rest of create (device,
 * stream, scratch, weight upload), once; after a failed start, only free. Ops and arenas
 * need a started context. */
swin_status swin_cuda_backend_create_for_plan(int device, const struct swin_model *m, enum swin_dtype dtype,
                                              struct swin_cuda_backend **out, swin_error *err);
swin_status swin_cuda_backend_start(struct swin_cuda_backend *be, swin_error *err);
/* Whether CUDA device `device` exists and the driver works, without creating a context's
 * buffers (what --backend auto plans with). */
bool swin_cuda_device_usable(int device);
/* Frees the weights, scratch and stream. NULL-safe. Arenas must be freed first. */
void swin_cuda_backend_free(struct swin_cuda_backend *be);

/* One cudaMalloc of `bytes` (at least 256-byte aligned) for the planned arena; NULL and
 * *err filled (SWIN_ERR_NOMEM) on failure. Free it with swin_cuda_arena_free. */
void *swin_cuda_arena_alloc(struct swin_cuda_backend *be, size_t bytes, swin_error *err);
void swin_cuda_arena_free(struct swin_cuda_backend *be, void *arena);

/* Device bytes of the weight copy of m in `dtype` (m->flat_bytes, or half of it). */
size_t swin_cuda_weight_bytes(const struct swin_model *m, enum swin_dtype dtype);
/* Device bytes of the context's fixed scratch (staging + reductions), the same for every
 * context: be may be NULL. */
size_t swin_cuda_context_bytes(const struct swin_cuda_backend *be);

/* Waits for every op issued so far; SWIN_ERR_BACKEND with the CUDA error if one failed. */
swin_status swin_cuda_synchronize(struct swin_cuda_backend *be, swin_error *err);

/* The backend's CUDA stream (a cudaStream_t), on which every op is issued: for timing
 * with CUDA events and for library calls (cuBLAS, cuDNN) ordered with the ops. The
 * backend owns it; it lives until swin_cuda_backend_free. */
void *swin_cuda_backend_stream(struct swin_cuda_backend *be);

/* The workspace budget of the chunked ops (swin_attention, swin_mlp, patch_merge), bytes:
 * each call runs over as many chunks as its *_ws workspace needs at this budget (always at
 * least one window, or 64 rows, per chunk; at most all of them). A backend starts with
 * SWIN_CUDA_CHUNK_BYTES_DEFAULT, or with the environment's SWIN_CUDA_CHUNK_BYTES=N[K|M|G]
 * when set at swin_cuda_backend_create (which refuses a value it cannot read or outside
 * [1, SWIN_CUDA_CHUNK_BYTES_MAX] with SWIN_ERR_ARG). The *_ws queries depend on it: plan
 * after changing it (an op handed a smaller workspace than its query refuses to run). A
 * context made for planning (swin_cuda_backend_create_for_plan, `swinrun plan`) reads the
 * environment too; queries without a context (be NULL) assume the default. Tests and device
 * checks use it to run the ops over several chunks; the results do not depend on it. */
#define SWIN_CUDA_CHUNK_BYTES_DEFAULT ((size_t)32 << 20)
#define SWIN_CUDA_CHUNK_BYTES_MAX ((size_t)1 << 40)
swin_status swin_cuda_backend_set_chunk_bytes(struct swin_cuda_backend *be, size_t bytes, swin_error *err);
size_t swin_cuda_backend_chunk_bytes(const struct swin_cuda_backend *be);

/* How many chunks the calls of a chunked op ran over since the backend was created: the
 * number of calls, and the fewest and most chunks of one call (all 0 before the first). */
enum swin_cuda_chunked_op { SWIN_CUDA_CHUNKED_ATTENTION, SWIN_CUDA_CHUNKED_MLP, SWIN_CUDA_CHUNKED_MERGE };
#define SWIN_CUDA_CHUNKED_OPS 3
struct swin_cuda_chunk_count {
    long long calls, fewest, most;
};
struct swin_cuda_chunk_count swin_cuda_backend_chunk_count(const struct swin_cuda_backend *be,
                                                           enum swin_cuda_chunked_op op);

/* The op tables: act_dtype SWIN_F32 (swin_cuda_ops) and SWIN_F16 (swin_cuda_half_ops). */
extern const struct swin_ops swin_cuda_ops;
extern const struct swin_ops swin_cuda_half_ops;
const struct swin_ops *swin_cuda_ops_for(enum swin_dtype dtype);

#ifdef __cplusplus
}
#endif

#endif
