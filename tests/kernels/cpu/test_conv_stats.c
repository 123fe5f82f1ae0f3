/* conv3d keeping the instance-norm statistics of its output (Winograd F(4x4x4), and F(6x6x6)
 * with bfloat16 weights: kernels/cpu/norm/in_stats.h) and instnorm_act using them, at every
 * SIMD level: the norm of
 * what the conv stored against float64 InstanceNorm3d of the same values; the same bits on
 * 1, 2 and 3 threads; a kernel that keeps none (1x1) leaving the norm to its own pass; kept
 * statistics that are wrong on purpose must show in the output (the norm reads them). */
#include "tests/kernels/cpu/op_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpu_internal.h"
#include "kernels/cpu/norm/in_stats.h"
#include "kernels/op_check.h"

/* ref = LReLU(IN(x) * g + b) in double (op_test.h), rounded to float; x dense (nv, c). */
static void naive_norm(float *ref, const float *x, size_t nv, int c, const float *g, const float *b)
{
    double *r = malloc(nv * c * sizeof *r);
    test_in_lrelu_f64(r, x, nv, c, g, b);
    for (size_t i = 0; i < nv * c; i++) ref[i] = (float)r[i];
    free(r);
}

/* conv (k^3, pad k / 2) of in into a fresh out of `pitch`, with statistics when the backend
 * keeps them for out; then instnorm_act with them. Returns the dense result (malloc'ed; NULL
 * on failure) and, through *kept, whether the conv kept statistics, through *conv_out the
 * conv's output before the norm (malloc'ed, dense). corrupt: add 0.5 to every kept slot's
 * shift of channel 0 before the norm (its mean moves by 0.5). */
static float *conv_then_norm(struct swin_cpu_backend *be, const tvol *in, const float *w, const float *bias, int k,
                             int cout, int pitch, const float *g, const float *b, bool corrupt, bool *kept,
                             float **conv_out)
{
    tvol out = tvol_new(in->v.d, in->v.h, in->v.w, cout, pitch);
    const size_t sb = swin_cpu_ops.conv3d_stats_bytes(be, out.v);
    const size_t wsb = swin_cpu_ops.conv3d_ws(be, out.v, in->v, w, k, 1, k / 2, sb > 0);
    void *ws = ws_new(wsb), *stats = sb ? ws_new(sb) : NULL;
    float *got = NULL;
    *kept = false;
    *conv_out = NULL;
    if (swin_op_conv3d(&swin_cpu_ops, be, out.v, stats, in->v, w, bias, k, 1, k / 2, ws, wsb) == 0) {
        *conv_out = tvol_dense(&out);
        if (stats) {
            struct swin_cpu_in_stats_hdr *h = stats;
            *kept = h->slots > 0;
            for (int64_t sl = 0; *kept && corrupt && sl < h->slots; sl++) swin_cpu_in_slot(stats, sl, h->c)[1] += 0.5;
        }
        if (swin_op_instnorm_act(&swin_cpu_ops, be, out.v, stats, true, g, b, NULL, true) == 0) got = tvol_dense(&out);
    }
    bool ok = ws_free(ws);
    if (stats) ok &= ws_free(stats);
    ok &= tvol_guard_ok("conv then norm", &out, 0, cout);
    tvol_free(&out);
    if (!ok) {
        free(got);
        return NULL;
    }
    return got;
}

/* One shape: cin -> cout at d x h x w, weights in [-ws, ws), bias around `offset`; bf16: the
 * weights stored as bfloat16 (every backend's bfloat16 range, cleared after). */
static bool run_case(struct swin_cpu_backend *be, int d, int h, int w, int cin, int cout, int pitch, int k, float wscale,
                     float offset, bool expect_kept, bool bf16)
{
    char name[192];
    snprintf(name, sizeof name, "conv%d %dx%dx%d %d->%d pitch %d bias ~%g%s, %s", k, d, h, w, cin, cout, pitch, offset,
             bf16 ? " bfloat16 weights" : "", test_simd_name(be->simd));
    test_rng r = {7ULL + (uint64_t)cin * 31 + (uint64_t)cout};
    tvol in = tvol_new(d, h, w, cin, cin);
    tvol_fill(&in, &r, -1.0f, 1.0f);
    const size_t nw = (size_t)k * k * k * cin * cout;
    float *wt = test_rand(&r, nw, -wscale, wscale);
    swin_bf16 *wb = bf16 ? test_bf16_copy(wt, nw, NULL) : NULL;
    const float *w_op = wb ? (const float *)(const void *)wb : wt;
    if (wb) swin_cpu_backend_set_bf16(be, wb, nw * sizeof *wb);
    float *bias = test_rand(&r, (size_t)cout, offset - 0.5f, offset + 0.5f);
    float *g = test_rand(&r, (size_t)cout, 0.5f, 1.5f), *b = test_rand(&r, (size_t)cout, -1.0f, 1.0f);
    const size_t nv = swin_vol_voxels(in.v), n = nv * (size_t)cout;
    bool kept = false, ok = true;
    if (bf16) {
        const struct swin_vol ov = {.d = d, .h = h, .w = w, .c = cout, .pitch = pitch};
        ok &= check_true("conv stats: bfloat16 weights on 48^3 run F(6x6x6)",
                         !strncmp(swin_cpu_conv3d_kernel(be, ov, in.v, w_op, k, 1, k / 2), "Winograd F(6", 12));
    }
    float *x = NULL;
    float *got = conv_then_norm(be, &in, w_op, bias, k, cout, pitch, g, b, false, &kept, &x);
    ok &= check_true(name, got != NULL && x != NULL);
    if (got && x) {
        char what[256];
        snprintf(what, sizeof what, "%s: statistics %s", name, expect_kept ? "kept by the conv" : "not kept");
        ok &= check_true(what, kept == expect_kept);
        float *ref = malloc(n * sizeof *ref);
        naive_norm(ref, x, nv, cout, g, b);
        /* the tile sums run in float over at most 216 voxels, then everything in double */
        ok &= check_close_scaled(name, got, ref, n, 2e-6);
        /* the same bits on 1 and 3 threads (slots combined in order) */
        for (int th = 1; th <= 3; th += 2) {
            struct swin_cpu_backend *other = test_backend(th);
            if (!other) return false;
            swin_cpu_backend_set_simd(other, be->simd);
            if (wb) swin_cpu_backend_set_bf16(other, wb, nw * sizeof *wb);
            bool k2;
            float *x2 = NULL, *got2 = conv_then_norm(other, &in, w_op, bias, k, cout, pitch, g, b, false, &k2, &x2);
            snprintf(what, sizeof what, "%s: %d thread(s) give the same bits", name, th);
            ok &= check_true(what, got2 && !memcmp(got2, got, n * sizeof *got));
            free(got2);
            free(x2);
            swin_cpu_backend_free(other);
        }
        if (kept) {
            /* kept statistics that are wrong must show: the norm takes them, not a pass of its own */
            float *x3 = NULL, *bad = conv_then_norm(be, &in, w_op, bias, k, cout, pitch, g, b, true, &kept, &x3);
            size_t off = 0;
            for (size_t v = 0; bad && v < nv; v++) off += fabsf(bad[v * cout] - ref[v * cout]) > 1e-3f;
            snprintf(what, sizeof what, "%s: a planted error in the kept statistics changes the output", name);
            ok &= check_true(what, off > nv / 2);
            free(bad);
            free(x3);
        }
        free(ref);
    }
    if (wb) swin_cpu_backend_set_bf16(be, NULL, 0);
    free(got); free(x); free(wt); free(wb); free(bias); free(g); free(b);
    tvol_free(&in);
    return ok;
}

static bool all_cases(struct swin_cpu_backend *be)
{
    if (be->simd < SWIN_CPU_SIMD_AVX2) {
        /* no Winograd kernel: nothing is kept, the norm's own pass runs */
        struct swin_vol out = {.d = 32, .h = 32, .w = 32, .c = 8, .pitch = 8};
        return check_true("baseline level keeps no statistics", swin_cpu_ops.conv3d_stats_bytes(be, out) == 0);
    }
    bool ok = true;
    /* F(4x4x4) from grids of 24 at every level with it: 20 output channels (a partial chunk),
     * a wider pitch, edge tiles on every axis */
    ok &= run_case(be, 24, 25, 26, 5, 20, 23, 3, 0.2f, 0.0f, true, false);
    /* a +300 offset with a spread near 0.1: each slot's own shift keeps the variance */
    ok &= run_case(be, 25, 24, 27, 3, 9, 9, 3, 0.02f, 300.0f, true, false);
    /* the wide schedule (200 x 100 channels; blocks of 4 tiles shared by the threads) */
    ok &= run_case(be, 24, 24, 25, 200, 100, 100, 3, 0.05f, 0.0f, true, false);
    /* a 1x1 conv keeps none: the statistics are marked so, the norm reads its input */
    ok &= run_case(be, 24, 24, 24, 7, 16, 16, 1, 0.3f, 2.0f, false, false);
    /* F(6x6x6) (bfloat16 weights, grids of 48): 216-voxel tiles, partial on two axes, and the
     * +300 offset */
    ok &= run_case(be, 48, 53, 50, 5, 20, 23, 3, 0.2f, 0.0f, true, true);
    ok &= run_case(be, 49, 48, 48, 3, 9, 9, 3, 0.02f, 300.0f, true, true);
    return ok;
}

int main(void) { return test_main_every_level(all_cases); }
