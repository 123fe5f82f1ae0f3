/* The CUDA backend behind the backend interface: float32, or float16 storage (the half op
 * table); a host-only context until start opens the device and uploads the weights; the
 * arena in device memory. */
#include "kernels/cuda/cuda_iface.h"

#include "kernels/cuda/cuda_backend.h"

static bool cuda_supports_precision(enum swin_numerics n)
{
    return n == SWIN_NUMERICS_FP32 || n == SWIN_NUMERICS_FP16;
}

static bool cuda_usable(int device)
{
    return swin_cuda_device_usable(device);
}

static swin_status cuda_create(const struct swin_backend_params *p, struct swin_backend_inst *b, swin_error *err)
{
    const enum swin_dtype dtype = p->numerics == SWIN_NUMERICS_FP16 ? SWIN_F16 : SWIN_F32;
    struct swin_cuda_backend *cuda = NULL;
    swin_status st = swin_cuda_backend_create_for_plan(p->device, p->model, dtype, &cuda, err);
    if (st) return st;
    *b = (struct swin_backend_inst){
        .params = *p,
        .be = cuda,
        .ops = swin_cuda_ops_for(dtype),
        .model = p->model,
        .weight_bytes = swin_cuda_weight_bytes(p->model, dtype),
        .context_bytes = swin_cuda_context_bytes(cuda),
        .precision_note = "",
    };
    return SWIN_OK;
}

static swin_status cuda_start(struct swin_backend_inst *b, swin_error *err)
{
    return swin_cuda_backend_start(b->be, err);
}

static void cuda_free(struct swin_backend_inst *b)
{
    swin_cuda_backend_free(b->be);
    *b = (struct swin_backend_inst){0};
}

/* cudaMalloc returns 256-byte aligned addresses, every alignment the interface asks for. */
static swin_status cuda_arena_alloc(struct swin_backend_inst *b, size_t bytes, size_t align, void **arena,
                                    swin_error *err)
{
    *arena = swin_cuda_arena_alloc(b->be, bytes, err);
    return *arena ? SWIN_OK : SWIN_ERR_NOMEM;
}

static void cuda_arena_free(struct swin_backend_inst *b, void *arena)
{
    swin_cuda_arena_free(b->be, arena);
}

const struct swin_backend_iface swin_cuda_backend_iface = {
    .name = "cuda",
    .supports_precision = cuda_supports_precision,
    .usable = cuda_usable,
    .create = cuda_create,
    .start = cuda_start,
    .free = cuda_free,
    .arena_alloc = cuda_arena_alloc,
    .arena_free = cuda_arena_free,
};
