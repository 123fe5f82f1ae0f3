/* conv_transpose2: ConvTranspose3d kernel 2, stride 2, no bias (torch.nn.ConvTranspose3d):
 *   out(2i+a, 2j+b, 2k+g, :) = in(i, j, k, :) . w[a][b][g]    w (2, 2, 2, cin, cout)
 * Eight GEMMs in one launch (grid z = tap = 4a + 2b + g): A = the input rows (M = D H W
 * voxels, K = cin, lda = in.pitch), B_z = w + z cin cout, and the TapScatter epilogue
 * writes row m (input voxel i, j, k) to output voxel (2i+a, 2j+b, 2k+g) with out.pitch.
 * The outputs of different taps never overlap. No workspace. */
#include "kernels/cuda/gemm.cuh"

namespace swin_cuda {

template <class T> struct TapScatter {
    T *out;
    int pitch;
    int h, w;        /* input dims; output is 2h x 2w per slice */
    __device__ void store(int z, long long m, int n, float v) const
    {
        const int k = (int)(m % w), j = (int)(m / w % h), i = (int)(m / ((long long)w * h));
        const int a = z >> 2, b = (z >> 1) & 1, g = z & 1;
        const long long o = ((long long)(2 * i + a) * (2 * h) + (2 * j + b)) * (2 * w) + (2 * k + g);
        stf(out + o * pitch + n, v);
    }
};

} // namespace swin_cuda

using namespace swin_cuda;

template <class T>
static int conv_transpose2_typed(struct swin_cuda_backend *be, struct swin_vol out, struct swin_vol in, const float *w)
{
    const T *dw;
    if (!swin_cuda_weight(be, "conv_transpose2", "w", w, (size_t)8 * in.c * out.c, &dw)) return SWIN_ERR_ARG;
    const TapScatter<T> ep = {(T *)out.data, out.pitch, in.h, in.w};
    gemm_launch(be->stream, RowsA<T>{(const T *)in.data, in.pitch}, dw, (long long)in.c * out.c, out.c, ep,
                (int)swin_vol_voxels(in), out.c, in.c, 8);
    return swin_cuda_check_launch(be, "conv_transpose2", "%d->%d on %dx%dx%d", in.c, out.c, in.d, in.h, in.w);
}

extern "C" int swin_cuda_conv_transpose2(void *bev, struct swin_vol out, struct swin_vol in, const float *w)
{
    struct swin_cuda_backend *be = (struct swin_cuda_backend *)bev;
    return be->dtype == SWIN_F16 ? conv_transpose2_typed<__half>(be, out, in, w)
                                 : conv_transpose2_typed<float>(be, out, in, w);
}
