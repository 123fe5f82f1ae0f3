/* The CUDA backend context: device selection, the one weight upload, the fixed scratch,
 * the arena allocation, error recording and the op table. */
#include "kernels/cuda/cuda_internal.cuh"
#include "core/settings.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int swin_cuda_fail(struct swin_cuda_backend *be, swin_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(be->err, sizeof be->err, fmt, ap);
    va_end(ap);
    return (int)status;
}

bool swin_cuda_weight_ptr(struct swin_cuda_backend *be, const char *op, const char *name, const float *w,
                          size_t count, const void **dev)
{
    *dev = NULL;
    if (!w) return true;
    const char *p = (const char *)w;
    if (p < be->host_flat || p >= be->host_flat + be->flat_bytes ||
        (size_t)(be->host_flat + be->flat_bytes - p) < count * sizeof(float)) {
        swin_cuda_fail(be, SWIN_ERR_ARG,
                       "%s: weight %s (%zu floats at %p) is not inside the uploaded model weights: pass pointers "
                       "into the swin_model the backend was created with",
                       op, name, count, (const void *)w);
        return false;
    }
    const size_t elem = (size_t)(w - (const float *)be->host_flat);
    *dev = be->dev_flat + elem * swin_dtype_bytes(be->dtype);
    return true;
}

int swin_cuda_check_launch(struct swin_cuda_backend *be, const char *op, const char *shape_fmt, ...)
{
    cudaError_t e = cudaGetLastError();
    const bool at_launch = e != cudaSuccess;
    if (!at_launch && be->sync_check) e = cudaStreamSynchronize(be->stream);
    if (e == cudaSuccess) return 0;
    char shape[160];
    va_list ap;
    va_start(ap, shape_fmt);
    vsnprintf(shape, sizeof shape, shape_fmt, ap);
    va_end(ap);
    if (be->sync_check)
        return swin_cuda_fail(be, SWIN_ERR_BACKEND, "%s %s: kernel %s: %s (%s)", op, shape,
                              at_launch ? "launch failed" : "failed (found by SWIN_CUDA_SYNC_CHECK's synchronisation)",
                              cudaGetErrorName(e), cudaGetErrorString(e));
    return swin_cuda_fail(be, SWIN_ERR_BACKEND,
                          "%s %s: kernel launch failed: %s (%s); a fault of an earlier op's kernel also surfaces "
                          "here: rerun with SWIN_CUDA_SYNC_CHECK=1 to name the op that failed",
                          op, shape, cudaGetErrorName(e), cudaGetErrorString(e));
}

extern "C" const char *swin_cuda_last_error(void *bev)
{
    return ((struct swin_cuda_backend *)bev)->err;
}

void swin_cuda_count_chunks(struct swin_cuda_backend *be, enum swin_cuda_chunked_op op, long long chunks)
{
    struct swin_cuda_chunk_count *c = &be->chunks[op];
    if (!c->calls || chunks < c->fewest) c->fewest = chunks;
    if (chunks > c->most) c->most = chunks;
    c->calls++;
}

extern "C" struct swin_cuda_chunk_count swin_cuda_backend_chunk_count(const struct swin_cuda_backend *be,
                                                                      enum swin_cuda_chunked_op op)
{
    return be->chunks[op];
}

extern "C" swin_status swin_cuda_backend_set_chunk_bytes(struct swin_cuda_backend *be, size_t bytes, swin_error *err)
{
    if (bytes < 1 || bytes > SWIN_CUDA_CHUNK_BYTES_MAX)
        return swin_error_set(err, SWIN_ERR_ARG,
                              "CUDA chunk budget of %zu bytes: it must be 1 byte to 1 TiB (default 32 MiB)", bytes);
    be->chunk_bytes = bytes;
    return SWIN_OK;
}

extern "C" size_t swin_cuda_backend_chunk_bytes(const struct swin_cuda_backend *be)
{
    return swin_cuda_chunk_bytes(be);
}

/* SWIN_CUDA_CHUNK_BYTES=N[K|M|G] (binary units) from the environment, if set. */
static swin_status chunk_bytes_from_env(struct swin_cuda_backend *be, swin_error *err)
{
    const char *s = getenv("SWIN_CUDA_CHUNK_BYTES");
    if (!s) return SWIN_OK;
    char *end = NULL;
    errno = 0;
    const unsigned long long v = s[0] >= '0' && s[0] <= '9' ? strtoull(s, &end, 10) : 0;
    int shift = end ? 0 : -1;   /* the unit's power of two; -1: not a number or a unit */
    if (end && end[0]) {
        const char u = (char)(end[0] | 32);
        shift = end[1] ? -1 : u == 'k' ? 10 : u == 'm' ? 20 : u == 'g' ? 30 : -1;
    }
    if (shift < 0 || errno || !v || v > (SWIN_CUDA_CHUNK_BYTES_MAX >> shift))
        return swin_error_set(err, SWIN_ERR_ARG,
                              "SWIN_CUDA_CHUNK_BYTES=\"%.40s\": give the chunked ops' workspace budget as a whole "
                              "number of bytes, optionally with K, M or G, from 1 to 1 TiB (default 32M), or unset it",
                              s);
    return swin_cuda_backend_set_chunk_bytes(be, (size_t)v << shift, err);
}

static void cuda_set_error(void *bev, const char *msg)
{
    swin_cuda_fail((struct swin_cuda_backend *)bev, SWIN_OK, "%s", msg);
}

static swin_status cuda_error(swin_error *err, swin_status st, const char *what, cudaError_t e)
{
    return swin_error_set(err, st, "CUDA backend: %s failed: %s (%s)", what, cudaGetErrorName(e),
                          cudaGetErrorString(e));
}

/* Device bytes of a float32 weight buffer of flat_bytes stored as dtype. */
static size_t weight_bytes(size_t flat_bytes, enum swin_dtype dtype)
{
    return flat_bytes / sizeof(float) * swin_dtype_bytes(dtype);
}

extern "C" bool swin_cuda_device_usable(int device)
{
    int count = 0;
    return cudaGetDeviceCount(&count) == cudaSuccess && device >= 0 && device < count;
}

extern "C" swin_status swin_cuda_backend_create_for_plan(int device, const struct swin_model *m, enum swin_dtype dtype,
                                                         struct swin_cuda_backend **out, swin_error *err)
{
    if (!out) return swin_error_set(err, SWIN_ERR_ARG, "swin_cuda_backend_create: out is NULL");
    *out = NULL;
    if (!m || !m->flat || !m->flat_bytes)
        return swin_error_set(err, SWIN_ERR_ARG, "swin_cuda_backend_create: model has no weight buffer");
    if (dtype != SWIN_F32 && dtype != SWIN_F16)
        return swin_error_set(err, SWIN_ERR_ARG, "swin_cuda_backend_create: storage type %d unknown", (int)dtype);
    struct swin_cuda_backend *be = (struct swin_cuda_backend *)calloc(1, sizeof *be);
    if (!be) return swin_error_set(err, SWIN_ERR_NOMEM, "swin_cuda_backend_create: out of host memory");
    be->device = device;
    be->dtype = dtype;
    const char *sync_check = getenv("SWIN_CUDA_SYNC_CHECK");
    be->sync_check = sync_check && *sync_check && strcmp(sync_check, "0") != 0;
    be->host_flat = (const char *)m->flat;
    be->flat_bytes = m->flat_bytes;
    be->chunk_bytes = SWIN_CUDA_CHUNK_BYTES_DEFAULT;
    swin_status st = chunk_bytes_from_env(be, err);
    if (st) {
        free(be);
        return st;
    }
    *out = be;
    return SWIN_OK;
}

/* The pinned buffers of pack_input and their events. */
static void pinned_free(struct swin_cuda_backend *be)
{
    for (int b = 0; b < 2; b++) {
        if (be->pinned[b]) cudaFreeHost(be->pinned[b]);
        if (be->pinned_read[b]) cudaEventDestroy(be->pinned_read[b]);
        be->pinned[b] = NULL;
        be->pinned_read[b] = NULL;
    }
}

static cudaError_t pinned_start(struct swin_cuda_backend *be)
{
    cudaError_t e = cudaSuccess;
    for (int b = 0; b < 2 && e == cudaSuccess; b++)
        if ((e = cudaMallocHost((void **)&be->pinned[b], SWIN_CUDA_PINNED_FLOATS * sizeof(float))) == cudaSuccess)
            e = cudaEventCreateWithFlags(&be->pinned_read[b], cudaEventDisableTiming);
    return e;
}

extern "C" swin_status swin_cuda_backend_start(struct swin_cuda_backend *be, swin_error *err)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0)
        return swin_error_set(err, SWIN_ERR_BACKEND,
                              "no CUDA device is available (%s): use the CPU backend (%s cpu)",
                              e != cudaSuccess ? cudaGetErrorString(e) : "device count is 0",
                              swin_setting(SWIN_SETTING_BACKEND));
    if (be->device < 0 || be->device >= count)
        return swin_error_set(err, SWIN_ERR_ARG, "CUDA device %d does not exist (this machine has %d)", be->device,
                              count);
    e = cudaSetDevice(be->device);
    if (e != cudaSuccess) return cuda_error(err, SWIN_ERR_BACKEND, "cudaSetDevice", e);
    be->started = true;
    swin_status st = SWIN_OK;
    const char *what = NULL;
    if ((e = cudaStreamCreateWithFlags(&be->stream, cudaStreamNonBlocking)) != cudaSuccess) {
        what = "cudaStreamCreate";
        st = e == cudaErrorMemoryAllocation ? SWIN_ERR_NOMEM : SWIN_ERR_BACKEND;
    } else if ((e = cudaMalloc((void **)&be->stage, SWIN_CUDA_STAGE_FLOATS * sizeof(float))) != cudaSuccess ||
               (e = cudaMalloc((void **)&be->red, (size_t)SWIN_CUDA_RED_PARTS * SWIN_CUDA_RED_CH * sizeof(double))) !=
                   cudaSuccess ||
               (e = cudaMalloc((void **)&be->mean, 6 * SWIN_CUDA_RED_CH * sizeof(double))) != cudaSuccess ||
               (e = cudaMalloc((void **)&be->scale, 2 * SWIN_CUDA_RED_CH * sizeof(float))) != cudaSuccess ||
               (e = cudaMalloc((void **)&be->shift, 2 * SWIN_CUDA_RED_CH * sizeof(float))) != cudaSuccess) {
        what = "cudaMalloc of the backend scratch";
        st = SWIN_ERR_NOMEM;
    } else if ((e = cudaMalloc((void **)&be->dev_flat, weight_bytes(be->flat_bytes, be->dtype))) != cudaSuccess) {
        what = "cudaMalloc of the model weights";
        st = SWIN_ERR_NOMEM;
    } else if ((e = swin_cuda_upload(be, be->dev_flat, (const float *)be->host_flat, be->flat_bytes / sizeof(float))) !=
               cudaSuccess) {
        what = "upload of the model weights";   /* (through the stage in half mode) */
        st = e == cudaErrorMemoryAllocation ? SWIN_ERR_NOMEM : SWIN_ERR_BACKEND;
    }
    if (!st && (e = pinned_start(be)) != cudaSuccess) {
        what = "cudaMallocHost of the input's two 4 MiB pinned upload buffers";
        st = SWIN_ERR_NOMEM;
    }
    if (!st && (e = swin_cuda_idle_start(be)) != cudaSuccess) {
        what = "cudaEventCreate of the idle clock's events";
        st = e == cudaErrorMemoryAllocation ? SWIN_ERR_NOMEM : SWIN_ERR_BACKEND;
    }
    return st ? cuda_error(err, st, what, e) : SWIN_OK;
}

extern "C" swin_status swin_cuda_backend_create(int device, const struct swin_model *m, enum swin_dtype dtype,
                                                struct swin_cuda_backend **out, swin_error *err)
{
    swin_status st = swin_cuda_backend_create_for_plan(device, m, dtype, out, err);
    if (!st && (st = swin_cuda_backend_start(*out, err))) {
        swin_cuda_backend_free(*out);
        *out = NULL;
    }
    return st;
}

extern "C" void swin_cuda_backend_free(struct swin_cuda_backend *be)
{
    if (!be) return;
    if (be->started) {
        if (be->stream) cudaStreamSynchronize(be->stream);
        cudaFree(be->dev_flat);
        cudaFree(be->stage);
        cudaFree(be->red);
        cudaFree(be->mean);
        cudaFree(be->scale);
        cudaFree(be->shift);
        pinned_free(be);
        swin_cuda_idle_free(be);
        if (be->stream) cudaStreamDestroy(be->stream);
    }
    free(be);
}

extern "C" void *swin_cuda_arena_alloc(struct swin_cuda_backend *be, size_t bytes, swin_error *err)
{
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes ? bytes : SWIN_CUDA_ALIGN);
    if (e != cudaSuccess) {
        char fp16[80] = "";
        if (be->dtype != SWIN_F16) snprintf(fp16, sizeof fp16, " or %s fp16", swin_setting(SWIN_SETTING_PRECISION));
        swin_error_set(err, SWIN_ERR_NOMEM,
                       "out of device memory for the %.1f MiB activation arena (%s): use a smaller cube (%s)%s",
                       bytes / (1024.0 * 1024.0), cudaGetErrorString(e), swin_setting(SWIN_SETTING_CUBE), fp16);
        return NULL;
    }
    return p;
}

extern "C" void swin_cuda_arena_free(struct swin_cuda_backend *be, void *arena)
{
    if (!arena) return;
    cudaStreamSynchronize(be->stream);
    cudaFree(arena);
}

extern "C" size_t swin_cuda_weight_bytes(const struct swin_model *m, enum swin_dtype dtype)
{
    return weight_bytes(m->flat_bytes, dtype);
}

extern "C" size_t swin_cuda_context_bytes(const struct swin_cuda_backend *be)
{
    return SWIN_CUDA_STAGE_FLOATS * sizeof(float) + (size_t)SWIN_CUDA_RED_PARTS * SWIN_CUDA_RED_CH * sizeof(double) +
           2 * SWIN_CUDA_RED_CH * (3 * sizeof(double) + 2 * sizeof(float));
}

extern "C" swin_status swin_cuda_synchronize(struct swin_cuda_backend *be, swin_error *err)
{
    cudaError_t e = cudaStreamSynchronize(be->stream);
    if (e != cudaSuccess)
        return cuda_error(err, SWIN_ERR_BACKEND, "a kernel (rerun with SWIN_CUDA_SYNC_CHECK=1 to name its op)", e);
    return SWIN_OK;
}

extern "C" void *swin_cuda_backend_stream(struct swin_cuda_backend *be)
{
    return (void *)be->stream;
}

/* The two op tables share every entry point (each op picks its kernels from be->dtype);
 * they differ in the activation storage type the planner sizes tensors with. */
#define SWIN_CUDA_OP_ENTRIES                                                                                         \
    .last_error = swin_cuda_last_error, .set_error = cuda_set_error, .pack_input = swin_cuda_pack_input,           \
    .unpack_output = swin_cuda_unpack_output, .copy = swin_cuda_copy, .conv3d = swin_cuda_conv3d,                  \
    .conv3d_ws = swin_cuda_conv3d_ws, .conv3d_stats_bytes = swin_cuda_conv3d_stats_bytes,                          \
    .conv3d_normed_input = NULL, /* the runtime runs instnorm_act, then conv3d */                                  \
    .conv_transpose2 = swin_cuda_conv_transpose2,                                                                  \
    .instnorm_act = swin_cuda_instnorm_act,                                                                        \
    .groupnorm_act = swin_cuda_groupnorm_act,                                                                      \
    .instnorm_act_narrow_shortcut = NULL, /* the runtime runs the shortcut conv3d, then instnorm_act */            \
    .instnorm_act_conv1x1 = NULL,         /* the runtime runs instnorm_act, then conv3d k 1 */                     \
    .layernorm = swin_cuda_layernorm,                                                                              \
    .swin_attention = swin_cuda_swin_attention, .swin_attention_ws = swin_cuda_swin_attention_ws,                  \
    .swin_mlp = swin_cuda_swin_mlp, .swin_mlp_ws = swin_cuda_swin_mlp_ws, .patch_merge = swin_cuda_patch_merge,   \
    .patch_merge_ws = swin_cuda_patch_merge_ws, .ring_bytes = swin_cuda_ring_bytes,                             \
    .ring_start = swin_cuda_ring_start, .ring_add = swin_cuda_ring_add, .ring_finish = swin_cuda_ring_finish,     \
    .device_idle = swin_cuda_device_idle

extern "C" const struct swin_ops swin_cuda_ops = {.name = "cuda", .act_dtype = SWIN_F32, SWIN_CUDA_OP_ENTRIES};
extern "C" const struct swin_ops swin_cuda_half_ops = {.name = "cuda-half", .act_dtype = SWIN_F16,
                                                       SWIN_CUDA_OP_ENTRIES};

extern "C" const struct swin_ops *swin_cuda_ops_for(enum swin_dtype dtype)
{
    return dtype == SWIN_F16 ? &swin_cuda_half_ops : &swin_cuda_ops;
}
