/* conv3d: out = conv3d(in, w) + bias, cross-correlation as torch.nn.Conv3d.
 *   in  (D, H, W, cin)  channels-last, pitch in.pitch
 *   w   (k, k, k, cin, cout) = a (k^3 cin) x cout row-major matrix
 *   out (OD, OH, OW, cout), pitch out.pitch (may be a channel slice of a concat)
 * Method: im2col per slab of R consecutive output voxels into the thread's workspace
 * (R x k^3 cin, column = tap * cin + ci, taps in (kz, ky, kx) order, zeros outside the
 * input), then one sgemm (R x K) . (K x cout) written straight into out with ldc = pitch
 * (the weight GEMM of gemm_bf16.h: OpenBLAS, or the AVX2 kernel of gemm_f32.h on a small W).
 * k = 1, stride 1, pad 0 skips im2col: the input rows are the A matrix (lda = in.pitch).
 * On CPUs with AVX-512 or AVX2 (unless the backend was capped lower) the convs with an
 * im2col step and more than SMALL_GRID output voxels go to the implicit-GEMM kernel of
 * conv3d_avx512.c or conv3d_avx2.c instead, which reads the input in place (one input
 * channel: conv3d_c1_avx2.c at both levels). On small grids
 * that kernel streams the whole weight matrix per tile of voxels, with a stride of cout
 * floats between input channels, and OpenBLAS, which packs the weights once, wins; so it
 * does on the 1x1x1 convs. The measurements behind SMALL_GRID: bench/results/conv3d_cpu.md.
 * With bfloat16 weights (w in the range of swin_cpu_backend_set_bf16) every level
 * takes im2col and the bfloat16 GEMM of gemm_bf16.h in place of sgemm.
 * Threads claim (slab, column block) items dynamically; the columns are split only when
 * there are fewer than 2 slabs per thread. fp32 accumulation.
 * A conv with k > 1 and at most TAPS_MAX_VOXELS output voxels runs one accumulating GEMM
 * per tap instead (conv3d_taps_avx2.c; AVX2 and AVX-512 levels, float32 weights), and a
 * larger 3x3x3 stride-1 pad-1 conv whose shape the rule of winograd.c picks runs the Winograd
 * kernel (winograd.h), which transforms the weights (float32, or bfloat16 widened) into the
 * workspace per call. */
#include "kernels/cpu/bf16.h"
#include "kernels/cpu/conv/conv3d_internal.h"
#include "kernels/cpu/winograd/winograd.h"

#include <string.h>

/* Output voxels up to which a conv with an im2col step runs OpenBLAS (24^3). */
#define SMALL_GRID (24L * 24 * 24)
/* Output voxels up to which a conv with k > 1 runs the per-tap GEMMs (6^3); measured against
 * Winograd F(2x2x2) and im2col + OpenBLAS in bench/results/conv3d_cpu.md. */
#define TAPS_MAX_VOXELS (6L * 6 * 6)

/* Slab rows: big enough for an efficient GEMM, small enough that the im2col slab
 * (R x K floats) stays around 4 MB per thread. */
static long conv_rows(long nout, long kdim)
{
    long r = (1L << 20) / kdim;
    if (r > 512) r = 512;
    if (r < 16) r = 16;
    return r < nout ? r : nout;
}

size_t swin_cpu_conv3d_direct_ws(void *bev, struct swin_vol out, struct swin_vol in, int k)
{
    struct swin_cpu_backend *be = bev;
    long kdim = (long)k * k * k * in.c;
    long rows = conv_rows((long)swin_vol_voxels(out), kdim);
    return SWIN_CPU_ALIGN + (size_t)be->nthreads * swin_cpu_round((size_t)rows * kdim * sizeof(float));
}

/* Whether the shape (with the level and the backend's conv choice) picks the per-tap GEMMs:
 * every conv at TAPS_ONLY, else k > 1 on small grids; AVX2 and AVX-512 levels only. Whether
 * they run also needs float32 weights (swin_cpu_conv3d_runs_taps); conv3d_ws has no weights. */
static bool taps_by_shape(const struct swin_cpu_backend *be, struct swin_vol out, int k)
{
    if (be->simd == SWIN_CPU_SIMD_BASELINE) return false;
    if (be->conv_choice == SWIN_CPU_CONV_TAPS_ONLY) return true;
    return be->conv_choice == SWIN_CPU_CONV_BY_SHAPE && k > 1 && (long)swin_vol_voxels(out) <= TAPS_MAX_VOXELS;
}

bool swin_cpu_conv3d_runs_taps(const struct swin_cpu_backend *be, struct swin_vol out, const float *w, int k)
{
    return taps_by_shape(be, out, k) && !swin_cpu_wgemm_of(be, w).bf16;
}

size_t swin_cpu_conv3d_ws(void *bev, struct swin_vol out, struct swin_vol in, int k, bool stats)
{
    (void)stats;
    struct swin_cpu_backend *be = bev;
    /* bfloat16 weights where the shape picks the per-tap GEMMs take im2col: room for both */
    if (taps_by_shape(be, out, k)) {
        const size_t taps = swin_cpu_conv3d_taps_ws(be, out, in), direct = swin_cpu_conv3d_direct_ws(be, out, in, k);
        return taps > direct ? taps : direct;
    }
    /* Stride and pad are not known here. With k 3 and out dims = in dims, every axis n has
     * n = (n + 2 pad - 3) / stride + 1: stride 1 pad 1, or n <= 3 with stride 2 (pad 1 or 2),
     * which the rule (grids of at least 6) never picks; so where the rule holds, conv3d runs
     * Winograd and the workspace is exactly its own (no direct-sized pages left untouched). */
    if (k == 3 && out.d == in.d && out.h == in.h && out.w == in.w && swin_cpu_winograd_wins(be, out, in))
        return swin_cpu_winograd_ws(be, out, in, swin_cpu_winograd_tile(be, out, in));
    return swin_cpu_conv3d_direct_ws(be, out, in, k);
}

/* Row r of the im2col matrix for output voxel (oz, oy, ox). */
static void im2col_row(const struct conv_task *t, float *row, int oz, int oy, int ox)
{
    const struct swin_vol in = t->in;
    const int k = t->k, cin = in.c;
    for (int kz = 0; kz < k; kz++) {
        int iz = oz * t->stride - t->pad + kz;
        for (int ky = 0; ky < k; ky++) {
            int iy = oy * t->stride - t->pad + ky;
            for (int kx = 0; kx < k; kx++, row += cin) {
                int ix = ox * t->stride - t->pad + kx;
                if (iz < 0 || iz >= in.d || iy < 0 || iy >= in.h || ix < 0 || ix >= in.w) {
                    memset(row, 0, (size_t)cin * sizeof(float));
                    continue;
                }
                const float *src = swin_vol_f32(in) + (((int64_t)iz * in.h + iy) * in.w + ix) * in.pitch;
                memcpy(row, src, (size_t)cin * sizeof(float));
            }
        }
    }
}

/* Columns [c0, ...) of the weight matrix, float32 or bfloat16 (gemm_bf16.h reads a
 * bfloat16 matrix through the same pointer type). */
static const float *weight_cols(const struct conv_task *t, int c0)
{
    return t->gemm.bf16 ? (const float *)(const void *)((const swin_bf16 *)(const void *)t->w + c0) : t->w + c0;
}

static void conv_run(void *p, int tid, int nth)
{
    struct conv_task *t = p;
    const struct swin_vol out = t->out, in = t->in;
    const long nout = (long)swin_vol_voxels(out);
    const int cout = out.c;
    float *a = (float *)(t->ws + (size_t)tid * t->slice);
    if (t->implicit) {
        /* the slice's first cin floats are the zero row of the padding */
        memset(a, 0, (size_t)in.c * sizeof(float));
        if (in.c == 1) swin_cpu_conv3d_c1_avx2_run(t, &t->next);
        else if (t->simd == SWIN_CPU_SIMD_AVX512) swin_cpu_conv3d_avx512_run(t, &t->next, a);
        else swin_cpu_conv3d_avx2_run(t, &t->next, a);
        return;
    }
    const long nslab = (nout + t->rows - 1) / t->rows;
    const int ncb = (cout + t->col_block - 1) / t->col_block;
    long built = -1, item, end;
    while (swin_cpu_claim(&t->next, nslab * ncb, 1, &item, &end)) {
        const long slab = item / ncb, b = slab * t->rows, e = b + t->rows < nout ? b + t->rows : nout, m = e - b;
        const int c0 = (int)(item % ncb) * t->col_block, nc = cout - c0 < t->col_block ? cout - c0 : t->col_block;
        float *c = swin_vol_f32(out) + b * out.pitch + c0;
        if (t->bias)
            for (long r = 0; r < m; r++) memcpy(c + r * out.pitch, t->bias + c0, (size_t)nc * sizeof(float));
        if (t->rows_are_a) {
            swin_cpu_wgemm_run(t->gemm, (int)m, nc, in.c, swin_vol_f32(in) + b * in.pitch, in.pitch,
                               weight_cols(t, c0), cout, t->bias != NULL, c, out.pitch);
            continue;
        }
        if (slab != built) {
            for (long v = b; v < e; v++) {
                int ox = (int)(v % out.w), oy = (int)(v / out.w % out.h), oz = (int)(v / ((long)out.w * out.h));
                im2col_row(t, a + (v - b) * t->kdim, oz, oy, ox);
            }
            built = slab;
        }
        swin_cpu_wgemm_run(t->gemm, (int)m, nc, (int)t->kdim, a, (int)t->kdim, weight_cols(t, c0), cout,
                           t->bias != NULL, c, out.pitch);
    }
}


static bool rows_are_a(int k, int stride, int pad) { return k == 1 && stride == 1 && pad == 0; }

/* The implicit-GEMM kernel, else im2col (or the k 1 rows) + GEMM. */
static bool runs_implicit(const struct swin_cpu_backend *be, struct swin_cpu_wgemm gemm, struct swin_vol out, int k,
                          int stride, int pad)
{
    return be->simd != SWIN_CPU_SIMD_BASELINE && !gemm.bf16 &&
           (be->conv_choice == SWIN_CPU_CONV_IMPLICIT_ONLY ||
            (!rows_are_a(k, stride, pad) && (long)swin_vol_voxels(out) > SMALL_GRID));
}

static bool runs_winograd(const struct swin_cpu_backend *be, struct swin_vol out, struct swin_vol in, int k,
                          int stride, int pad)
{
    return k == 3 && stride == 1 && pad == 1 && swin_cpu_winograd_wins(be, out, in);
}

const char *swin_cpu_conv3d_kernel(const struct swin_cpu_backend *be, struct swin_vol out, struct swin_vol in,
                                   const float *w, int k, int stride, int pad)
{
    const struct swin_cpu_wgemm gemm = swin_cpu_wgemm_of(be, w);
    if (swin_cpu_conv3d_runs_taps(be, out, w, k)) return "per-tap GEMMs avx2";
    if (runs_winograd(be, out, in, k, stride, pad)) {
        const int tile = swin_cpu_winograd_tile(be, out, in);
        if (swin_cpu_winograd_wide(be, out, in, tile))
            return tile == 4 ? "Winograd F(4x4x4,3x3x3) wide" : "Winograd F(2x2x2,3x3x3) wide";
        return tile == 4 ? "Winograd F(4x4x4,3x3x3)" : "Winograd F(2x2x2,3x3x3)";
    }
    if (runs_implicit(be, gemm, out, k, stride, pad)) {
        if (in.c == 1) return "one-channel direct avx2";
        return be->simd == SWIN_CPU_SIMD_AVX512 ? "implicit GEMM avx512" : "implicit GEMM avx2";
    }
    const int kdim = rows_are_a(k, stride, pad) ? in.c : k * k * k * in.c;
    const bool avx2 = swin_cpu_wgemm_avx2(gemm, out.c, kdim);
    if (rows_are_a(k, stride, pad)) return gemm.bf16 ? "1x1 bf16 GEMM" : avx2 ? "1x1 AVX2 GEMM" : "1x1 sgemm";
    return gemm.bf16 ? "im2col + bf16 GEMM" : avx2 ? "im2col + AVX2 GEMM" : "im2col + sgemm";
}

/* The im2col / implicit-GEMM kernels whatever the Winograd rule says (bench_cpu_ops times both);
 * the workspace is swin_cpu_conv3d_direct_ws. */
int swin_cpu_conv3d_direct(void *bev, struct swin_vol out, struct swin_vol in, const float *w, const float *bias,
                           int k, int stride, int pad, void *ws, size_t ws_bytes)
{
    struct swin_cpu_backend *be = bev;
    (void)ws_bytes;
    struct conv_task t = {.out = out, .in = in, .w = w, .bias = bias, .k = k, .stride = stride, .pad = pad,
                          .simd = be->simd, .gemm = swin_cpu_wgemm_of(be, w)};
    const long nout = (long)swin_vol_voxels(out);
    t.kdim = (long)k * k * k * in.c;
    t.rows = conv_rows(nout, t.kdim);
    t.rows_are_a = rows_are_a(k, stride, pad);
    t.implicit = runs_implicit(be, t.gemm, out, k, stride, pad);
    /* fewer than 2 slabs per thread: split the columns into blocks of a multiple of 16 */
    const long nslab = (nout + t.rows - 1) / t.rows, want = 2L * be->nthreads;
    const long ncb = nslab >= want ? 1 : (want + nslab - 1) / nslab;
    const int cb = (int)((out.c + ncb - 1) / ncb + 15) / 16 * 16;
    t.col_block = cb < out.c ? cb : out.c;
    t.ws = swin_cpu_align_ptr(ws);
    t.slice = swin_cpu_round((size_t)t.rows * t.kdim * sizeof(float));
    atomic_init(&t.next, 0);
    swin_cpu_run(be, conv_run, &t);
    return 0;
}

size_t swin_cpu_conv3d_stats_bytes(void *be, struct swin_vol out)
{
    (void)be;
    (void)out;
    return 0;
}

size_t swin_cpu_conv3d_taps_ws(void *bev, struct swin_vol out, struct swin_vol in)
{
    (void)out;
    struct swin_cpu_backend *be = bev;
    return SWIN_CPU_ALIGN + (size_t)be->nthreads * swin_cpu_round((size_t)in.c * TAPS_CHUNK * sizeof(float));
}

static void taps_run(void *p, int tid, int nth)
{
    (void)nth;
    struct conv_task *t = p;
    swin_cpu_conv3d_taps_avx2_run(t, &t->next, (float *)(t->ws + (size_t)tid * t->slice));
}

int swin_cpu_conv3d_taps(void *bev, struct swin_vol out, struct swin_vol in, const float *w, const float *bias, int k,
                         int stride, int pad, void *ws, size_t ws_bytes)
{
    struct swin_cpu_backend *be = bev;
    if (be->simd == SWIN_CPU_SIMD_BASELINE || swin_cpu_wgemm_of(be, w).bf16)
        return swin_cpu_fail(be, SWIN_ERR_ARG, "conv3d (per-tap GEMMs): needs AVX2 + FMA and float32 weights");
    const size_t need = swin_cpu_conv3d_taps_ws(be, out, in);
    if (!ws || ws_bytes < need)
        return swin_cpu_fail(be, SWIN_ERR_ARG, "conv3d (per-tap GEMMs): workspace %zu bytes, need %zu", ws ? ws_bytes : 0,
                             need);
    struct conv_task t = {.out = out, .in = in, .w = w, .bias = bias, .k = k, .stride = stride, .pad = pad};
    t.ws = swin_cpu_align_ptr(ws);
    t.slice = swin_cpu_round((size_t)in.c * TAPS_CHUNK * sizeof(float));
    atomic_init(&t.next, 0);
    swin_cpu_run(be, taps_run, &t);
    return 0;
}

int swin_cpu_conv3d(void *bev, struct swin_vol out, void *stats, struct swin_vol in, const float *w,
                    const float *bias, int k, int stride, int pad, void *ws, size_t ws_bytes)
{
    struct swin_cpu_backend *be = bev;
    (void)stats; /* always NULL: conv3d_stats_bytes is 0 */
    if (swin_cpu_conv3d_runs_taps(be, out, w, k))
        return swin_cpu_conv3d_taps(be, out, in, w, bias, k, stride, pad, ws, ws_bytes);
    if (runs_winograd(be, out, in, k, stride, pad))
        return swin_cpu_conv3d_winograd(be, out, in, w, bias, ws, ws_bytes, swin_cpu_winograd_tile(be, out, in));
    return swin_cpu_conv3d_direct(be, out, in, w, bias, k, stride, pad, ws, ws_bytes);
}
