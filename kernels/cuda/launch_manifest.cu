/* swin_cuda_launch_manifest: prints, per kernel of the CUDA backend, the block size and the
 * largest dynamic shared memory its launches request within the model envelope below, for
 * resource_gate.py, which checks them against the ptxas report of each target.
 *
 * The numbers come from the constants and functions the launch sites themselves use
 * (ConvSmem, ConvWmmaThreads, ConvFfmaTile, attn_block_queries, attn_smem_bytes,
 * GEMM_THREADS, WMMA_THREADS, WA_THREADS), so they follow the code when it changes. The
 * kernels launched with a literal block (256, 32 x 8, 128) are listed at their
 * __launch_bounds__, which is that literal: a larger launched block would exceed the bound
 * and fail on the device. A kernel that is in the ptxas report but matches no row here
 * fails the gate, so a new kernel cannot go unchecked.
 *
 * Model envelope: feature size f <= 48 and head dims up to ENVELOPE_HEAD_DIM (MONAI's heads
 * 3, 6, 12, 24 give f / 3 = 16 at f = 48; 64 allows four times that). The only launch that
 * grows with the model is window_attention_fused<0> (head dims other than 4, 8, 16, 32);
 * every other dynamic size is a constant of its instantiation.
 *
 * Output: one line per kernel, "pattern<TAB>threads<TAB>max dynamic bytes", where pattern
 * is the start of the kernel's demangled name without "swin_cuda::". Host code only: it
 * launches nothing and needs no GPU. */
#include <stdio.h>

#include "kernels/cuda/conv_igemm.cuh"
#include "kernels/cuda/gemm_wmma.cuh"
#include "kernels/cuda/window_attention.cuh"
#include "kernels/cuda/window_attention_wmma.cuh"

using namespace swin_cuda;

static const int ENVELOPE_HEAD_DIM = 64;

static void row(const char *pattern, int threads, size_t dyn)
{
    printf("%s\t%d\t%zu\n", pattern, threads, dyn);
}

/* conv_wmma / conv_ffma as conv_igemm_go launches them, for each (BN, VB) that
 * conv_igemm_launch instantiates. */
template <int BN, int VB> static void conv_rows()
{
    char p[64];
    snprintf(p, sizeof p, "conv_wmma<%d, %d,", BN, VB);
    row(p, ConvWmmaThreads<BN>::value, ConvSmem<__half, BN, CONV_WMMA_STAGES>::TOTAL);
    snprintf(p, sizeof p, "conv_ffma<%d, %d,", BN, VB);
    row(p, ConvFfmaTile<BN, VB>::THREADS, ConvSmem<float, BN, CONV_FFMA_STAGES>::TOTAL);
}

/* window_attention_fused<HD, T> as launch_attention launches it; HD = 0 at its largest
 * block and shared memory over the envelope's head dims. */
static void attention_fused_rows()
{
    const int dims[] = {4, 8, 16, 32};
    char p[64];
    for (int hd : dims) {
        snprintf(p, sizeof p, "window_attention_fused<%d,", hd);
        const int qt = attn_block_queries(hd, true);
        row(p, qt, attn_smem_bytes(hd, qt, true));
    }
    int qt_max = 0;
    size_t bytes_max = 0;
    for (int hd = 1; hd <= ENVELOPE_HEAD_DIM; hd++) {
        const int qt = attn_block_queries(hd, false);
        const size_t bytes = attn_smem_bytes(hd, qt, false);
        qt_max = qt > qt_max ? qt : qt_max;
        bytes_max = bytes > bytes_max ? bytes : bytes_max;
    }
    row("window_attention_fused<0,", qt_max, bytes_max);
}

int main()
{
    conv_rows<48, 16>();
    conv_rows<48, 4>();
    conv_rows<96, 16>();
    conv_rows<96, 4>();
    row("gemm_tiled<", GEMM_THREADS, 0);
    row("gemm_wmma<", WMMA_THREADS, 0);
    row("window_attention_wmma<", WA_THREADS, 0);
    attention_fused_rows();
    /* literal blocks, at their __launch_bounds__ */
    row("stats_merge_tiles(", 128, 0);
    row("instnorm_partial<", 32 * 8, 0);
    row("instnorm_finalize<", 256, 0);
    row("instnorm_apply<", 256, 0);
    row("groupnorm_merge", 256, 0);
    row("groupnorm_coef<", 256, 0);
    row("layernorm_rows<", 256, 0);
    row("window_gather_ln<", 256, 0);
    row("merge_gather<", 256, 0);
    row("splitk_reduce<", 256, 0);
    row("stage_to_volume<", 256, 0);
    row("volume_to_stage<", 256, 0);
    row("copy_channels<", 256, 0);
    row("stage_to_array<", 256, 0);
    row("ring_add<", 32 * 8, 0);
    row("ring_finish_rows<", 32 * 8, 0);
    return 0;
}
