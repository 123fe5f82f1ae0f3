/* Internals shared by the CUDA op files: the backend context, error recording, weight
 * pointer translation, workspace carving and the launch macros.
 *
 * Kernel rules (docs/cuda-emulator.md): launch only through
 * SWIN_LAUNCH(kernel, grid, block, smem, stream)(args...), dynamic shared memory only
 * through SWIN_DYN_SMEM(T, name), _sync warp intrinsics with exact masks, no inline PTX,
 * no spin-waits between blocks. */
#ifndef SWIN_CUDA_INTERNAL_CUH
#define SWIN_CUDA_INTERNAL_CUH

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "kernels/cuda/cuda_backend.h"

#include "kernels/cuda/swin_launch.h"

/* Alignment of every workspace slice, bytes. */
#define SWIN_CUDA_ALIGN 256
/* Floats of the pack/unpack staging buffer (8 MiB). */
#define SWIN_CUDA_STAGE_FLOATS (2u << 20)
/* Floats of each of the two pinned host buffers the input goes up through (4 MiB: a 96^3
 * cube of one channel in one copy). */
#define SWIN_CUDA_PINNED_FLOATS (1u << 20)
/* Instance norm: voxel partitions of the first reduction level, and channels per pass. */
#define SWIN_CUDA_RED_PARTS 512
#define SWIN_CUDA_RED_CH 256
/* Rows of the conv kernels' output tile, the unit of the instance-norm voxel parts. */
#define SWIN_CUDA_STATS_TILE 128

/* The idle clock (idle_clock.cu): a pool of timing events, the (end, begin) pairs whose
 * gap is still to be read, the event where the last piece of work ended, and the sum. */
#define SWIN_CUDA_IDLE_PAIRS 64
#define SWIN_CUDA_IDLE_EVENTS (2 * SWIN_CUDA_IDLE_PAIRS + 1)
struct swin_cuda_idle {
    cudaEvent_t ev[SWIN_CUDA_IDLE_EVENTS];
    int free_ev[SWIN_CUDA_IDLE_EVENTS], nfree;
    int pair[SWIN_CUDA_IDLE_PAIRS][2], npairs;
    int last_end;       /* event index, or -1 */
    double seconds;     /* gaps read so far */
    long long missed;   /* gaps not measured: more than SWIN_CUDA_IDLE_PAIRS pieces between waits */
};

struct swin_cuda_backend {
    int device;
    bool started;                 /* swin_cuda_backend_start selected the device: the
                                     buffers below are device memory (or NULL) */
    enum swin_dtype dtype;        /* storage of activations and of the weight copy */
    cudaStream_t stream;
    const char *host_flat;        /* model->flat (float32) */
    char *dev_flat;               /* its device copy, converted to dtype */
    size_t flat_bytes;            /* host bytes of model->flat */
    float *stage;                 /* SWIN_CUDA_STAGE_FLOATS, pack/unpack staging */
    /* pack_input's pinned host buffers (SWIN_CUDA_PINNED_FLOATS each), each refilled only
     * after its event, recorded behind the copy out of it, has completed: the host fills
     * one while the device runs on. */
    float *pinned[2];
    cudaEvent_t pinned_read[2];
    int pinned_next;
    struct swin_cuda_idle idle;
    double *red;                  /* (SWIN_CUDA_RED_PARTS, SWIN_CUDA_RED_CH) partial sums */
    double *mean;                 /* (6, SWIN_CUDA_RED_CH): instnorm_act's x, then its residual; groupnorm_act's
                                     group means and M2s of x, then of the residual */
    float *scale, *shift;         /* (2, SWIN_CUDA_RED_CH) */
    bool sync_check;              /* SWIN_CUDA_SYNC_CHECK: synchronise after every op */
    size_t chunk_bytes;           /* workspace budget of the chunked ops (cuda_backend.h) */
    struct swin_cuda_chunk_count chunks[SWIN_CUDA_CHUNKED_OPS];
    char err[SWIN_ERROR_MSG_MAX];
};

/* Records a message in be->err and returns status. */
int swin_cuda_fail(struct swin_cuda_backend *be, swin_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The device copy of host weight pointer `w` (NULL stays NULL): element (w - flat) of the
 * converted copy. Fails (returns false, message in be->err) when w is not inside the
 * uploaded flat buffer or `count` floats from w would run past its end. */
bool swin_cuda_weight_ptr(struct swin_cuda_backend *be, const char *op, const char *name, const float *w,
                          size_t count, const void **dev);
/* The same, typed with the backend's storage type T (float, or __half in half mode). */
template <class T>
inline bool swin_cuda_weight(struct swin_cuda_backend *be, const char *op, const char *name, const float *w,
                             size_t count, const T **dev)
{
    const void *p;
    const bool ok = swin_cuda_weight_ptr(be, op, name, w, count, &p);
    *dev = (const T *)p;
    return ok;
}

/* The idle clock: a piece of the device's work begins (pack_input, ring_finish) or ends
 * (after unpack_output's copies, ring_add, ring_finish's copies); collect reads the gaps
 * once the host has waited for the stream (it has, after unpack_output and ring_finish). */
cudaError_t swin_cuda_idle_start(struct swin_cuda_backend *be);
void swin_cuda_idle_free(struct swin_cuda_backend *be);
void swin_cuda_idle_begin(struct swin_cuda_backend *be);
void swin_cuda_idle_end(struct swin_cuda_backend *be);
void swin_cuda_idle_collect(struct swin_cuda_backend *be);

/* Uploads `count` host floats into the device array dst of the backend's dtype through
 * the staging buffer (converting to half in half mode), then waits. Used once, for the
 * weights, at backend creation (pack.cu). */
cudaError_t swin_cuda_upload(struct swin_cuda_backend *be, void *dst, const float *host, size_t count);

/* The chunked ops' workspace budget: be's, or the default without a context. */
static inline size_t swin_cuda_chunk_bytes(const void *be)
{
    return be ? ((const struct swin_cuda_backend *)be)->chunk_bytes : SWIN_CUDA_CHUNK_BYTES_DEFAULT;
}
/* Records that one call of op ran over `chunks` chunks (swin_cuda_backend_chunk_count). */
void swin_cuda_count_chunks(struct swin_cuda_backend *be, enum swin_cuda_chunked_op op, long long chunks);

/* Checks cudaGetLastError() after the launches of op; 0 or SWIN_ERR_BACKEND. A kernel's
 * fault reaches the host at a later synchronisation, blamed on whatever op meets it:
 * with be->sync_check (environment SWIN_CUDA_SYNC_CHECK=1 at backend creation) this
 * also synchronises the stream, so the message names the op that failed. The message
 * starts with op and its shapes (shape_fmt, e.g. "%d->%d k%d on %dx%dx%d"), formatted
 * only on failure. */
int swin_cuda_check_launch(struct swin_cuda_backend *be, const char *op, const char *shape_fmt, ...)
    __attribute__((format(printf, 3, 4)));

namespace swin_cuda {
/* Storage <-> float32 for the two storage types: every kernel is a template on the
 * storage type T (float or __half), loads with ldf, computes in float32 and stores with
 * stf (round to nearest even for __half). Each op's entry point picks the instantiation
 * from be->dtype. */
__device__ inline float ldf(const float *p) { return *p; }
__device__ inline float ldf(const __half *p) { return __half2float(*p); }
__device__ inline void stf(float *p, float v) { *p = v; }
__device__ inline void stf(__half *p, float v) { *p = __float2half_rn(v); }
} // namespace swin_cuda

static inline size_t swin_cuda_round(size_t bytes)
{
    return (bytes + SWIN_CUDA_ALIGN - 1) / SWIN_CUDA_ALIGN * SWIN_CUDA_ALIGN;
}
static inline char *swin_cuda_align_ptr(void *p)
{
    uintptr_t u = (uintptr_t)p;
    return (char *)((u + SWIN_CUDA_ALIGN - 1) / SWIN_CUDA_ALIGN * SWIN_CUDA_ALIGN);
}
static inline unsigned swin_cuda_blocks(long long n, int per_block)
{
    return (unsigned)((n + per_block - 1) / per_block);
}

/* Row layernorm launcher (layernorm.cu), used by layernorm, swin_mlp and patch_merge:
 * out[r*out_pitch + i] = LN(in[r*in_pitch + 0..c)) (* gamma + beta), r in [0, rows).
 * out may equal in (same pitch). gamma/beta are device pointers or NULL. T = float or __half. */
template <class T>
void swin_cuda_ln_rows(cudaStream_t s, T *out, int out_pitch, const T *in, int in_pitch, long long rows, int c,
                       const T *gamma, const T *beta);

/* Instance-norm statistics are kept per voxel part: `parts` parts of `chunk` voxels (the
 * last one shorter), chunk a whole number of SWIN_CUDA_STATS_TILE-row conv tiles, at most
 * SWIN_CUDA_RED_PARTS / 2 parts; e.g. 96^3 voxels: 6912 tiles, chunk 27 tiles = 3456
 * voxels, 256 parts. A statistics buffer of c channels is double [2][parts][c]: each
 * part's mean, then each part's M2 (sum of squared deviations from the part's mean). */
struct swin_cuda_parts {
    int parts;
    long long chunk;
};
static inline struct swin_cuda_parts swin_cuda_stats_parts(long long nvox)
{
    const long long tiles = (nvox + SWIN_CUDA_STATS_TILE - 1) / SWIN_CUDA_STATS_TILE,
                    per_part = (tiles + SWIN_CUDA_RED_PARTS / 2 - 1) / (SWIN_CUDA_RED_PARTS / 2),
                    chunk = per_part * SWIN_CUDA_STATS_TILE;
    return swin_cuda_parts{(int)((nvox + chunk - 1) / chunk), chunk};
}
/* A statistics buffer from the shapes of x, by one read of x (instnorm_act.cu). */
template <class T>
void swin_cuda_stats_of_volume(cudaStream_t s, const T *x, long long pitch, long long nvox, int c, double *stats);
/* A statistics buffer from the conv kernels' per-tile statistics tmean, tm2 (float
 * [ceil(M / SWIN_CUDA_STATS_TILE)][N]: mean and M2 of each tile's rows per column) of an
 * M x N output (conv_stats.cu). */
void swin_cuda_stats_of_tiles(cudaStream_t s, const float *tmean, const float *tm2, long long M, int N,
                              double *stats);

/* Op entry points (one file each), listed in swin_cuda_ops. */
extern "C" {
const char *swin_cuda_last_error(void *be);
int swin_cuda_pack_input(void *be, struct swin_vol out, const float *host_cdhw);
int swin_cuda_unpack_output(void *be, float *host_cdhw, struct swin_vol in);
int swin_cuda_copy(void *be, struct swin_vol out, struct swin_vol in);
int swin_cuda_conv3d(void *be, struct swin_vol out, void *stats, struct swin_vol in, const float *w,
                     const float *bias, int k, int stride, int pad, void *ws, size_t ws_bytes);
size_t swin_cuda_conv3d_ws(void *be, struct swin_vol out, struct swin_vol in, const float *w, int k, int stride,
                           int pad, bool stats);
size_t swin_cuda_conv3d_stats_bytes(void *be, struct swin_vol out);
int swin_cuda_conv_transpose2(void *be, struct swin_vol out, struct swin_vol in, const float *w);
int swin_cuda_instnorm_act(void *be, struct swin_vol x, const void *stats, bool normalize, const float *gamma,
                           const float *beta, const struct swin_residual *residual, bool lrelu);
int swin_cuda_groupnorm_act(void *be, struct swin_vol x, const void *stats, int groups, const float *gamma,
                            const float *beta, const struct swin_residual *residual, bool lrelu);
int swin_cuda_layernorm(void *be, struct swin_vol out, struct swin_vol in, const float *gamma, const float *beta);
int swin_cuda_swin_attention(void *be, struct swin_vol x, const struct swin_block_w *blk,
                             const struct swin_window_geom *g, void *ws, size_t ws_bytes);
size_t swin_cuda_swin_attention_ws(void *be, struct swin_vol x, const struct swin_window_geom *g);
int swin_cuda_swin_mlp(void *be, struct swin_vol x, const struct swin_block_w *blk, int hidden, void *ws,
                       size_t ws_bytes);
size_t swin_cuda_swin_mlp_ws(void *be, struct swin_vol x, int hidden);
int swin_cuda_patch_merge(void *be, struct swin_vol out, struct swin_vol in, const swin_merge_order order,
                          const float *norm_w, const float *norm_b, const float *red_w, void *ws, size_t ws_bytes);
size_t swin_cuda_patch_merge_ws(void *be, struct swin_vol out, struct swin_vol in);
int swin_cuda_device_idle(void *be, double *seconds, long long *missed);
size_t swin_cuda_ring_bytes(void *be, const struct swin_ring_geom *g);
int swin_cuda_ring_start(void *be, void *ring, const struct swin_ring_geom *g, const float *importance);
int swin_cuda_ring_add(void *be, void *ring, const struct swin_ring_geom *g, struct swin_vol logits,
                       const int64_t start[3]);
int swin_cuda_ring_finish(void *be, void *ring, const struct swin_ring_geom *g, int64_t plane, int64_t row_lo,
                          int64_t row_hi, void *labels, float *probs, long long *nonfinite);
}

#endif
