/* Error paths of the CUDA backend (emulated): each bad call returns the documented status,
 * leaves a message in last_error and touches no output. No tolerance involved: statuses
 * are compared exactly and the output volume bit for bit. */
#include "tests/kernels/cuda/cuda_op_test.h"

#include "kernels/op_check.h"

#include <stdio.h>
#include <string.h>

static bool expect(const char *what, int rc, int want, void *be)
{
    const char *msg = swin_cuda_ops.last_error(be);
    char line[640];
    snprintf(line, sizeof line, "%s: status %d (want %d), message \"%s\"", what, rc, want, msg);
    return check_true(line, rc == want && msg[0] != '\0');
}

int main(void)
{
    test_rng r = {5};
    ct_env e;
    ct_env_init(&e, 4096);
    const float *g = ct_weight(&e, &r, 8, 0.5f, 1.5f);
    ct_env_upload(&e);
    bool ok = true;
    swin_error err = {0};

    struct swin_cuda_backend *be = NULL;
    ok &= check_true("create without weights: SWIN_ERR_ARG",
                     swin_cuda_backend_create(0, NULL, SWIN_F32, &be, &err) == SWIN_ERR_ARG && be == NULL &&
                         err.msg[0]);
    ok &= check_true("context bytes without a context", swin_cuda_context_bytes(NULL) > (size_t)8 << 20);

    cvol in = cvol_new(2, 3, 4, 8, 8, &r, -1.0f, 1.0f);
    cvol out = cvol_new(2, 3, 4, 8, 8, &r, -1.0f, 1.0f);
    float host_w[8];
    test_fill_uniform(&r, host_w, 8, 0.0f, 1.0f);
    ok &= expect("layernorm with a weight outside the model",
                 swin_op_layernorm(swin_cuda_ops_for(ct_dtype()), e.gpu, out.dev, in.dev, host_w, g), SWIN_ERR_ARG, e.gpu);
    struct swin_vol bad = out.dev;
    bad.c = 7;
    ok &= expect("layernorm with mismatched channels", swin_op_layernorm(swin_cuda_ops_for(ct_dtype()), e.gpu, bad, in.dev, g, g),
                 SWIN_ERR_SHAPE, e.gpu);
    bad = out.dev;
    bad.pitch = 4;
    ok &= expect("layernorm with pitch < c", swin_op_layernorm(swin_cuda_ops_for(ct_dtype()), e.gpu, bad, in.dev, g, g), SWIN_ERR_SHAPE, e.gpu);
    bad = out.dev;
    bad.dtype = bad.dtype == SWIN_F16 ? SWIN_F32 : SWIN_F16;  /* the other storage type */
    ok &= expect("layernorm on a volume of the other storage type", swin_op_layernorm(swin_cuda_ops_for(ct_dtype()), e.gpu, bad, in.dev, g, g),
                 SWIN_ERR_ARG, e.gpu);

    cvol big = cvol_new(4, 4, 4, 16, 16, &r, -1.0f, 1.0f);
    cvol half = cvol_new(2, 2, 2, 32, 32, &r, -1.0f, 1.0f);
    const swin_merge_order order = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1},
                                    {1, 1, 0}, {1, 0, 1}, {0, 1, 1}, {1, 1, 2}};
    ok &= expect("patch_merge with an offset of 2",
                 swin_op_patch_merge(swin_cuda_ops_for(ct_dtype()), e.gpu, half.dev, big.dev, order, g, g, g, NULL, 0), SWIN_ERR_ARG, e.gpu);

    struct swin_window_geom geo = {{4, 4, 4}, {4, 4, 4}, {0, 0, 0}, {4, 4, 4}, {7, 7, 7}, 3, 0};
    struct swin_block_w blk;
    memset(&blk, 0, sizeof blk);
    blk.norm1_w = blk.norm1_b = blk.qkv_w = blk.bias_table = blk.proj_w = blk.proj_b = g;
    ok &= expect("swin_attention with C 16 not divisible by 3 heads",
                 swin_op_swin_attention(swin_cuda_ops_for(ct_dtype()), e.gpu, big.dev, &blk, &geo, NULL, 0), SWIN_ERR_ARG, e.gpu);
    geo.heads = 2;
    ok &= expect("swin_attention without workspace", swin_op_swin_attention(swin_cuda_ops_for(ct_dtype()), e.gpu, big.dev, &blk, &geo, NULL, 0),
                 SWIN_ERR_ARG, e.gpu);
    geo.win[0] = 5;
    ok &= expect("swin_attention with a window larger than L",
                 swin_op_swin_attention(swin_cuda_ops_for(ct_dtype()), e.gpu, big.dev, &blk, &geo, NULL, 0), SWIN_ERR_ARG, e.gpu);

    ok &= expect("conv3d with k 4", swin_op_conv3d(swin_cuda_ops_for(ct_dtype()), e.gpu, out.dev, NULL, in.dev, g, NULL, 4, 1, 1, NULL, 0),
                 SWIN_ERR_ARG, e.gpu);
    ok &= expect("instnorm_act with stats but without normalize",
                 swin_op_instnorm_act(swin_cuda_ops_for(ct_dtype()), e.gpu, out.dev, g, false, NULL, NULL, NULL, true),
                 SWIN_ERR_ARG, e.gpu);
    ok &= expect("conv_transpose2 with wrong output dims", swin_op_conv_transpose2(swin_cuda_ops_for(ct_dtype()), e.gpu, out.dev, in.dev, g),
                 SWIN_ERR_SHAPE, e.gpu);
    ok &= expect("pack_input from NULL", swin_op_pack_input(swin_cuda_ops_for(ct_dtype()), e.gpu, out.dev, NULL), SWIN_ERR_ARG, e.gpu);
    ok &= cvol_compare("outputs untouched by failed calls", &out, 0, 8, 0.0);
    ok &= cvol_compare("merge output untouched", &half, 0, 32, 0.0);
    cvol_free(&in);
    cvol_free(&out);
    cvol_free(&big);
    cvol_free(&half);
    ct_env_free(&e);
    return test_exit(ok);
}
