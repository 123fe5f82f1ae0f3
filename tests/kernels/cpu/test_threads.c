/* Every op gives the same result with 1, 2 and 3 threads (the pool changes only which
 * thread computes a slab, chunk or window, and the order of the instnorm partial sums). */
#include "tests/kernels/cpu/op_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBE 3
static struct swin_cpu_backend *be[NBE];

/* Results of the thread counts 2..NBE against 1 thread. Per-element arithmetic is identical;
 * only instnorm's double partial sums are reordered (~1e-16 relative), so 1e-6 of max(1, |ref|)
 * is generous while still catching a missed or doubled chunk. */
static bool same(const char *what, float *const got[NBE], size_t n)
{
    bool ok = true;
    for (int i = 1; i < NBE; i++) {
        char name[96];
        snprintf(name, sizeof name, "%s: %d threads vs 1", what, i + 1);
        ok &= check_close_scaled(name, got[i], got[0], n, 1e-6);
    }
    return ok;
}

/* Every op on every backend, compared across thread counts. */
static bool run_all(void)
{
    bool ok = true;
    test_rng r = {2024};
    const int D = 9, H = 10, W = 11, C = 12, HID = 48;
    const int cfg[3] = {7, 7, 7};
    float *win = test_rand(&r, (size_t)27 * C * C, -0.3f, 0.3f), *bias = test_rand(&r, (size_t)C, -1, 1);
    float *wmerge = test_rand(&r, (size_t)16 * C * C, -0.3f, 0.3f);
    float *g8 = test_rand(&r, (size_t)8 * C, 0.5f, 1.5f), *b8 = test_rand(&r, (size_t)8 * C, -0.5f, 0.5f);
    /* one statement each: the random draws come in this order (an initializer list's
     * expressions are evaluated in no fixed order) */
    float *p[13];
    int np = 0;
    p[np++] = test_rand(&r, C, 0.5f, 1.5f);                      /* norm1_w */
    p[np++] = test_rand(&r, C, -.5f, .5f);                       /* norm1_b */
    p[np++] = test_rand(&r, (size_t)3 * C * C, -.5f, .5f);       /* qkv_w */
    p[np++] = test_rand(&r, 3 * C, -.5f, .5f);                   /* qkv_b */
    p[np++] = test_rand(&r, (size_t)13 * 13 * 13 * 3, -1, 1);    /* bias_table */
    p[np++] = test_rand(&r, (size_t)C * C, -.4f, .4f);           /* proj_w */
    p[np++] = test_rand(&r, C, -.5f, .5f);                       /* proj_b */
    p[np++] = test_rand(&r, C, 0.5f, 1.5f);                      /* norm2_w */
    p[np++] = test_rand(&r, C, -.5f, .5f);                       /* norm2_b */
    p[np++] = test_rand(&r, (size_t)C * HID, -.5f, .5f);         /* fc1_w */
    p[np++] = test_rand(&r, HID, -.5f, .5f);                     /* fc1_b */
    p[np++] = test_rand(&r, (size_t)HID * C, -.3f, .3f);         /* fc2_w */
    p[np++] = test_rand(&r, C, -.5f, .5f);                       /* fc2_b */
    struct swin_block_w blk = {.norm1_w = p[0], .norm1_b = p[1], .qkv_w = p[2], .qkv_b = p[3], .bias_table = p[4],
                               .proj_w = p[5], .proj_b = p[6], .norm2_w = p[7], .norm2_b = p[8], .fc1_w = p[9],
                               .fc1_b = p[10], .fc2_w = p[11], .fc2_b = p[12]};
    tvol src = tvol_new(D, H, W, C, C + 1);
    tvol_fill(&src, &r, -2.0f, 2.0f);
    tvol x[NBE], y[NBE];
    float *got[NBE];
    const size_t n = swin_vol_voxels(src.v) * C;

#define FOR_BE for (int i = 0; i < NBE; i++)
#define RESET_X FOR_BE { x[i] = tvol_new(D, H, W, C, C + 1); memcpy(x[i].mem, src.mem, src.total * sizeof(float)); }
#define COLLECT(vol, what, count) FOR_BE got[i] = tvol_dense(&vol[i]); ok &= same(what, got, count); \
    FOR_BE { free(got[i]); tvol_free(&vol[i]); }

    RESET_X;
    FOR_BE {
        y[i] = tvol_new(D, H, W, C, C);
        size_t wsb = swin_cpu_ops.conv3d_ws(be[i], y[i].v, x[i].v, win, 3, 1, 1, false);
        void *ws = ws_new(wsb);
        ok &= swin_cpu_ops.conv3d(be[i], y[i].v, NULL, x[i].v, win, bias, 3, 1, 1, ws, wsb) == 0;
        ok &= ws_free(ws);
    }
    COLLECT(y, "conv3d", n);
    FOR_BE {
        y[i] = tvol_new(2 * D, 2 * H, 2 * W, C, C);
        ok &= swin_cpu_ops.conv_transpose2(be[i], y[i].v, x[i].v, wmerge) == 0;
    }
    COLLECT(y, "conv_transpose2", 8 * n);
    FOR_BE tvol_free(&x[i]);

    RESET_X;
    const struct swin_residual res = {.v = src.v, .normalize = true, .gamma = blk.norm1_w, .beta = blk.norm1_b};
    FOR_BE ok &= swin_cpu_ops.instnorm_act(be[i], x[i].v, NULL, true, NULL, NULL, &res, true) == 0;
    COLLECT(x, "instnorm_act", n);
    RESET_X;
    FOR_BE ok &= swin_cpu_ops.layernorm(be[i], x[i].v, x[i].v, blk.norm1_w, blk.norm1_b) == 0;
    COLLECT(x, "layernorm", n);

    RESET_X;
    const struct swin_window_geom g = swin_window_geom_make((int[3]){D, H, W}, cfg, 3, true);
    FOR_BE {
        size_t wsb = swin_cpu_ops.swin_attention_ws(be[i], x[i].v, &g);
        void *ws = ws_new(wsb);
        ok &= swin_cpu_ops.swin_attention(be[i], x[i].v, &blk, &g, ws, wsb) == 0;
        ok &= ws_free(ws);
    }
    COLLECT(x, "swin_attention", n);

    RESET_X;
    FOR_BE {
        size_t wsb = swin_cpu_ops.swin_mlp_ws(be[i], x[i].v, HID);
        void *ws = ws_new(wsb);
        ok &= swin_cpu_ops.swin_mlp(be[i], x[i].v, &blk, HID, ws, wsb) == 0;
        ok &= ws_free(ws);
    }
    COLLECT(x, "swin_mlp", n);

    /* patch merge needs even dims */
    FOR_BE {
        test_rng rm = {77};
        x[i] = tvol_new(8, 10, 10, C, C);
        tvol_fill(&x[i], &rm, -2.0f, 2.0f);
        y[i] = tvol_new(4, 5, 5, 2 * C, 2 * C);
        size_t wsb = swin_cpu_ops.patch_merge_ws(be[i], y[i].v, x[i].v);
        void *ws = ws_new(wsb);
        ok &= swin_cpu_ops.patch_merge(be[i], y[i].v, x[i].v, swin_merge_order_v15, g8, b8, wmerge, ws, wsb) == 0;
        ok &= ws_free(ws);
    }
    COLLECT(y, "patch_merge", (size_t)4 * 5 * 5 * 2 * C);
    FOR_BE tvol_free(&x[i]);

    for (int i = 0; i < np; i++) free(p[i]);
    free(win); free(bias); free(wmerge); free(g8); free(b8);
    tvol_free(&src);
    return ok;
}

int main(void)
{
    for (int i = 0; i < NBE; i++)
        if (!(be[i] = test_backend(i + 1))) return 1;
    bool ok = true;
    for (int l = 0; l < TEST_SIMD_LEVELS; l++) {
        bool have = true;
        for (int i = 0; i < NBE; i++) have &= test_simd_select(be[i], test_simd_levels[l]);
        if (have) ok &= run_all();
    }
    for (int i = 0; i < NBE; i++) swin_cpu_backend_free(be[i]);
    return test_exit(ok);
}
