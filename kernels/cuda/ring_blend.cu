/* ring_bytes, ring_start, ring_add, ring_finish (kernels/ops.h): the sliding cubes blended in
 * device memory, the twin of the host ring of pipeline/sliding.c, whose averages and labels
 * they equal to the bit. Geometry, glossary and where the open rows live: core/ring_geom.h.
 *
 * The ring is one allocation, carved into 256-byte aligned parts:
 *   acc     float32 [classes][slots][span][d_o2]: the sums of logit * importance of the open
 *           rows, plane a's row b at [a % slots][(b + (a / slots) * d_o1) % span]
 *           (swin_ring_layout_of: the plain ring or the sliding one);
 *   imp     float32 [roi0][roi1][roi2]: the importance map;
 *   labels  [d_o1][d_o2] of label_bytes: finished rows' labels, for the download;
 *   probs   float32 [d_o1][d_o2][classes], only when g->probs: their probabilities;
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
 * ring_finish_rows<L>: one thread per voxel of the rows (x along o2, y along o1): the weight,
 * the average (__fdiv_rn), the first maximum; the softmax in double as the host's sink
 * (pipeline/segment.c) computes it, or with one class (a sigmoid model) the label 1 where the
 * average is >= 0 and its sigmoid in double; the voxel's place zeroed. No shared memory, no
 * barriers. */
#include "kernels/cuda/cuda_internal.cuh"

namespace swin_cuda {

/* What the kernels need of core/ring_geom.h, by value: per volume axis for ring_add, and in
 * slab order (index 0 the slab axis, 1 and 2 the others) for ring_finish_rows, so that no
 * kernel indexes a local array by a run-time axis (which would put it on the stack). */
struct RingArgs {
    long long size[3], pad_lo[3];
    int roi[3], ax, o1, o2;
    long long ssize[3], spadded[3], spad_lo[3], sinterval[3], sis[3]; /* sis: the map's strides */
    int sroi[3], sn[3];
    int classes;
    long long slots, span, ring_n; /* ring_n: voxels of one class's sums */
};

/* Where slab-order voxel (a along ax, b along o1, c along o2) is summed: core/ring_geom.h. */
__device__ inline long long ring_index(const RingArgs &r, long long a, long long b, long long c)
{
    const long long pos = (b + a / r.slots % r.span * r.ssize[1]) % r.span;
    return ((a % r.slots) * r.span + pos) * r.ssize[2] + c;
}

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
        for (int c = threadIdx.x; c < r.roi[2]; c += blockDim.x) {
            const long long wi = row * r.roi[2] + c, x2 = p2 + c - r.pad_lo[2];
            const bool in = row_in && x2 >= 0 && x2 < r.size[2]; /* padding is cropped away */
            /* the voxel in slab order: o1 is axis 0 or 1, o2 axis 1 or 2 */
            const long long sa = r.ax == 0 ? x0 : r.ax == 1 ? x1 : x2, sb = r.o1 == 0 ? x0 : x1,
                            sc = r.o2 == 1 ? x1 : x2;
            const long long ri = in ? ring_index(r, sa, sb, sc) : 0;
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
__global__ void __launch_bounds__(256) ring_finish_rows(L *labels, float *probs, float *acc, const float *imp,
                                                        RingArgs r, long long plane, long long row_lo,
                                                        long long row_hi)
{
    const long long u1 = row_lo + (long long)blockIdx.x * blockDim.y + threadIdx.y;
    if (u1 >= row_hi) return;
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
        const long long u = (u1 - row_lo) * r.ssize[2] + u2; /* in the rows given back */
        float *a = acc + ring_index(r, plane, u1, u2);
        int best = 0;
        float top = __fdiv_rn(a[0], w);
        for (int k = 1; k < r.classes; k++) {
            const float v = __fdiv_rn(a[k * r.ring_n], w);
            if (v > top) { /* the first maximum, as torch.argmax */
                best = k;
                top = v;
            }
        }
        if (r.classes == 1) best = top >= 0.0f; /* a sigmoid model: pipeline/sliding.h's swin_sigmoid_label */
        labels[u] = (L)best;
        if (probs && r.classes == 1) probs[u] = (float)(1.0 / (1.0 + exp(-(double)top)));
        else if (probs) {
            double sum = 0;
            for (int k = 0; k < r.classes; k++) sum += exp((double)__fdiv_rn(a[k * r.ring_n], w) - (double)top);
            for (int k = 0; k < r.classes; k++)
                probs[u * r.classes + k] = (float)(exp((double)__fdiv_rn(a[k * r.ring_n], w) - (double)top) / sum);
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

/* Floats of one class's sums: the open rows' places (core/ring_geom.h). */
static size_t ring_voxels(const struct swin_ring_geom *g)
{
    struct swin_ring_layout l;
    swin_ring_layout_of(g, &l);
    return (size_t)l.slots * (size_t)l.span * (size_t)g->size[swin_ring_o2(g)];
}

static RingParts ring_parts(char *base, const struct swin_ring_geom *g)
{
    const size_t plane = (size_t)swin_ring_plane_voxels(g), cube = (size_t)g->roi[0] * g->roi[1] * g->roi[2];
    RingParts p;
    size_t at = 0;
    p.acc = (float *)(base + at);
    at += swin_cuda_round((size_t)g->classes * ring_voxels(g) * sizeof(float));
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
    struct swin_ring_layout l;
    swin_ring_layout_of(g, &l);
    r.ax = g->ax;
    r.o1 = order[1];
    r.o2 = order[2];
    r.classes = g->classes;
    r.slots = l.slots;
    r.span = l.span;
    r.ring_n = (long long)ring_voxels(g);
    long long is[3];
    for (int k = 0; k < 3; k++) {
        r.size[k] = g->size[k];
        r.pad_lo[k] = g->pad_lo[k];
        r.roi[k] = g->roi[k];
        is[k] = k == 0 ? (long long)g->roi[1] * g->roi[2] : k == 1 ? g->roi[2] : 1;
    }
    for (int s = 0; s < 3; s++) {
        const int k = order[s];
        r.ssize[s] = g->size[k];
        r.spadded[s] = g->padded[k];
        r.spad_lo[s] = g->pad_lo[k];
        r.sinterval[s] = g->interval[k];
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
    cudaError_t e = cudaMemsetAsync(p.acc, 0, (size_t)g->classes * ring_voxels(g) * sizeof(float), be->stream);
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
    swin_cuda_idle_end(be);
    return swin_cuda_check_launch(be, "ring_add", "c%d cube at %lld,%lld,%lld", g->classes, (long long)start[0],
                                  (long long)start[1], (long long)start[2]);
}

extern "C" int swin_cuda_ring_finish(void *bev, void *ring, const struct swin_ring_geom *g, int64_t plane,
                                     int64_t row_lo, int64_t row_hi, void *labels, float *probs,
                                     long long *nonfinite)
{
    struct swin_cuda_backend *be = (struct swin_cuda_backend *)bev;
    if (int rc = ring_misaligned(be, "ring_finish", ring)) return rc;
    const RingParts p = ring_parts((char *)ring, g);
    const RingArgs r = ring_args(g);
    float *dprobs = probs ? p.probs : nullptr;
    const size_t voxels = (size_t)(row_hi - row_lo) * (size_t)r.ssize[2];
    const dim3 block(32, 8), grid(swin_cuda_blocks(row_hi - row_lo, 8));
    swin_cuda_idle_begin(be);
    if (row_hi > row_lo) {
        if (g->label_bytes == 1)
            SWIN_LAUNCH(ring_finish_rows<uint8_t>, grid, block, 0, be->stream)(
                (uint8_t *)p.labels, dprobs, p.acc, p.imp, r, (long long)plane, (long long)row_lo, (long long)row_hi);
        else
            SWIN_LAUNCH(ring_finish_rows<uint16_t>, grid, block, 0, be->stream)(
                (uint16_t *)p.labels, dprobs, p.acc, p.imp, r, (long long)plane, (long long)row_lo, (long long)row_hi);
        if (int rc = swin_cuda_check_launch(be, "ring_finish", "c%d plane %lld rows %lld..%lld", g->classes,
                                            (long long)plane, (long long)row_lo, (long long)row_hi))
            return rc;
    }
    cudaError_t e = cudaSuccess;
    if (labels && voxels)
        e = cudaMemcpyAsync(labels, p.labels, voxels * (size_t)g->label_bytes, cudaMemcpyDeviceToHost, be->stream);
    if (e == cudaSuccess && probs && voxels)
        e = cudaMemcpyAsync(probs, p.probs, voxels * (size_t)g->classes * sizeof(float), cudaMemcpyDeviceToHost,
                            be->stream);
    unsigned long long count = 0;
    if (e == cudaSuccess) e = cudaMemcpyAsync(&count, p.count, sizeof count, cudaMemcpyDeviceToHost, be->stream);
    swin_cuda_idle_end(be);
    if (e == cudaSuccess) e = cudaStreamSynchronize(be->stream);
    if (e != cudaSuccess) return ring_copy_error(be, "ring_finish", e);
    swin_cuda_idle_collect(be);
    *nonfinite = (long long)count;
    return 0;
}
