/* The device's idle time between its pieces of work (cuda_internal.cuh, swin_cuda_idle_*):
 * an event recorded where a piece ends, one where the next begins, and their gap summed
 * once the host has waited for the stream. A piece: a cube from its upload to its logits
 * (or their addition into the ring), and a ring's finish. The gap is the time the stream
 * had nothing queued: the host had not yet issued the next piece. */
#include "kernels/cuda/cuda_internal.cuh"

/* Events from the pool, or -1 when it is empty (the gap is then not measured). */
static int take(struct swin_cuda_idle *c)
{
    return c->nfree ? c->free_ev[--c->nfree] : -1;
}

static void give(struct swin_cuda_idle *c, int ev)
{
    if (ev >= 0) c->free_ev[c->nfree++] = ev;
}

void swin_cuda_idle_begin(struct swin_cuda_backend *be)
{
    struct swin_cuda_idle *c = &be->idle;
    if (c->last_end < 0) return;
    const int ev = c->npairs < SWIN_CUDA_IDLE_PAIRS ? take(c) : -1;
    if (ev < 0 || cudaEventRecord(c->ev[ev], be->stream) != cudaSuccess) {
        give(c, ev);
        give(c, c->last_end);
        c->missed++;
    } else {
        c->pair[c->npairs][0] = c->last_end;
        c->pair[c->npairs++][1] = ev;
    }
    c->last_end = -1;
}

void swin_cuda_idle_end(struct swin_cuda_backend *be)
{
    struct swin_cuda_idle *c = &be->idle;
    give(c, c->last_end);
    c->last_end = take(c);
    if (c->last_end >= 0 && cudaEventRecord(c->ev[c->last_end], be->stream) != cudaSuccess) {
        give(c, c->last_end);
        c->last_end = -1;
    }
}

void swin_cuda_idle_collect(struct swin_cuda_backend *be)
{
    struct swin_cuda_idle *c = &be->idle;
    for (int i = 0; i < c->npairs; i++) {
        float ms = 0;
        if (cudaEventElapsedTime(&ms, c->ev[c->pair[i][0]], c->ev[c->pair[i][1]]) == cudaSuccess && ms > 0)
            c->seconds += ms / 1000.0;
        give(c, c->pair[i][0]);
        give(c, c->pair[i][1]);
    }
    c->npairs = 0;
}

extern "C" int swin_cuda_device_idle(void *bev, double *seconds, long long *missed)
{
    struct swin_cuda_backend *be = (struct swin_cuda_backend *)bev;
    struct swin_cuda_idle *c = &be->idle;
    cudaError_t e = cudaStreamSynchronize(be->stream);
    if (e != cudaSuccess)
        return swin_cuda_fail(be, SWIN_ERR_BACKEND, "device_idle: the stream failed: %s", cudaGetErrorString(e));
    swin_cuda_idle_collect(be);
    if (seconds) *seconds = c->seconds;
    if (missed) *missed = c->missed;
    c->seconds = 0;
    c->missed = 0;
    give(c, c->last_end);
    c->last_end = -1;
    return 0;
}

cudaError_t swin_cuda_idle_start(struct swin_cuda_backend *be)
{
    struct swin_cuda_idle *c = &be->idle;
    c->last_end = -1;
    for (int i = 0; i < SWIN_CUDA_IDLE_EVENTS; i++) {
        cudaError_t e = cudaEventCreate(&c->ev[i]);
        if (e != cudaSuccess) return e;
        c->free_ev[c->nfree++] = i;
    }
    return cudaSuccess;
}

void swin_cuda_idle_free(struct swin_cuda_backend *be)
{
    for (int i = 0; i < SWIN_CUDA_IDLE_EVENTS; i++)
        if (be->idle.ev[i]) cudaEventDestroy(be->idle.ev[i]);
}
