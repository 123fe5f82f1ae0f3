/* ring_bytes, ring_start, ring_add, ring_finish (kernels/ops.h): the sliding cubes blended in
 * device memory, the twin of the host ring of pipeline/sliding.c, whose averages and labels
 * they equal to the bit. Geometry and glossary: core/ring_geom.h.
 *
 * The ring is one allocation, carved into 256-byte aligned parts:
 *   acc     float32 [classes][ring voxels]: the sums of logit * importance. Ring voxels: the
 *           volume with the slab axis cut to `depth` planes, plane x in slot x % depth, laid
 *           out as the volume, (x0 * e1 + x1) * e2 + x2 with e the volume's dims (depth
 *           along ax): the host ring's layout;
 *   imp     float32 [roi0][roi1][roi2]: the importance map;
 *   labels  [d_o1][d_o2] of label_bytes: a finished plane's labels, for the download;
 *   probs   float32 [classes][d_o1][d_o2], only when g->probs: its probabilities;
 *   count   unsigned long long: the non-finite logits ring_add saw.
 * The weights (the importance summed over the cubes that reach a voxel) are not stored:
 * ring_finish sums them again from the map, over the same cubes in the same order, which is
 * the host ring's float32 sum to the bit, and saves one float per voxel of the ring.
 *
 * ring_add<T>: one thread per voxel of the cube, every class (32 x 8 blocks: x along roi2,
 * y along the rows of (roi0, roi1)); a voxel inside the volume adds __fmul_rn(logit, w) with
 * __fadd_rn, so nvcc cannot contract them into an FMA (the host rounds the product, then the
 * sum). All cubes go on the backend's one stream in run order, so every voxel adds its cubes
 * in the host's order. Every logit of the cube is checked for being finite.
 * ring_finish_plane<L>: one thread per voxel of the plane (x along o2, y along o1): the weight,
 * the average (__fdiv_rn), the first maximum; the softmax in double as the host's sink
 * (pipeline/segment.c) computes it; the slot zeroed. No shared memory, no barriers. */
#include "kernels/cuda/cuda_internal.cuh"

namespace swin_cuda {

/* What the kernels need of core/ring_geom.h, by value: per volume axis for ring_add, and in
 * slab order (index 0 the slab axis, 1 and 2 the others) for ring_finish_plane, so that no
 * kernel indexes a local array by a run-time axis (which would put it on the stack). */
struct RingArgs {
    long long size[3], pad_lo[3], rs[3]; /* rs: the ring's stride of each volume axis */
    int roi[3], ax;
    long long ssize[3], spadded[3], spad_lo[3], sinterval[3], srs[3], sis[3]; /* sis: the map's strides */
    int sroi[3], sn[3];
    int classes;
    long long depth, ring_n, plane_n;
};

/* Start i along slab-order axis k, padded coordinates (core/ring_geom.h). */
__device__ inline long long ring_start_of(const RingArgs &r, int k, long long i)
{
    const long long s = i * r.sinterval[k], last = r.spadded[k] - r.sroi[k];
    return s < last ? s : last;
}

/* The first cube start along slab-order axis k that reaches padded coordinate X: starts before
 * ceil((X - roi + 1) / interval) end before X (a pulled-back last start is never among them:
 * it ends at the padded border, past every X). */
__device__ inline long long first_reaching(const RingArgs &r, int k, long long X)
{
    const long long from = X - r.sroi[k] + 1;
    return from <= 0 ? 0 : (from + r.sinterval[k] - 1) / r.sinterval[k];
}

template <class T>
__global__ void __launch_bounds__(256) ring_add(float *acc, unsigned long long *count, const T *logits, int pitch,
                                                const float *imp, RingArgs r, long long p0, long long p1, long long p2)
{
    const long long rows = (long long)r.roi[0] * r.roi[1];
    const long long row = (long long)blockIdx.x * blockDim.y + threadIdx.y;
    unsigned long long bad = 0;
    if (row < rows) {
        const int a = (int)(row / r.roi[1]), b = (int)(row % r.roi[1]);
        const long long x0 = p0 + a - r.pad_lo[0], x1 = p1 + b - r.pad_lo[1];
        const bool row_in = x0 >= 0 && x0 < r.size[0] && x1 >= 0 && x1 < r.size[1];
        const long long row_ri = (r.ax == 0 ? x0 % r.depth : x0) * r.rs[0] + (r.ax == 1 ? x1 % r.depth : x1) * r.rs[1];
        for (int c = threadIdx.x; c < r.roi[2]; c += blockDim.x) {
            const long long wi = row * r.roi[2] + c, x2 = p2 + c - r.pad_lo[2];
            const bool in = row_in && x2 >= 0 && x2 < r.size[2]; /* padding is cropped away */
            const long long ri = row_ri + (r.ax == 2 ? x2 % r.depth : x2);
            const float w = imp[wi];
            for (int k = 0; k < r.classes; k++) {
                const float o = ldf(logits + wi * pitch + k);
                bad += !isfinite(o);
                if (in) acc[k * r.ring_n + ri] = __fadd_rn(acc[k * r.ring_n + ri], __fmul_rn(o, w));
            }
        }
    }
    if (bad) atomicAdd(count, bad);
}

template <class L>
__global__ void __launch_bounds__(256) ring_finish_plane(L *labels, float *probs, float *acc, const float *imp,
                                                         RingArgs r, long long plane)
{
    const long long u1 = (long long)blockIdx.x * blockDim.y + threadIdx.y;
    if (u1 >= r.ssize[1]) return;
    const long long X0 = plane + r.spad_lo[0], X1 = u1 + r.spad_lo[1]; /* padded coordinates, slab order */
    for (long long u2 = threadIdx.x; u2 < r.ssize[2]; u2 += blockDim.x) {
        const long long X2 = u2 + r.spad_lo[2];
        /* the weight: the importance of the cubes reaching the voxel, in run order */
        float w = 0.0f;
        for (long long i = first_reaching(r, 0, X0); i < r.sn[0]; i++) {
            const long long s0 = ring_start_of(r, 0, i);
            if (s0 > X0) break;
            for (long long j = first_reaching(r, 1, X1); j < r.sn[1]; j++) {
                const long long s1 = ring_start_of(r, 1, j);
                if (s1 > X1) break;
                for (long long l = first_reaching(r, 2, X2); l < r.sn[2]; l++) {
                    const long long s2 = ring_start_of(r, 2, l);
                    if (s2 > X2) break;
                    w = __fadd_rn(w, imp[(X0 - s0) * r.sis[0] + (X1 - s1) * r.sis[1] + (X2 - s2) * r.sis[2]]);
                }
            }
        }
        const long long u = u1 * r.ssize[2] + u2;
        float *a = acc + plane % r.depth * r.srs[0] + u1 * r.srs[1] + u2 * r.srs[2];
        int best = 0;
        float top = __fdiv_rn(a[0], w);
        for (int k = 1; k < r.classes; k++) {
            const float v = __fdiv_rn(a[k * r.ring_n], w);
            if (v > top) { /* the first maximum, as torch.argmax */
                best = k;
                top = v;
            }
        }
        labels[u] = (L)best;
        if (probs) {
            double sum = 0;
            for (int k = 0; k < r.classes; k++) sum += exp((double)__fdiv_rn(a[k * r.ring_n], w) - (double)top);
            for (int k = 0; k < r.classes; k++)
                probs[k * r.plane_n + u] = (float)(exp((double)__fdiv_rn(a[k * r.ring_n], w) - (double)top) / sum);
        }
        for (int k = 0; k < r.classes; k++) a[k * r.ring_n] = 0.0f;
    }
}

/* The parts of a ring (the header comment), from its base. */
struct RingParts {
    float *acc, *imp, *probs;
    void *labels;
    unsigned long long *count;
    size_t bytes;
};

static RingParts ring_parts(char *base, const struct swin_ring_geom *g)
{
    const int o1 = swin_ring_o1(g), o2 = swin_ring_o2(g);
    const size_t plane = (size_t)g->size[o1] * (size_t)g->size[o2];
    const size_t ring_n = (size_t)swin_ring_depth(g) * plane, cube = (size_t)g->roi[0] * g->roi[1] * g->roi[2];
    RingParts p;
    size_t at = 0;
    p.acc = (float *)(base + at);
    at += swin_cuda_round((size_t)g->classes * ring_n * sizeof(float));
    p.imp = (float *)(base + at);
    at += swin_cuda_round(cube * sizeof(float));
    p.labels = base + at;
    at += swin_cuda_round(plane * (size_t)g->label_bytes);
    p.probs = g->probs ? (float *)(base + at) : nullptr;
    at += g->probs ? swin_cuda_round((size_t)g->classes * plane * sizeof(float)) : 0;
    p.count = (unsigned long long *)(base + at);
    p.bytes = at + swin_cuda_round(sizeof(unsigned long long));
    return p;
}

static RingArgs ring_args(const struct swin_ring_geom *g)
{
    RingArgs r;
    const int order[3] = {g->ax, swin_ring_o1(g), swin_ring_o2(g)};
    r.ax = g->ax;
    r.classes = g->classes;
    r.depth = swin_ring_depth(g);
    r.plane_n = swin_ring_plane_voxels(g);
    r.ring_n = r.depth * r.plane_n;
    long long ext[3], is[3];
    for (int k = 0; k < 3; k++) ext[k] = k == g->ax ? r.depth : g->size[k];
    for (int k = 0; k < 3; k++) {
        r.size[k] = g->size[k];
        r.pad_lo[k] = g->pad_lo[k];
        r.roi[k] = g->roi[k];
        r.rs[k] = k == 0 ? ext[1] * ext[2] : k == 1 ? ext[2] : 1;
        is[k] = k == 0 ? (long long)g->roi[1] * g->roi[2] : k == 1 ? g->roi[2] : 1;
    }
    for (int s = 0; s < 3; s++) {
        const int k = order[s];
        r.ssize[s] = g->size[k];
        r.spadded[s] = g->padded[k];
        r.spad_lo[s] = g->pad_lo[k];
        r.sinterval[s] = g->interval[k];
        r.srs[s] = r.rs[k];
        r.sis[s] = is[k];
        r.sroi[s] = g->roi[k];
        r.sn[s] = g->n[k];
    }
    return r;
}

} // namespace swin_cuda

using namespace swin_cuda;

static int ring_misaligned(struct swin_cuda_backend *be, const char *op, const void *ring)
{
    if ((uintptr_t)ring % SWIN_CUDA_ALIGN == 0) return 0;
    return swin_cuda_fail(be, SWIN_ERR_ARG, "%s: the ring %p is not %d-byte aligned (allocate it as the arena)", op,
                          ring, SWIN_CUDA_ALIGN);
}

static int ring_copy_error(struct swin_cuda_backend *be, const char *op, cudaError_t e)
{
    return swin_cuda_fail(be, SWIN_ERR_BACKEND, "%s: %s (%s); rerun with SWIN_CUDA_SYNC_CHECK=1 to name the op that "
                          "failed", op, cudaGetErrorName(e), cudaGetErrorString(e));
}

extern "C" size_t swin_cuda_ring_bytes(void *bev, const struct swin_ring_geom *g)
{
    return ring_parts(nullptr, g).bytes;
}

extern "C" int swin_cuda_ring_start(void *bev, void *ring, const struct swin_ring_geom *g, const float *importance)
{
    struct swin_cuda_backend *be = (struct swin_cuda_backend *)bev;
    if (int rc = ring_misaligned(be, "ring_start", ring)) return rc;
    const RingParts p = ring_parts((char *)ring, g);
    const size_t ring_n = (size_t)swin_ring_depth(g) * (size_t)swin_ring_plane_voxels(g);
    cudaError_t e = cudaMemsetAsync(p.acc, 0, (size_t)g->classes * ring_n * sizeof(float), be->stream);
    if (e == cudaSuccess) e = cudaMemsetAsync(p.count, 0, sizeof *p.count, be->stream);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(p.imp, importance, (size_t)g->roi[0] * g->roi[1] * g->roi[2] * sizeof(float),
                            cudaMemcpyHostToDevice, be->stream);
    return e == cudaSuccess ? 0 : ring_copy_error(be, "ring_start", e);
}

extern "C" int swin_cuda_ring_add(void *bev, void *ring, const struct swin_ring_geom *g, struct swin_vol logits,
                                  const int64_t start[3])
{
    struct swin_cuda_backend *be = (struct swin_cuda_backend *)bev;
    if (int rc = ring_misaligned(be, "ring_add", ring)) return rc;
    const RingParts p = ring_parts((char *)ring, g);
    const RingArgs r = ring_args(g);
    const dim3 block(32, 8), grid(swin_cuda_blocks((long long)g->roi[0] * g->roi[1], 8));
    if (logits.dtype == SWIN_F16)
        SWIN_LAUNCH(ring_add<__half>, grid, block, 0, be->stream)(p.acc, p.count, (const __half *)logits.data,
                                                                  logits.pitch, p.imp, r, start[0], start[1], start[2]);
    else
        SWIN_LAUNCH(ring_add<float>, grid, block, 0, be->stream)(p.acc, p.count, (const float *)logits.data,
                                                                 logits.pitch, p.imp, r, start[0], start[1], start[2]);
    return swin_cuda_check_launch(be, "ring_add", "c%d cube at %lld,%lld,%lld", g->classes, (long long)start[0],
                                  (long long)start[1], (long long)start[2]);
}

extern "C" int swin_cuda_ring_finish(void *bev, void *ring, const struct swin_ring_geom *g, int64_t plane,
                                     void *labels, float *probs, long long *nonfinite)
{
    struct swin_cuda_backend *be = (struct swin_cuda_backend *)bev;
    if (int rc = ring_misaligned(be, "ring_finish", ring)) return rc;
    const RingParts p = ring_parts((char *)ring, g);
    const RingArgs r = ring_args(g);
    float *dprobs = probs ? p.probs : nullptr;
    const dim3 block(32, 8), grid(swin_cuda_blocks(r.ssize[1], 8));
    if (g->label_bytes == 1)
        SWIN_LAUNCH(ring_finish_plane<uint8_t>, grid, block, 0, be->stream)((uint8_t *)p.labels, dprobs, p.acc, p.imp,
                                                                             r, (long long)plane);
    else
        SWIN_LAUNCH(ring_finish_plane<uint16_t>, grid, block, 0, be->stream)((uint16_t *)p.labels, dprobs, p.acc,
                                                                              p.imp, r, (long long)plane);
    if (int rc = swin_cuda_check_launch(be, "ring_finish", "c%d plane %lld", g->classes, (long long)plane)) return rc;
    cudaError_t e = cudaSuccess;
    if (labels)
        e = cudaMemcpyAsync(labels, p.labels, (size_t)r.plane_n * (size_t)g->label_bytes, cudaMemcpyDeviceToHost,
                            be->stream);
    if (e == cudaSuccess && probs)
        e = cudaMemcpyAsync(probs, p.probs, (size_t)g->classes * (size_t)r.plane_n * sizeof(float),
                            cudaMemcpyDeviceToHost, be->stream);
    unsigned long long count = 0;
    if (e == cudaSuccess) e = cudaMemcpyAsync(&count, p.count, sizeof count, cudaMemcpyDeviceToHost, be->stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(be->stream);
    if (e != cudaSuccess) return ring_copy_error(be, "ring_finish", e);
    *nonfinite = (long long)count;
    return 0;
}
