/* conv3d: out = conv3d(in, w) + bias, cross-correlation as torch.nn.Conv3d (kernels/ops.h).
 * One function, swin_cpu_conv3d_choose, decides which kernel a convolution runs from the
 * backend's level and conv choice, the weights' precision and the shape, and the workspace
 * that kernel needs; conv3d_ws, conv3d and the kernel's name all take that one decision:
 *   per-tap GEMMs   k > 1 on at most TAPS_MAX_VOXELS output voxels (conv3d_taps.c);
 *   Winograd        3x3x3 stride 1 pad 1 where its rule picks a tile (winograd/winograd.h);
 *   implicit GEMM   the other convs with an im2col step on more than SMALL_GRID voxels,
 *                   float32 weights (conv3d_direct.c; one input channel: conv3d_c1_avx2.c);
 *   GEMM            1x1 convs on the input rows, the rest im2col + GEMM (conv3d_direct.c).
 * The per-tap GEMMs, Winograd and the implicit GEMM exist at the AVX2 and AVX-512 levels; the
 * baseline runs im2col + OpenBLAS. The crossovers: bench/results/conv3d_cpu.md and
 * bench/results/winograd_cpu.md. */
#include "kernels/cpu/conv/conv3d_internal.h"
#include "kernels/cpu/norm/in_stats.h"
#include "kernels/cpu/winograd/winograd.h"

/* Output voxels up to which a conv with an im2col step runs the GEMM, not the implicit one. */
#define SMALL_GRID (24L * 24 * 24)
/* Output voxels up to which a conv with k > 1 runs the per-tap GEMMs: 6^3; at the AVX-512
 * level 8^3 where cin cout reaches TAPS_WIDE (F(2x2x2)'s U, 64 cin cout floats, then costs more
 * than its 8^3 / 8 tiles save). */
#define TAPS_MAX_VOXELS (6L * 6 * 6)
#define TAPS_MAX_VOXELS_WIDE (8L * 8 * 8)
#define TAPS_WIDE (384L * 192)

enum { LEVELS = SWIN_CPU_SIMD_AVX512 + 1 };

static const char *const taps_names[LEVELS] = {"", "per-tap GEMMs avx2", "per-tap GEMMs avx512"};
static const char *const implicit_names[LEVELS] = {"", "implicit GEMM avx2", "implicit GEMM avx512"};
static const char *const c1_names[LEVELS] = {"", "one-channel direct avx2", "one-channel direct avx512"};
/* [tile / 2 - 1][wide][level] */
static const char *const wino_names[3][2][LEVELS] = {
    {{"", "Winograd F(2x2x2,3x3x3) avx2", "Winograd F(2x2x2,3x3x3) avx512"},
     {"", "Winograd F(2x2x2,3x3x3) wide avx2", "Winograd F(2x2x2,3x3x3) wide avx512"}},
    {{"", "Winograd F(4x4x4,3x3x3) avx2", "Winograd F(4x4x4,3x3x3) avx512"},
     {"", "Winograd F(4x4x4,3x3x3) wide avx2", "Winograd F(4x4x4,3x3x3) wide avx512"}},
    {{"", "Winograd F(6x6x6,3x3x3) avx2", "Winograd F(6x6x6,3x3x3) avx512"},
     {"", "Winograd F(6x6x6,3x3x3) wide avx2", "Winograd F(6x6x6,3x3x3) wide avx512"}},
};
/* [1x1][bf16][level]; bfloat16 weights run the AVX2 kernel up to the AVX512_BF16 level
 * (gemm_bf16.h), where vdpbf16ps takes over */
static const char *const gemm_names[2][2][SWIN_CPU_SIMD_AVX512_BF16 + 1] = {
    {{"im2col + sgemm", "im2col + AVX2 GEMM", "im2col + AVX-512 GEMM", "im2col + AVX-512 GEMM"},
     {"im2col + bf16 GEMM", "im2col + bf16 GEMM avx2", "im2col + bf16 GEMM avx2", "im2col + bf16 GEMM avx512bf16"}},
    {{"1x1 sgemm", "1x1 AVX2 GEMM", "1x1 AVX-512 GEMM", "1x1 AVX-512 GEMM"},
     {"1x1 bf16 GEMM", "1x1 bf16 GEMM avx2", "1x1 bf16 GEMM avx2", "1x1 bf16 GEMM avx512bf16"}},
};

bool swin_cpu_conv3d_implicit_wins(const struct swin_cpu_backend *be, struct swin_vol out, bool w_bf16, int k,
                                   int stride, int pad)
{
    const bool rows_are_a = k == 1 && stride == 1 && pad == 0;
    return be->simd != SWIN_CPU_SIMD_BASELINE && !w_bf16 &&
           (be->conv_choice == SWIN_CPU_CONV_IMPLICIT_ONLY || (!rows_are_a && (long)swin_vol_voxels(out) > SMALL_GRID));
}

struct conv_choice swin_cpu_conv3d_choose(const struct swin_cpu_backend *be, struct swin_vol out, struct swin_vol in,
                                          bool w_bf16, int k, int stride, int pad)
{
    const int lv = be->simd < SWIN_CPU_SIMD_AVX512 ? (int)be->simd : SWIN_CPU_SIMD_AVX512; /* float32 kernels */
    const long vox = (long)swin_vol_voxels(out);
    const bool fast = be->simd != SWIN_CPU_SIMD_BASELINE, rows_are_a = k == 1 && stride == 1 && pad == 0;
    struct conv_choice c = {0};
    const long taps_max = be->simd >= SWIN_CPU_SIMD_AVX512 && (long)in.c * out.c >= TAPS_WIDE ? TAPS_MAX_VOXELS_WIDE
                                                                                             : TAPS_MAX_VOXELS;
    if (fast && (be->conv_choice == SWIN_CPU_CONV_TAPS_ONLY ||
                 (be->conv_choice == SWIN_CPU_CONV_BY_SHAPE && k > 1 && vox <= taps_max))) {
        c.kernel = CONV_TAPS;
        c.ws = swin_cpu_conv3d_taps_ws((void *)be, out, in);
        c.name = taps_names[lv];
        return c;
    }
    if (k == 3 && stride == 1 && pad == 1 && (c.tile = swin_cpu_winograd_tile(be, out, in, w_bf16))) {
        c.kernel = CONV_WINOGRAD;
        c.ws = swin_cpu_winograd_ws(be, out, in, c.tile);
        c.name = wino_names[c.tile / 2 - 1][swin_cpu_winograd_wide(be, out, in, c.tile)][lv];
        return c;
    }
    c.ws = swin_cpu_conv3d_direct_ws((void *)be, out, in, k);
    if (swin_cpu_conv3d_implicit_wins(be, out, w_bf16, k, stride, pad)) {
        c.kernel = CONV_IMPLICIT;
        c.name = in.c == 1 ? c1_names[lv] : implicit_names[lv];
        return c;
    }
    c.kernel = CONV_GEMM;
    c.rounds_input = w_bf16;
    c.name = gemm_names[rows_are_a][w_bf16][be->simd];
    return c;
}

size_t swin_cpu_conv3d_ws(void *bev, struct swin_vol out, struct swin_vol in, const float *w, int k, int stride,
                          int pad, bool stats)
{
    (void)stats;
    struct swin_cpu_backend *be = bev;
    const size_t ws = swin_cpu_conv3d_choose(be, out, in, swin_cpu_wgemm_of(be, w).bf16, k, stride, pad).ws;
    if (!be->bf16_planned) return ws;
    /* planned before the bfloat16 copy exists: whichever precision w will have */
    const size_t ws16 = swin_cpu_conv3d_choose(be, out, in, true, k, stride, pad).ws;
    return ws16 > ws ? ws16 : ws;
}

/* Statistics where a conv of this output can run Winograd F(4x4x4) or F(6x6x6) (the kernels
 * that keep them: norm/in_stats.h; F(6x6x6) runs on a subset of F(4x4x4)'s grids and needs
 * fewer slots); 0 for smaller grids, where instnorm_act's own pass is cheap. */
size_t swin_cpu_conv3d_stats_bytes(void *bev, struct swin_vol out)
{
    const struct swin_cpu_backend *be = bev;
    if (!swin_cpu_winograd_available(be) || out.c < 2) return 0;
    const struct swin_vol in = {.d = out.d, .h = out.h, .w = out.w, .c = 2};
    return swin_cpu_winograd_tile(be, out, in, false) == 4 ? swin_cpu_in_stats_bytes(out) : 0;
}

const char *swin_cpu_conv3d_kernel(const struct swin_cpu_backend *be, struct swin_vol out, struct swin_vol in,
                                   const float *w, int k, int stride, int pad)
{
    return swin_cpu_conv3d_choose(be, out, in, swin_cpu_wgemm_of(be, w).bf16, k, stride, pad).name;
}

int swin_cpu_conv3d(void *bev, struct swin_vol out, void *stats, struct swin_vol in, const float *w, const float *bias,
                    int k, int stride, int pad, void *ws, size_t ws_bytes)
{
    struct swin_cpu_backend *be = bev;
    const struct conv_choice c = swin_cpu_conv3d_choose(be, out, in, swin_cpu_wgemm_of(be, w).bf16, k, stride, pad);
    if (!ws || ws_bytes < c.ws)
        return swin_cpu_fail(be, SWIN_ERR_ARG, "conv3d (%s): workspace %zu bytes, need %zu", c.name, ws ? ws_bytes : 0,
                             c.ws);
    /* stats: Winograd F(4x4x4) and F(6x6x6) keep them; every other kernel marks them as not kept */
    if (stats && c.kernel != CONV_WINOGRAD) swin_cpu_in_stats_none(stats);
    switch (c.kernel) {
    case CONV_TAPS: return swin_cpu_conv3d_taps(be, out, in, w, bias, k, stride, pad, ws, ws_bytes);
    case CONV_WINOGRAD: return swin_cpu_conv3d_winograd(be, out, stats, in, w, bias, ws, ws_bytes, c.tile, NULL);
    case CONV_IMPLICIT: return swin_cpu_conv3d_direct(be, out, in, w, bias, k, stride, pad, true, ws);
    case CONV_GEMM: return swin_cpu_conv3d_direct(be, out, in, w, bias, k, stride, pad, false, ws);
    }
    return swin_cpu_fail(be, SWIN_ERR_INTERNAL, "conv3d: no kernel chosen");
}

int swin_cpu_conv3d_normed_input(void *bev, struct swin_vol out, void *stats, struct swin_vol in, const void *in_stats,
                                 const float *gamma, const float *beta, const float *w, const float *bias, void *ws,
                                 size_t ws_bytes)
{
    struct swin_cpu_backend *be = bev;
    const struct conv_choice c = swin_cpu_conv3d_choose(be, out, in, swin_cpu_wgemm_of(be, w).bf16, 3, 1, 1);
    if (c.kernel == CONV_WINOGRAD && c.tile >= 4) { /* it checks the workspace */
        const struct swin_cpu_wino_pre pre = {.stats = in_stats, .gamma = gamma, .beta = beta};
        return swin_cpu_conv3d_winograd(be, out, stats, in, w, bias, ws, ws_bytes, c.tile, &pre);
    }
    const int rc = swin_cpu_instnorm_act(be, in, in_stats, true, gamma, beta, NULL, true);
    return rc ? rc : swin_cpu_conv3d(be, out, stats, in, w, bias, 3, 1, 1, ws, ws_bytes);
}
