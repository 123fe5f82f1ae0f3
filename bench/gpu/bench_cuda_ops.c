/* Timing of the CUDA ops at the f=48, 96^3 shapes of the forward pass, beside cuDNN and
 * cuBLAS on the same shapes (the yardstick, yardstick.h), for a session that has a GPU
 * (nvcc build: build-cuda/tests/kernels/cuda/bench_cuda_ops_gpu):
 *
 *   bench_cuda_ops_gpu [--reps N] [--div D] [--half] [--json FILE] [--max-channels C]
 *
 * Three tables:
 *   ops     the heavy ops of stage 0 and full resolution, with GFLOP/s and GB/s (FLOPs and
 *           compulsory DRAM bytes counted as in bench/gpu/estimates.py), among them a
 *           full-resolution conv with its instance norm twice: the norm's statistics kept
 *           by the conv (conv3d's stats, as the forward runs it) and read from its output;
 *   conv    every distinct conv3d shape of the forward (encoder, patch embedding, decoders,
 *           output; uses = how often one forward runs it): swinrun's conv3d, cuDNN's fastest
 *           forward algorithm (cudnnFindConvolutionForwardAlgorithmEx) on the same
 *           channels-last input and weights, the ratio swinrun / cuDNN, and the largest
 *           difference of the two outputs relative to cuDNN's largest magnitude;
 *   swin    per stage, cuBLAS GemmEx on the linear layers' GEMMs (qkv, proj, fc1, fc2,
 *           token-major), and swinrun's swin_attention and swin_mlp set against the cuBLAS
 *           time of the GEMMs inside them (the ops also do layer norm, the window
 *           attention, GELU and the window gather/scatter: the ratio is an upper bound on
 *           what their GEMMs cost beside cuBLAS's).
 * Float32 mode compares with float32 arithmetic on both sides (cuDNN CUDNN_FMA_MATH, cuBLAS
 * CUBLAS_COMPUTE_32F: no TF32); --half with float16 storage and float32 accumulation on
 * both sides (tensor cores allowed to cuDNN and cuBLAS).
 * Built without cuDNN (yardstick.h: YARD_NO_CUDNN), the conv table has no reference column.
 * Every time is CUDA events recorded on the backend's stream (swin_cuda_backend_stream)
 * around N runs after one warm-up run, divided by N. --div D divides the spatial sizes by
 * D (at least 1): the emulated build runs it with --div 12 --reps 1 against the emulated
 * cuDNN and cuBLAS as a smoke test, where the times mean nothing but the outputs of
 * swinrun and cuDNN must agree (with --max-channels 96: convs and stages of more channels are
 * skipped, to keep the emulated run short). --json FILE writes every row as JSON as well.
 * Exit status: 0, 1 when an op failed or a conv disagrees with cuDNN (tolerance
 * 2e-4 float32, 1e-2 half, relative to the largest magnitude), 77 without a device.
 * Inputs are random. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/cuda_backend.h"
#include "tests/common/check.h"
#include "tests/kernels/cuda/yardstick.h"

static enum swin_dtype dtype = SWIN_F32;
static char *flat;
static size_t flat_used, flat_cap;
static test_rng rng = {0xbe7c4};
static cudaStream_t stream;
static int reps = 5;

static const float *weight(size_t n, float a)
{
    const size_t bytes = (n * sizeof(float) + 255) / 256 * 256;
    if (flat_used + bytes > flat_cap) {
        fprintf(stderr, "weight buffer too small\n");
        exit(1);
    }
    float *w = (float *)(flat + flat_used);
    flat_used += bytes;
    test_fill_uniform(&rng, w, n, -a, a);
    return w;
}

static void *dalloc(size_t bytes)
{
    void *p = NULL;
    if (bytes && cudaMalloc(&p, bytes) != cudaSuccess) {
        fprintf(stderr, "out of device memory for %zu bytes\n", bytes);
        exit(1);
    }
    return p;
}

/* n random values in [-1, 1] on the device, in the backend's storage type. */
static void *drandom(size_t n)
{
    float *host = malloc(n * sizeof(float));
    _Float16 *half = malloc(n * sizeof(_Float16));
    void *d = dalloc(n * swin_dtype_bytes(dtype));
    if (!host || !half) {
        fprintf(stderr, "out of host memory\n");
        exit(1);
    }
    test_fill_uniform(&rng, host, n, -1.0f, 1.0f);
    for (size_t i = 0; i < n; i++) half[i] = (_Float16)host[i];
    cudaMemcpy(d, dtype == SWIN_F16 ? (void *)half : (void *)host, n * swin_dtype_bytes(dtype), cudaMemcpyHostToDevice);
    /* a pageable cudaMemcpy may return before it lands, and the backend's stream does not
     * wait for the legacy stream */
    cudaDeviceSynchronize();
    free(half);
    free(host);
    return d;
}

static struct swin_vol dvol(int d, int h, int w, int c)
{
    struct swin_vol v = {NULL, d, h, w, c, c, dtype};
    v.data = drandom((size_t)d * h * w * c);
    return v;
}

/* Device values as float32 on the host. */
static float *download(const void *d, size_t n)
{
    float *x = malloc(n * sizeof *x);
    void *raw = malloc(n * swin_dtype_bytes(dtype));
    cudaStreamSynchronize(stream); /* the legacy-stream copy does not wait for it */
    cudaMemcpy(raw, d, n * swin_dtype_bytes(dtype), cudaMemcpyDeviceToHost);
    for (size_t i = 0; i < n; i++) x[i] = dtype == SWIN_F16 ? (float)((_Float16 *)raw)[i] : ((float *)raw)[i];
    free(raw);
    return x;
}

/* Milliseconds per call of fn(ctx) by CUDA events on the backend's stream: one warm-up
 * call, then `reps` calls between two events. Negative when a call failed. */
typedef int (*call_fn)(void *ctx);
static double time_ms(call_fn fn, void *ctx)
{
    cudaEvent_t t0, t1;
    float ms = -1.0f;
    if (fn(ctx)) return -1.0;
    cudaEventCreate(&t0);
    cudaEventCreate(&t1);
    cudaEventRecord(t0, stream);
    int rc = 0;
    for (int r = 0; rc == 0 && r < reps; r++) rc = fn(ctx);
    cudaEventRecord(t1, stream);
    if (cudaEventSynchronize(t1) != cudaSuccess || rc || cudaEventElapsedTime(&ms, t0, t1) != cudaSuccess) ms = -1.0f;
    cudaEventDestroy(t0);
    cudaEventDestroy(t1);
    return ms < 0 ? -1.0 : ms / reps;
}

/* ---- the swinrun ops ---------------------------------------------------------------------- */
/* CONV_IN: conv3d then instnorm_act (LeakyReLU) on its output, the statistics read from
 * it; CONV_IN_KEPT: the same with the statistics kept by the conv. */
enum kind { CONV, CONV_IN, CONV_IN_KEPT, CONVT, IN, LN, ATTN, MLP, MERGE };
struct op {
    struct swin_cuda_backend *be;
    enum kind kind;
    struct swin_vol out, in;
    const float *w;
    int k, stride, pad;
    struct swin_block_w blk;
    struct swin_window_geom g;
    int hidden;
    void *ws, *stats;
    size_t ws_bytes;
};

static int op_run(void *ctx)
{
    struct op *b = ctx;
    const struct swin_ops *o = &swin_cuda_ops;
    switch (b->kind) {
    case CONV: return o->conv3d(b->be, b->out, NULL, b->in, b->w, NULL, b->k, b->stride, b->pad, b->ws, b->ws_bytes);
    case CONV_IN:
    case CONV_IN_KEPT: {
        const int rc = o->conv3d(b->be, b->out, b->stats, b->in, b->w, NULL, b->k, b->stride, b->pad, b->ws, b->ws_bytes);
        return rc ? rc : o->instnorm_act(b->be, b->out, b->stats, true, NULL, NULL, NULL, true);
    }
    case CONVT: return o->conv_transpose2(b->be, b->out, b->in, b->w);
    case IN: return o->instnorm_act(b->be, b->in, NULL, true, NULL, NULL, NULL, true);
    case LN: return o->layernorm(b->be, b->out, b->in, NULL, NULL);
    case ATTN: return o->swin_attention(b->be, b->in, &b->blk, &b->g, b->ws, b->ws_bytes);
    case MLP: return o->swin_mlp(b->be, b->in, &b->blk, b->hidden, b->ws, b->ws_bytes);
    case MERGE:
        return o->patch_merge(b->be, b->out, b->in, swin_merge_order_v15, b->blk.norm1_w, b->blk.norm1_b, b->w, b->ws,
                              b->ws_bytes);
    }
    return 1;
}

static void op_workspace(struct op *b)
{
    size_t ws = 0;
    if (b->kind == CONV || b->kind == CONV_IN || b->kind == CONV_IN_KEPT)
        ws = swin_cuda_ops.conv3d_ws(b->be, b->out, b->in, b->w, b->k, b->stride, b->pad, b->kind == CONV_IN_KEPT);
    b->stats = b->kind == CONV_IN_KEPT ? dalloc(swin_cuda_ops.conv3d_stats_bytes(b->be, b->out)) : NULL;
    if (b->kind == ATTN) ws = swin_cuda_ops.swin_attention_ws(b->be, b->in, &b->g);
    if (b->kind == MLP) ws = swin_cuda_ops.swin_mlp_ws(b->be, b->in, b->hidden);
    if (b->kind == MERGE) ws = swin_cuda_ops.patch_merge_ws(b->be, b->out, b->in);
    b->ws = dalloc(ws);
    b->ws_bytes = ws;
}

static void op_free(struct op *b)
{
    cudaFree(b->out.data);
    cudaFree(b->in.data);
    cudaFree(b->ws);
    cudaFree(b->stats);
}

static struct swin_block_w block_weights(int C, int heads)
{
    struct swin_block_w b;
    memset(&b, 0, sizeof b);
    b.norm1_w = weight(C, 0.1f), b.norm1_b = weight(C, 0.1f), b.qkv_w = weight((size_t)C * 3 * C, 0.1f);
    b.qkv_b = weight(3 * C, 0.1f), b.bias_table = weight((size_t)13 * 13 * 13 * heads, 0.5f);
    b.proj_w = weight((size_t)C * C, 0.1f), b.proj_b = weight(C, 0.1f);
    b.norm2_w = weight(C, 0.1f), b.norm2_b = weight(C, 0.1f);
    b.fc1_w = weight((size_t)C * 4 * C, 0.1f), b.fc1_b = weight(4 * C, 0.1f);
    b.fc2_w = weight((size_t)4 * C * C, 0.1f), b.fc2_b = weight(C, 0.1f);
    return b;
}

/* ---- the forward's convolutions (f = 48, 1 input channel, 14 classes) ---------------------- */
struct conv_shape {
    const char *name;
    int side, cin, cout, k, stride, uses; /* side: input side at 96^3 */
};
static const struct conv_shape convs[] = {
    {"encoder1 3x3x3", 96, 1, 48, 3, 1, 1},         {"encoder1 1x1 residual", 96, 1, 48, 1, 1, 1},
    {"encoder1/decoder1 3x3x3", 96, 48, 48, 3, 1, 2}, {"decoder1 3x3x3", 96, 96, 48, 3, 1, 1},
    {"decoder1 1x1 residual", 96, 96, 48, 1, 1, 1}, {"output 1x1", 96, 48, 14, 1, 1, 1},
    {"patch embed 2x2x2 s2", 96, 1, 48, 2, 2, 1},   {"encoder2/decoder2 3x3x3", 48, 48, 48, 3, 1, 3},
    {"decoder2 3x3x3", 48, 96, 48, 3, 1, 1},        {"decoder2 1x1 residual", 48, 96, 48, 1, 1, 1},
    {"encoder3/decoder3 3x3x3", 24, 96, 96, 3, 1, 3}, {"decoder3 3x3x3", 24, 192, 96, 3, 1, 1},
    {"decoder3 1x1 residual", 24, 192, 96, 1, 1, 1}, {"encoder4/decoder4 3x3x3", 12, 192, 192, 3, 1, 3},
    {"decoder4 3x3x3", 12, 384, 192, 3, 1, 1},      {"decoder4 1x1 residual", 12, 384, 192, 1, 1, 1},
    {"decoder5 3x3x3", 6, 768, 384, 3, 1, 1},       {"decoder5 3x3x3 384", 6, 384, 384, 3, 1, 1},
    {"decoder5 1x1 residual", 6, 768, 384, 1, 1, 1}, {"encoder10 3x3x3", 3, 768, 768, 3, 1, 2},
};
#define NCONV (int)(sizeof convs / sizeof convs[0])

struct conv_row {
    double swin_ms, ref_ms, diff;
    int side, algo;
};

/* Arguments of one timed library call. */
struct yard_call {
    struct yard *y;
    struct yard_conv *c;
    int M, N, K;
    const void *X, *W;
    void *Y;
};
static int yard_conv_call(void *ctx)
{
    struct yard_call *a = ctx;
    return yard_conv_run(a->y, a->c);
}
static int yard_gemm_call(void *ctx)
{
    struct yard_call *a = ctx;
    return yard_gemm(a->y, dtype == SWIN_F16, a->M, a->N, a->K, a->X, a->W, a->Y);
}

static int imax(int a, int b)
{
    return a > b ? a : b;
}

static void json_num(FILE *f, const char *key, double v, const char *sep)
{
    if (v < 0 || !isfinite(v)) fprintf(f, "\"%s\": null%s", key, sep);
    else fprintf(f, "\"%s\": %.6g%s", key, v, sep);
}

int main(int argc, char **argv)
{
    int div = 1, max_ch = 1 << 30;
    const char *json = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--half")) dtype = SWIN_F16;
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--div") && i + 1 < argc) div = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
        else if (!strcmp(argv[i], "--max-channels") && i + 1 < argc) max_ch = atoi(argv[++i]);
        else reps = 0; /* unknown: usage */
    }
    if (reps < 1 || div < 1) {
        fprintf(stderr, "usage: %s [--reps N] [--div D] [--half] [--json FILE] [--max-channels C]\n", argv[0]);
        return 2;
    }
    const int half = dtype == SWIN_F16;
    const int f = 48, F = imax(1, 96 / div), H = imax(1, 48 / div); /* full-resolution and stage-0 sides */
    flat_cap = (size_t)112 << 20;
    flat = aligned_alloc(256, flat_cap);

    /* Weights first: the backend uploads them when it is created. Every conv shape takes a
     * prefix of one (27, 768, 768) block: any prefix is a valid random (k^3, cin, cout). */
    const float *conv_w = weight((size_t)27 * 768 * 768, 0.05f);
    const float *convt = weight((size_t)8 * f * f, 0.1f), *red = weight((size_t)16 * f * f, 0.05f);
    struct swin_block_w stage_blk[4], mb = {0};
    for (int s = 0; s < 4; s++) stage_blk[s] = block_weights(f << s, 3 << s);
    mb.norm1_w = weight(8 * f, 0.1f), mb.norm1_b = weight(8 * f, 0.1f);

    struct swin_model m = {0};
    m.flat = flat;
    m.flat_bytes = flat_used;
    struct swin_cuda_backend *be;
    swin_error err = {0};
    if (swin_cuda_backend_create(0, &m, dtype, &be, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        free(flat);
        return err.status == SWIN_ERR_BACKEND ? 77 : 1;
    }
    stream = (cudaStream_t)swin_cuda_backend_stream(be);
    char device[256] = "?";
    struct cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) snprintf(device, sizeof device, "%s", prop.name);

    char ref_name[640] = "", msg[512] = "";
    struct yard yard;
    const int have_ref = yard_init(&yard, stream, msg, sizeof msg) == 0;
    if (have_ref)
        yard_describe(ref_name, sizeof ref_name);
    else {
        fprintf(stderr, "reference libraries unusable: %s\n", msg);
        snprintf(ref_name, sizeof ref_name, "none (%s)", msg);
    }
    bool ok = true;
    printf("device %s; %s storage, %d reps, sides divided by %d; reference: %s\n", device,
           half ? "float16" : "float32", reps, div, ref_name);

    /* ---- ops ---- */
    enum { MAX_OPS = 10 };
    struct op b[MAX_OPS], *x;
    const char *names[MAX_OPS];
    double flops[MAX_OPS], bytes[MAX_OPS];
    int nb = 0;
    const double V = (double)F * F * F, v1 = (double)H * H * H;
#define ADD(nm, kd) (names[nb] = (nm), memset(&b[nb], 0, sizeof b[nb]), b[nb].be = be, b[nb].kind = (kd), &b[nb++])
    x = ADD("conv3d 3x3x3 48->48, full res", CONV);
    x->out = dvol(F, F, F, f), x->in = dvol(F, F, F, f), x->w = conv_w, x->k = 3, x->stride = 1, x->pad = 1;
    flops[nb - 1] = 2.0 * 27 * V * f * f, bytes[nb - 1] = 4.0 * (2 * V * f);
    x = ADD("conv3d 3x3x3 96->48, full res", CONV);
    x->out = dvol(F, F, F, f), x->in = dvol(F, F, F, 2 * f), x->w = conv_w, x->k = 3, x->stride = 1, x->pad = 1;
    flops[nb - 1] = 2.0 * 27 * V * 2 * f * f, bytes[nb - 1] = 4.0 * (3 * V * f);
    for (int kept = 0; kept < 2; kept++) {
        x = ADD(kept ? "conv 48->48 + instnorm, statistics kept" : "conv 48->48 + instnorm, statistics read",
                kept ? CONV_IN_KEPT : CONV_IN);
        x->out = dvol(F, F, F, f), x->in = dvol(F, F, F, f), x->w = conv_w, x->k = 3, x->stride = 1, x->pad = 1;
        flops[nb - 1] = 2.0 * 27 * V * f * f + 7.0 * V * f, bytes[nb - 1] = 4.0 * ((kept ? 4 : 5) * V * f);
    }
    x = ADD("conv_transpose2 48->48 to full res", CONVT);
    x->out = dvol(F, F, F, f), x->in = dvol(H, H, H, f), x->w = convt;
    flops[nb - 1] = 2.0 * 8 * v1 * f * f, bytes[nb - 1] = 4.0 * (v1 * f + V * f);
    x = ADD("instnorm_act lrelu, full res 48 ch", IN);
    x->in = dvol(F, F, F, f);
    flops[nb - 1] = 7.0 * V * f, bytes[nb - 1] = 4.0 * 4 * V * f;
    x = ADD("layernorm stage 0 (48 ch)", LN);
    x->out = dvol(H, H, H, f), x->in = dvol(H, H, H, f);
    flops[nb - 1] = 6.0 * v1 * f, bytes[nb - 1] = 4.0 * 2 * v1 * f;
    x = ADD("swin_attention stage 0, shifted", ATTN);
    x->in = dvol(H, H, H, f), x->blk = stage_blk[0], x->g = swin_window_geom_make((int[3]){H, H, H}, (int[3]){7, 7, 7}, 3, true);
    {
        const double n = (double)x->g.win[0] * x->g.win[1] * x->g.win[2];
        const double P = (double)x->g.padded[0] * x->g.padded[1] * x->g.padded[2];
        flops[nb - 1] = 2.0 * P * f * 4 * f + 4.0 * n * P * f, bytes[nb - 1] = 4.0 * (2 * v1 * f + 9 * P * f);
    }
    x = ADD("swin_mlp stage 0", MLP);
    x->in = dvol(H, H, H, f), x->blk = stage_blk[0], x->hidden = 4 * f;
    flops[nb - 1] = 2.0 * 2 * v1 * f * 4 * f, bytes[nb - 1] = 4.0 * (3 * v1 * f + 2 * v1 * 4 * f);
    x = ADD("patch_merge stage 0", MERGE);
    x->out = dvol(imax(1, H / 2), imax(1, H / 2), imax(1, H / 2), 2 * f), x->in = dvol(H, H, H, f), x->w = red,
    x->blk = mb;
    flops[nb - 1] = 2.0 * v1 / 8 * 8 * f * 2 * f, bytes[nb - 1] = 4.0 * (v1 * f + 2 * v1 / 8 * 8 * f);
#undef ADD
    double op_ms[MAX_OPS];
    printf("\n%-40s %10s %10s %10s\n", "op (FLOPs, bytes as in estimates.py)", "ms", "GFLOP/s", "GB/s");
    for (int i = 0; i < nb; i++) {
        op_workspace(&b[i]);
        op_ms[i] = time_ms(op_run, &b[i]);
        if (op_ms[i] < 0) {
            fprintf(stderr, "FAIL %s: %s\n", names[i], swin_cuda_ops.last_error(be));
            ok = false;
        } else {
            const double by = bytes[i] * (double)swin_dtype_bytes(dtype) / 4.0;
            printf("%-40s %10.3f %10.1f %10.1f\n", names[i], op_ms[i], flops[i] / op_ms[i] * 1e-6, by / op_ms[i] * 1e-6);
        }
        op_free(&b[i]);
    }

    /* ---- convolutions against cuDNN ---- */
    struct conv_row cr[NCONV];
    double tot_swin = 0, tot_ref = 0;
    printf("\n%-26s %5s %4s %4s %3s %4s %10s %10s %7s %9s  %s\n", "conv3d (forward's shapes)", "side", "cin", "cout",
           "k", "uses", "swinrun ms", "cuDNN ms", "ratio", "max diff", "cuDNN algorithm");
    for (int i = 0; i < NCONV; i++) {
        const struct conv_shape *s = &convs[i];
        struct conv_row *r = &cr[i];
        struct op c;
        memset(&c, 0, sizeof c);
        memset(r, 0, sizeof *r);
        r->ref_ms = r->diff = -1.0;
        r->algo = -1;
        if (s->cin > max_ch || s->cout > max_ch) {
            r->swin_ms = -1.0;
            printf("%-26s skipped (more than %d channels)\n", s->name, max_ch);
            continue;
        }
        const int side = imax(s->k, imax(1, s->side / div)), pad = s->k == 3 ? 1 : 0;
        const int oside = (side + 2 * pad - s->k) / s->stride + 1;
        r->side = side;
        c.be = be, c.kind = CONV, c.w = conv_w, c.k = s->k, c.stride = s->stride, c.pad = pad;
        c.in = dvol(side, side, side, s->cin), c.out = dvol(oside, oside, oside, s->cout);
        op_workspace(&c);
        r->swin_ms = time_ms(op_run, &c);
        if (r->swin_ms < 0) {
            fprintf(stderr, "FAIL conv %s: %s\n", s->name, swin_cuda_ops.last_error(be));
            ok = false;
        }
        const size_t ny = (size_t)oside * oside * oside * s->cout;
#ifndef YARD_NO_CUDNN
        const double tol = half ? 1e-2 : 2e-4;
        if (have_ref) {
            void *ref_out = dalloc(ny * swin_dtype_bytes(dtype));
            struct yard_conv yc;
            struct yard_call a = {&yard, &yc, 0, 0, 0, NULL, NULL, NULL};
            if (yard_conv_setup(&yard, &yc, half, side, side, side, s->cin, s->cout, s->k, s->stride, pad, conv_w,
                                c.in.data, ref_out) == 0) {
                r->ref_ms = time_ms(yard_conv_call, &a);
                r->algo = yc.algo;
            }
            if (r->ref_ms < 0) {
                fprintf(stderr, "FAIL cuDNN %s: %s\n", s->name, msg);
                ok = false;
            } else if (r->swin_ms >= 0) {
                float *got = download(c.out.data, ny), *want = download(ref_out, ny);
                double dmax = 0, amax = 0;
                for (size_t j = 0; j < ny; j++) {
                    const double d = fabs((double)got[j] - want[j]);
                    dmax = d > dmax || d != d ? d : dmax;
                    amax = fabs(want[j]) > amax ? fabs(want[j]) : amax;
                }
                r->diff = dmax / (amax > 0 ? amax : 1.0);
                if (!(r->diff <= tol)) {
                    fprintf(stderr, "FAIL %s: swinrun and cuDNN differ by %.3g of the largest magnitude (tolerance %g)\n",
                            s->name, r->diff, tol);
                    ok = false;
                }
                free(got), free(want);
            }
            yard_conv_free(&yc);
            cudaFree(ref_out);
        }
#else
        (void)ny;
#endif
        op_free(&c);
        printf("%-26s %5d %4d %4d %3d %4d %10.3f ", s->name, side, s->cin, s->cout, s->k, s->uses, r->swin_ms);
        if (r->ref_ms >= 0 && r->swin_ms >= 0) {
            printf("%10.3f %7.2f %9.2g  %s\n", r->ref_ms, r->swin_ms / r->ref_ms, r->diff, yard_algo_name(r->algo));
            tot_swin += s->uses * r->swin_ms, tot_ref += s->uses * r->ref_ms;
        } else
            printf("%10s %7s %9s\n", "-", "-", "-");
    }
    if (tot_ref > 0)
        printf("%-26s %30s %10.3f %10.3f %7.2f  (sum of uses x time over the shapes above)\n", "all convs", "", tot_swin,
               tot_ref, tot_swin / tot_ref);

    /* ---- Swin GEMMs against cuBLAS, and the ops that contain them ---- */
    static const char *gname[4] = {"qkv", "proj", "fc1", "fc2"};
    double gemm_ms[4][4], attn_ms[4], mlp_ms[4];
    int gdim[4][4][3];
    printf("\n%-26s %8s %5s %5s %10s %10s %7s\n", "Swin linear (per block)", "M", "N", "K", "swinrun ms", "cuBLAS ms",
           "ratio");
    for (int s = 0; s < 4; s++) {
        const int C = f << s, L = imax(1, H >> s);
        attn_ms[s] = mlp_ms[s] = -1.0;
        memset(gdim[s], 0, sizeof gdim[s]);
        for (int g = 0; g < 4; g++) gemm_ms[s][g] = -1.0;
        if (C > max_ch) {
            printf("stage %d skipped (more than %d channels)\n", s, max_ch);
            continue;
        }
        struct op at, mp;
        memset(&at, 0, sizeof at);
        memset(&mp, 0, sizeof mp);
        at.be = mp.be = be, at.kind = ATTN, mp.kind = MLP;
        at.in = dvol(L, L, L, C), at.blk = stage_blk[s], at.g = swin_window_geom_make((int[3]){L, L, L}, (int[3]){7, 7, 7}, 3 << s, true);
        mp.in = dvol(L, L, L, C), mp.blk = stage_blk[s], mp.hidden = 4 * C;
        op_workspace(&at), op_workspace(&mp);
        attn_ms[s] = time_ms(op_run, &at);
        mlp_ms[s] = time_ms(op_run, &mp);
        if (attn_ms[s] < 0 || mlp_ms[s] < 0) {
            fprintf(stderr, "FAIL stage %d attention/MLP: %s\n", s, swin_cuda_ops.last_error(be));
            ok = false;
        }
        const int T = at.g.padded[0] * at.g.padded[1] * at.g.padded[2], Vs = L * L * L;
        const int dims[4][3] = {{T, 3 * C, C}, {T, C, C}, {Vs, 4 * C, C}, {Vs, C, 4 * C}};
        op_free(&at), op_free(&mp);
        for (int g = 0; g < 4; g++) {
            memcpy(gdim[s][g], dims[g], sizeof dims[g]);
            gemm_ms[s][g] = -1.0;
            if (have_ref) {
                struct yard_call a = {&yard, NULL, dims[g][0], dims[g][1], dims[g][2], NULL, NULL, NULL};
                a.X = drandom((size_t)a.M * a.K), a.W = drandom((size_t)a.K * a.N);
                a.Y = dalloc((size_t)a.M * a.N * swin_dtype_bytes(dtype));
                gemm_ms[s][g] = time_ms(yard_gemm_call, &a);
                if (gemm_ms[s][g] < 0) {
                    fprintf(stderr, "FAIL cuBLAS stage %d %s: %s\n", s, gname[g], msg);
                    ok = false;
                }
                cudaFree((void *)a.X), cudaFree((void *)a.W), cudaFree(a.Y);
            }
            printf("stage %d %-18s %8d %5d %5d %10s %10.4f\n", s, gname[g], dims[g][0], dims[g][1], dims[g][2], "",
                   gemm_ms[s][g]);
        }
        const double ga = gemm_ms[s][0] + gemm_ms[s][1], gm = gemm_ms[s][2] + gemm_ms[s][3];
        const int have = gemm_ms[s][0] >= 0 && gemm_ms[s][1] >= 0 && gemm_ms[s][2] >= 0 && gemm_ms[s][3] >= 0;
        printf("stage %d %-18s %22s %10.4f %10.4f %7.2f\n", s, "swin_attention", "(vs qkv+proj)", attn_ms[s],
               have ? ga : -1.0, have && attn_ms[s] > 0 ? attn_ms[s] / ga : -1.0);
        printf("stage %d %-18s %22s %10.4f %10.4f %7.2f\n", s, "swin_mlp", "(vs fc1+fc2)", mlp_ms[s], have ? gm : -1.0,
               have && mlp_ms[s] > 0 ? mlp_ms[s] / gm : -1.0);
    }

    if (json) {
        FILE *jf = fopen(json, "w");
        if (!jf) {
            fprintf(stderr, "cannot write %s\n", json);
            ok = false;
        } else {
            fprintf(jf, "{\"device\": \"%s\", \"dtype\": \"%s\", \"reps\": %d, \"div\": %d, \"reference\": \"%s\",\n",
                    device, half ? "f16" : "f32", reps, div, ref_name);
            fprintf(jf, " \"timing\": \"CUDA events on the backend stream, mean of reps after one warm-up\",\n \"ops\": [");
            for (int i = 0; i < nb; i++) {
                fprintf(jf, "%s\n  {\"name\": \"%s\", ", i ? "," : "", names[i]);
                json_num(jf, "ms", op_ms[i], "}");
            }
            fprintf(jf, "],\n \"convs\": [");
            for (int i = 0; i < NCONV; i++) {
                const struct conv_shape *s = &convs[i];
                fprintf(jf, "%s\n  {\"name\": \"%s\", \"side\": %d, \"cin\": %d, \"cout\": %d, \"k\": %d, \"stride\": %d, "
                            "\"uses\": %d, ", i ? "," : "", s->name, cr[i].side, s->cin, s->cout, s->k, s->stride, s->uses);
                json_num(jf, "swinrun_ms", cr[i].swin_ms, ", ");
                json_num(jf, "cudnn_ms", cr[i].ref_ms, ", ");
                json_num(jf, "ratio", cr[i].ref_ms > 0 && cr[i].swin_ms >= 0 ? cr[i].swin_ms / cr[i].ref_ms : -1, ", ");
                json_num(jf, "max_rel_diff", cr[i].diff, ", ");
                if (cr[i].algo >= 0)
                    fprintf(jf, "\"cudnn_algo\": \"%s\"}", yard_algo_name(cr[i].algo));
                else
                    fprintf(jf, "\"cudnn_algo\": null}");
            }
            fprintf(jf, "],\n \"conv_total\": {");
            json_num(jf, "swinrun_ms", tot_ref > 0 ? tot_swin : -1, ", ");
            json_num(jf, "cudnn_ms", tot_ref > 0 ? tot_ref : -1, ", ");
            json_num(jf, "ratio", tot_ref > 0 ? tot_swin / tot_ref : -1, "},\n \"swin\": [");
            for (int s = 0; s < 4; s++) {
                fprintf(jf, "%s\n  {\"stage\": %d, \"gemms\": [", s ? "," : "", s);
                for (int g = 0; g < 4; g++) {
                    fprintf(jf, "%s{\"name\": \"%s\", \"M\": %d, \"N\": %d, \"K\": %d, ", g ? ", " : "", gname[g],
                            gdim[s][g][0], gdim[s][g][1], gdim[s][g][2]);
                    json_num(jf, "cublas_ms", gemm_ms[s][g], "}");
                }
                fprintf(jf, "], ");
                json_num(jf, "swin_attention_ms", attn_ms[s], ", ");
                json_num(jf, "swin_mlp_ms", mlp_ms[s], "}");
            }
            fprintf(jf, "],\n \"ok\": %s}\n", ok ? "true" : "false");
            fclose(jf);
        }
    }
    if (have_ref) yard_free(&yard);
    swin_cuda_backend_free(be);
    free(flat);
    return ok ? 0 : 1;
}
