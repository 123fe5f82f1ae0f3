/* pack_input / unpack_output: host channels-first float32 (C, D, H, W) <-> the device
 * channels-last volume (D, H, W, C) with pitch, through the context's staging buffer
 * (SWIN_CUDA_STAGE_FLOATS): per chunk of nv voxels, C copies of nv contiguous floats
 * (one per channel) between host and stage (C, nv), and one transposing kernel between
 * stage and the volume. copy: out = in with independent pitches.
 * Kernels are grid-stride loops over (voxel, channel) with the channel fastest, so the
 * volume side is coalesced, without a division per element (grid_walk.cuh); 256 threads, no shared memory. The volume side is the
 * backend's storage type T (float, or __half in half mode); the stage is always float32.
 * swin_cuda_upload also converts the model weights through the stage (stage_to_array).
 * pack_input's chunks go up through two pinned host buffers in turn (upload_chunk), so that
 * the host cuts the next cube while the device still runs this one. */
#include "kernels/cuda/cuda_internal.cuh"
#include "kernels/cuda/grid_walk.cuh"

#include <string.h>

namespace swin_cuda {

/* out(v0 + v, ch) = stage[ch * nv + v], v < nv. */
template <class T>
__global__ void __launch_bounds__(256) stage_to_volume(T *out, int pitch, long long v0, long long nv, int c,
                                                       const float *stage)
{
    for (RowColWalk w(c); w.row < nv; w.next(c)) {
        const long long v = w.row;
        const int ch = w.col;
        stf(out + (v0 + v) * pitch + ch, stage[ch * nv + v]);
    }
}

/* stage[ch * nv + v] = in(v0 + v, ch), v < nv. */
template <class T>
__global__ void __launch_bounds__(256) volume_to_stage(float *stage, const T *in, int pitch, long long v0,
                                                       long long nv, int c)
{
    for (RowColWalk w(c); w.row < nv; w.next(c)) {
        const long long v = w.row;
        const int ch = w.col;
        stage[ch * nv + v] = ldf(in + (v0 + v) * pitch + ch);
    }
}

/* out(v, u) = in(v, u) for v < nvox, u < c: U is the element type, or uint4 (16-byte
 * units) when the channel count, both pitches and both pointers allow. */
template <class U>
__global__ void __launch_bounds__(256) copy_channels(U *out, int out_pitch, const U *in, int in_pitch,
                                                     long long nvox, int c)
{
    for (RowColWalk w(c); w.row < nvox; w.next(c)) out[w.row * out_pitch + w.col] = in[w.row * in_pitch + w.col];
}

/* dst[i] = stage[i], i < n: float32 to the storage type. */
template <class T> __global__ void __launch_bounds__(256) stage_to_array(T *dst, const float *stage, long long n)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        stf(dst + i, stage[i]);
}

/* Grid of a grid-stride loop over n elements: at most 4096 blocks of 256. */
static dim3 stride_grid(long long n)
{
    const unsigned b = swin_cuda_blocks(n, 256);
    return dim3(b < 4096 ? (b ? b : 1) : 4096);
}

} // namespace swin_cuda

using namespace swin_cuda;

static int copy_error(struct swin_cuda_backend *be, const char *op, cudaError_t e)
{
    return swin_cuda_fail(be, SWIN_ERR_BACKEND, "%s: host/device copy failed: %s", op, cudaGetErrorString(e));
}

/* Chunk [v0, v0 + nv) of the host's (C, vox) input into the stage as (C, nv), through a
 * pinned buffer: the copy is queued behind the kernels before it and the host goes on (it
 * waits only for the copy out of that buffer two chunks ago). From pageable memory the
 * runtime may first wait for the stream, so a cube could not be cut while the last ran. */
static cudaError_t upload_chunk(struct swin_cuda_backend *be, const float *host_cdhw, long long vox, int c,
                                long long v0, long long nv)
{
    const int b = be->pinned_next;
    be->pinned_next ^= 1;
    cudaError_t e = cudaEventSynchronize(be->pinned_read[b]);
    if (e != cudaSuccess) return e;
    for (int ch = 0; ch < c; ch++)
        memcpy(be->pinned[b] + ch * nv, host_cdhw + ch * vox + v0, (size_t)nv * sizeof(float));
    if ((e = cudaMemcpyAsync(be->stage, be->pinned[b], (size_t)(nv * c) * sizeof(float), cudaMemcpyHostToDevice,
                             be->stream)) != cudaSuccess)
        return e;
    return cudaEventRecord(be->pinned_read[b], be->stream);
}

extern "C" int swin_cuda_pack_input(void *bev, struct swin_vol out, const float *host_cdhw)
{
    struct swin_cuda_backend *be = (struct swin_cuda_backend *)bev;
    int rc;
    const long long vox = (long long)swin_vol_voxels(out);
    const long long chunk = SWIN_CUDA_PINNED_FLOATS / out.c;
    if (chunk < 1)
        return swin_cuda_fail(be, SWIN_ERR_ARG, "pack_input: %d channels exceed the staging buffer", out.c);
    swin_cuda_idle_begin(be);
    for (long long v0 = 0; v0 < vox; v0 += chunk) {
        const long long nv = vox - v0 < chunk ? vox - v0 : chunk;
        cudaError_t e = upload_chunk(be, host_cdhw, vox, out.c, v0, nv);
        if (e != cudaSuccess) return copy_error(be, "pack_input", e);
        if (out.dtype == SWIN_F16)
            SWIN_LAUNCH(stage_to_volume<__half>, stride_grid(nv * out.c), dim3(256), 0, be->stream)(
                (__half *)out.data, out.pitch, v0, nv, out.c, be->stage);
        else
            SWIN_LAUNCH(stage_to_volume<float>, stride_grid(nv * out.c), dim3(256), 0, be->stream)(
                (float *)out.data, out.pitch, v0, nv, out.c, be->stage);
        if ((rc = swin_cuda_check_launch(be, "pack_input", "c%d on %dx%dx%d", out.c, out.d, out.h, out.w))) return rc;
    }
    return 0;
}

extern "C" int swin_cuda_unpack_output(void *bev, float *host_cdhw, struct swin_vol in)
{
    struct swin_cuda_backend *be = (struct swin_cuda_backend *)bev;
    int rc;
    const long long vox = (long long)swin_vol_voxels(in), chunk = SWIN_CUDA_STAGE_FLOATS / in.c;
    if (chunk < 1)
        return swin_cuda_fail(be, SWIN_ERR_ARG, "unpack_output: %d channels exceed the staging buffer", in.c);
    for (long long v0 = 0; v0 < vox; v0 += chunk) {
        const long long nv = vox - v0 < chunk ? vox - v0 : chunk;
        if (in.dtype == SWIN_F16)
            SWIN_LAUNCH(volume_to_stage<__half>, stride_grid(nv * in.c), dim3(256), 0, be->stream)(
                be->stage, (const __half *)in.data, in.pitch, v0, nv, in.c);
        else
            SWIN_LAUNCH(volume_to_stage<float>, stride_grid(nv * in.c), dim3(256), 0, be->stream)(
                be->stage, (const float *)in.data, in.pitch, v0, nv, in.c);
        if ((rc = swin_cuda_check_launch(be, "unpack_output", "c%d on %dx%dx%d", in.c, in.d, in.h, in.w))) return rc;
        for (int ch = 0; ch < in.c; ch++) {
            cudaError_t e = cudaMemcpyAsync(host_cdhw + ch * vox + v0, be->stage + ch * nv, (size_t)nv * sizeof(float),
                                            cudaMemcpyDeviceToHost, be->stream);
            if (e != cudaSuccess) return copy_error(be, "unpack_output", e);
        }
    }
    swin_cuda_idle_end(be);
    cudaError_t e = cudaStreamSynchronize(be->stream);
    if (e != cudaSuccess)
        return swin_cuda_fail(be, SWIN_ERR_BACKEND,
                              "unpack_output: a kernel of this forward pass failed: %s (%s); rerun with "
                              "SWIN_CUDA_SYNC_CHECK=1 to name its op",
                              cudaGetErrorName(e), cudaGetErrorString(e));
    swin_cuda_idle_collect(be);
    return 0;
}

extern "C" int swin_cuda_copy(void *bev, struct swin_vol out, struct swin_vol in)
{
    struct swin_cuda_backend *be = (struct swin_cuda_backend *)bev;
    const long long vox = (long long)swin_vol_voxels(in);
    const int eb = (int)swin_dtype_bytes(in.dtype), u = 16 / eb;   /* elements per 16-byte unit */
    if (in.c % u == 0 && out.pitch % u == 0 && in.pitch % u == 0 && (uintptr_t)out.data % 16 == 0 &&
        (uintptr_t)in.data % 16 == 0)
        SWIN_LAUNCH(copy_channels<uint4>, stride_grid(vox * (in.c / u)), dim3(256), 0, be->stream)(
            (uint4 *)out.data, out.pitch / u, (const uint4 *)in.data, in.pitch / u, vox, in.c / u);
    else if (in.dtype == SWIN_F16)
        SWIN_LAUNCH(copy_channels<__half>, stride_grid(vox * in.c), dim3(256), 0, be->stream)(
            (__half *)out.data, out.pitch, (const __half *)in.data, in.pitch, vox, in.c);
    else
        SWIN_LAUNCH(copy_channels<float>, stride_grid(vox * in.c), dim3(256), 0, be->stream)(
            (float *)out.data, out.pitch, (const float *)in.data, in.pitch, vox, in.c);
    return swin_cuda_check_launch(be, "copy", "c%d on %dx%dx%d", in.c, in.d, in.h, in.w);
}

cudaError_t swin_cuda_upload(struct swin_cuda_backend *be, void *dst, const float *host, size_t count)
{
    cudaError_t e = cudaSuccess;
    if (be->dtype == SWIN_F32) {
        e = cudaMemcpy(dst, host, count * sizeof(float), cudaMemcpyHostToDevice);
    } else {
        for (size_t i0 = 0; i0 < count && e == cudaSuccess; i0 += SWIN_CUDA_STAGE_FLOATS) {
            const size_t n = count - i0 < SWIN_CUDA_STAGE_FLOATS ? count - i0 : SWIN_CUDA_STAGE_FLOATS;
            e = cudaMemcpyAsync(be->stage, host + i0, n * sizeof(float), cudaMemcpyHostToDevice, be->stream);
            if (e == cudaSuccess) {
                SWIN_LAUNCH(stage_to_array<__half>, stride_grid((long long)n), dim3(256), 0, be->stream)(
                    (__half *)dst + i0, be->stage, (long long)n);
                e = cudaGetLastError();
            }
            /* the next chunk overwrites the stage */
            if (e == cudaSuccess) e = cudaStreamSynchronize(be->stream);
        }
    }
    /* A pageable cudaMemcpy may return before its DMA lands, and the ops run on a
     * non-blocking stream that does not wait for the legacy stream: wait here. */
    return e == cudaSuccess ? cudaDeviceSynchronize() : e;
}
