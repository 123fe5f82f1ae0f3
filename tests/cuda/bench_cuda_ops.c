/* Timing of the CUDA ops at the f=48, 96^3 shapes that dominate the forward pass, for a
 * session that has a GPU (nvcc build: build-cuda/tests/cuda/bench_cuda_ops_gpu):
 *
 *   bench_cuda_ops_gpu [--reps N] [--div D] [--half]
 *
 * Each op runs once to warm up, then N times (default 5); the time is host wall clock
 * around the N runs and a swin_cuda_synchronize, divided by N. It prints ms, GFLOP/s and
 * GB/s (FLOPs and compulsory DRAM bytes counted as in kernels/cuda/estimates.py), to set
 * against the estimates in kernels/cuda/README.md. --div D divides the spatial sizes by
 * D: the emulated build runs it with --div 12 --reps 1 as a smoke test (its times mean
 * nothing). --half runs the float16-storage mode (bytes then count 2 per element).
 * Inputs are random; nothing is checked (the tests do that). */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/cuda/cuda_backend.h"
#include "tests/common/check.h"

static enum swin_dtype dtype = SWIN_F32;
static char *flat;
static size_t flat_used, flat_cap;
static test_rng rng = {0xbe7c4};

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

static struct swin_vol dvol(int d, int h, int w, int c)
{
    struct swin_vol v = {NULL, d, h, w, c, c, dtype};
    const size_t n = (size_t)d * h * w * c;
    float *host = malloc(n * sizeof(float));
    _Float16 *half = malloc(n * sizeof(_Float16));
    if (cudaMalloc(&v.data, n * swin_dtype_bytes(dtype)) != cudaSuccess || !host || !half) {
        fprintf(stderr, "out of memory for a %dx%dx%dx%d volume\n", d, h, w, c);
        exit(1);
    }
    test_fill_uniform(&rng, host, n, -1.0f, 1.0f);
    for (size_t i = 0; i < n; i++) half[i] = (_Float16)host[i];
    cudaMemcpy(v.data, dtype == SWIN_F16 ? (void *)half : (void *)host, n * swin_dtype_bytes(dtype),
               cudaMemcpyHostToDevice);
    free(half);
    cudaDeviceSynchronize();
    free(host);
    return v;
}

static void *dws(size_t bytes)
{
    void *p = NULL;
    if (bytes && cudaMalloc(&p, bytes) != cudaSuccess) {
        fprintf(stderr, "out of memory for a %zu-byte workspace\n", bytes);
        exit(1);
    }
    return p;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* One op call per kind; `rc` is checked on every call. */
enum kind { CONV, CONVT, IN, LN, ATTN, MLP, MERGE };
struct bench {
    const char *name;
    enum kind kind;
    struct swin_vol out, in;
    const float *w;
    int k;
    struct swin_block_w blk;
    struct swin_window_geom g;
    int hidden;
    void *ws;
    size_t ws_bytes;
    double flops, bytes;
};

static int run(struct swin_cuda_backend *be, struct bench *b)
{
    const struct swin_ops *o = &swin_cuda_ops;
    switch (b->kind) {
    case CONV: return o->conv3d(be, b->out, b->in, b->w, NULL, b->k, 1, b->k / 2, b->ws, b->ws_bytes);
    case CONVT: return o->conv_transpose2(be, b->out, b->in, b->w);
    case IN: return o->instnorm_act(be, b->in, true, NULL, NULL, NULL, true);
    case LN: return o->layernorm(be, b->out, b->in, NULL, NULL);
    case ATTN: return o->swin_attention(be, b->in, &b->blk, &b->g, b->ws, b->ws_bytes);
    case MLP: return o->swin_mlp(be, b->in, &b->blk, b->hidden, b->ws, b->ws_bytes);
    case MERGE:
        return o->patch_merge(be, b->out, b->in, swin_merge_order_v15, b->blk.norm1_w, b->blk.norm1_b, b->w, b->ws,
                              b->ws_bytes);
    }
    return 1;
}

static struct bench *add(struct bench *b, int *nb, const char *name, enum kind kind)
{
    struct bench *x = &b[(*nb)++];
    memset(x, 0, sizeof *x);
    x->name = name;
    x->kind = kind;
    return x;
}

int main(int argc, char **argv)
{
    int reps = 5, div = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--half")) dtype = SWIN_F16;
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--div") && i + 1 < argc) div = atoi(argv[++i]);
        else reps = 0;   /* unknown: usage */
    }
    if (reps < 1 || div < 1) {
        fprintf(stderr, "usage: %s [--reps N] [--div D] [--half]\n", argv[0]);
        return 2;
    }
    const int f = 48, F = 96 / div, H = 48 / div; /* full-resolution and stage-1 sides */
    flat_cap = (size_t)64 << 20;
    flat = aligned_alloc(256, flat_cap);

    /* Weights first: the backend uploads them when it is created. */
    const float *conv48 = weight((size_t)27 * f * f, 0.05f), *conv96 = weight((size_t)27 * 2 * f * f, 0.05f);
    const float *convt = weight((size_t)8 * f * f, 0.1f), *red = weight((size_t)16 * f * f, 0.05f);
    struct swin_block_w blk = {0}, mb = {0};
    const int C = f, heads = 3, T = 13 * 13 * 13;
    blk.norm1_w = weight(C, 0.1f), blk.norm1_b = weight(C, 0.1f), blk.qkv_w = weight((size_t)C * 3 * C, 0.1f);
    blk.qkv_b = weight(3 * C, 0.1f), blk.bias_table = weight((size_t)T * heads, 0.5f);
    blk.proj_w = weight((size_t)C * C, 0.1f), blk.proj_b = weight(C, 0.1f);
    blk.norm2_w = weight(C, 0.1f), blk.norm2_b = weight(C, 0.1f);
    blk.fc1_w = weight((size_t)C * 4 * C, 0.1f), blk.fc1_b = weight(4 * C, 0.1f);
    blk.fc2_w = weight((size_t)4 * C * C, 0.1f), blk.fc2_b = weight(C, 0.1f);
    mb.norm1_w = weight(8 * C, 0.1f), mb.norm1_b = weight(8 * C, 0.1f);

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

    struct bench b[8], *x;
    int nb = 0;
    const double V = (double)F * F * F, v1 = (double)H * H * H;
    x = add(b, &nb, "conv3d 3x3x3 48->48, full res", CONV);
    x->out = dvol(F, F, F, f), x->in = dvol(F, F, F, f), x->w = conv48, x->k = 3;
    x->flops = 2.0 * 27 * V * f * f, x->bytes = 4.0 * (2 * V * f);
    x = add(b, &nb, "conv3d 3x3x3 96->48, full res", CONV);
    x->out = dvol(F, F, F, f), x->in = dvol(F, F, F, 2 * f), x->w = conv96, x->k = 3;
    x->flops = 2.0 * 27 * V * 2 * f * f, x->bytes = 4.0 * (3 * V * f);
    x = add(b, &nb, "conv_transpose2 48->48 to full res", CONVT);
    x->out = dvol(F, F, F, f), x->in = dvol(H, H, H, f), x->w = convt;
    x->flops = 2.0 * 8 * v1 * f * f, x->bytes = 4.0 * (v1 * f + V * f);
    x = add(b, &nb, "instnorm_act lrelu, full res 48 ch", IN);
    x->in = dvol(F, F, F, f);
    x->flops = 7.0 * V * f, x->bytes = 4.0 * 4 * V * f;
    x = add(b, &nb, "layernorm stage 1 (48 ch)", LN);
    x->out = dvol(H, H, H, f), x->in = dvol(H, H, H, f);
    x->flops = 6.0 * v1 * f, x->bytes = 4.0 * 2 * v1 * f;
    x = add(b, &nb, "swin_attention stage 1, shifted", ATTN);
    x->in = dvol(H, H, H, C), x->blk = blk;
    x->g = swin_window_geom_make((int[3]){H, H, H}, (int[3]){7, 7, 7}, heads, true);
    const double n = (double)x->g.win[0] * x->g.win[1] * x->g.win[2];
    const double P = (double)x->g.padded[0] * x->g.padded[1] * x->g.padded[2];
    x->flops = 2.0 * P * C * 4 * C + 4.0 * n * P * C, x->bytes = 4.0 * (2 * v1 * C + 9 * P * C);
    x = add(b, &nb, "swin_mlp stage 1", MLP);
    x->in = dvol(H, H, H, C), x->blk = blk, x->hidden = 4 * C;
    x->flops = 2.0 * 2 * v1 * C * 4 * C, x->bytes = 4.0 * (3 * v1 * C + 2 * v1 * 4 * C);
    x = add(b, &nb, "patch_merge stage 1", MERGE);
    x->out = dvol(H / 2, H / 2, H / 2, 2 * C), x->in = dvol(H, H, H, C), x->w = red, x->blk = mb;
    x->flops = 2.0 * v1 / 8 * 8 * C * 2 * C, x->bytes = 4.0 * (v1 * C + 2 * v1 / 8 * 8 * C);
    for (int i = 0; i < nb; i++) {
        size_t ws = 0;
        if (b[i].kind == CONV) ws = swin_cuda_ops.conv3d_ws(be, b[i].out, b[i].in, b[i].k);
        if (b[i].kind == ATTN) ws = swin_cuda_ops.swin_attention_ws(be, b[i].in, &b[i].g);
        if (b[i].kind == MLP) ws = swin_cuda_ops.swin_mlp_ws(be, b[i].in, b[i].hidden);
        if (b[i].kind == MERGE) ws = swin_cuda_ops.patch_merge_ws(be, b[i].out, b[i].in);
        b[i].ws = dws(ws);
        b[i].ws_bytes = ws;
    }

    printf("f=48 shapes at %d^3 (stage 1 %d^3), %d reps, %s storage; FLOPs and bytes as in "
           "kernels/cuda/estimates.py\n",
           F, H, reps, dtype == SWIN_F16 ? "float16" : "float32");
    printf("%-40s %10s %10s %10s\n", "op", "ms", "GFLOP/s", "GB/s");
    bool ok = true;
    for (int i = 0; i < nb; i++) {
        int rc = run(be, &b[i]);
        const double t0 = now();
        for (int r = 0; rc == 0 && r < reps; r++) rc = run(be, &b[i]);
        if (rc == 0) rc = (int)swin_cuda_synchronize(be, &err);
        const double ms = (now() - t0) / reps * 1e3;
        if (rc) {
            fprintf(stderr, "FAIL %s: %s\n", b[i].name, swin_cuda_ops.last_error(be));
            ok = false;
            continue;
        }
        const double bytes = b[i].bytes * (double)swin_dtype_bytes(dtype) / 4.0;
        printf("%-40s %10.3f %10.1f %10.1f\n", b[i].name, ms, b[i].flops / ms * 1e-6, bytes / ms * 1e-6);
    }
    for (int i = 0; i < nb; i++) {
        cudaFree(b[i].out.data);
        cudaFree(b[i].in.data);
        cudaFree(b[i].ws);
    }
    swin_cuda_backend_free(be);
    free(flat);
    return ok ? 0 : 1;
}
