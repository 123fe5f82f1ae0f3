/* Contract violations return a named status and leave a message in last_error; nothing is
 * written. Also: create rejects a bad thread count. */
#include "tests/kernels/cpu/op_test.h"

#include "kernels/op_check.h"

#include <stdio.h>
#include <string.h>

static bool expect(void *be, const char *what, int rc, swin_status want)
{
    const char *msg = swin_cpu_ops.last_error(be);
    char name[256];
    snprintf(name, sizeof name, "%s -> %s (%s)", what, swin_status_name((swin_status)rc), msg);
    return check_true(name, rc == (int)want && msg[0] != '\0');
}

int main(void)
{
    bool ok = true;
    struct swin_cpu_backend *bad = NULL;
    swin_error err = {0};
    ok &= check_true("create(-1 threads) fails with SWIN_ERR_ARG",
                     swin_cpu_backend_create(-1, &bad, &err) == SWIN_ERR_ARG && bad == NULL && err.msg[0]);
    struct swin_cpu_backend *all = test_backend(0);
    ok &= check_true("create(0 threads) uses every allowed core (>= 1 thread)", all && swin_cpu_backend_threads(all) >= 1);
    swin_cpu_backend_free(all);
    struct swin_cpu_backend *be = test_backend(2);
    if (!be) return 1;
    ok &= check_true("last_error is empty before any failure", swin_cpu_ops.last_error(be)[0] == '\0');
    tvol in = tvol_new(4, 4, 4, 3, 3), out = tvol_new(4, 4, 4, 5, 5);
    float w[27 * 3 * 5] = {0}, g[16] = {0};
    char ws[64];
    ok &= expect(be, "conv3d out dims wrong for stride 2",
                 swin_op_conv3d(&swin_cpu_ops, be, out.v, NULL, in.v, w, NULL, 3, 2, 1, ws, sizeof ws), SWIN_ERR_SHAPE);
    ok &= expect(be, "conv3d workspace too small",
                 swin_op_conv3d(&swin_cpu_ops, be, out.v, NULL, in.v, w, NULL, 3, 1, 1, ws, sizeof ws), SWIN_ERR_ARG);
    ok &= expect(be, "conv3d k 4", swin_op_conv3d(&swin_cpu_ops, be, out.v, NULL, in.v, w, NULL, 4, 1, 1, ws, sizeof ws), SWIN_ERR_ARG);
    ok &= expect(be, "conv3d stats on a backend that keeps none",
                 swin_op_conv3d(&swin_cpu_ops, be, out.v, ws, in.v, w, NULL, 3, 1, 1, ws, sizeof ws), SWIN_ERR_ARG);
    ok &= expect(be, "instnorm_act stats on a backend that keeps none",
                 swin_op_instnorm_act(&swin_cpu_ops, be, in.v, ws, true, NULL, NULL, NULL, true), SWIN_ERR_ARG);
    struct swin_vol pitchless = in.v;
    pitchless.pitch = 2;
    ok &= expect(be, "layernorm pitch < c", swin_op_layernorm(&swin_cpu_ops, be, pitchless, pitchless, NULL, NULL), SWIN_ERR_SHAPE);
    ok &= expect(be, "layernorm c mismatch", swin_op_layernorm(&swin_cpu_ops, be, out.v, in.v, NULL, NULL), SWIN_ERR_SHAPE);
    const struct swin_residual res_c = {.v = out.v}, res_g = {.v = in.v, .gamma = g, .beta = g};
    ok &= expect(be, "instnorm_act residual c mismatch", swin_op_instnorm_act(&swin_cpu_ops, be, in.v, NULL, true, NULL, NULL, &res_c, true),
                 SWIN_ERR_SHAPE);
    ok &= expect(be, "instnorm_act residual gamma without normalize",
                 swin_op_instnorm_act(&swin_cpu_ops, be, in.v, NULL, true, NULL, NULL, &res_g, true), SWIN_ERR_ARG);
    ok &= expect(be, "conv_transpose2 out not 2x", swin_op_conv_transpose2(&swin_cpu_ops, be, out.v, in.v, w), SWIN_ERR_SHAPE);
    struct swin_block_w blk = {.norm1_w = g, .norm1_b = g, .qkv_w = w, .bias_table = w, .proj_w = w, .proj_b = g};
    struct swin_window_geom geo = {.L = {4, 4, 4}, .win = {4, 4, 4}, .shift = {0, 0, 0}, .padded = {4, 4, 4},
                                   .cfg_window = {7, 7, 7}, .heads = 2};
    ok &= expect(be, "swin_attention C 3 with 2 heads", swin_op_swin_attention(&swin_cpu_ops, be, in.v, &blk, &geo, ws, sizeof ws),
                 SWIN_ERR_ARG);
    geo.heads = 3;
    geo.shift[1] = 4;
    ok &= expect(be, "swin_attention shift >= window", swin_op_swin_attention(&swin_cpu_ops, be, in.v, &blk, &geo, ws, sizeof ws),
                 SWIN_ERR_ARG);
    geo.shift[1] = 0;
    geo.padded[2] = 8;
    ok &= expect(be, "swin_attention padded inconsistent", swin_op_swin_attention(&swin_cpu_ops, be, in.v, &blk, &geo, ws, sizeof ws),
                 SWIN_ERR_ARG);
    tvol m = tvol_new(2, 2, 2, 5, 6);
    ok &= expect(be, "patch_merge out c != 2C",
                 swin_op_patch_merge(&swin_cpu_ops, be, m.v, in.v, swin_merge_order_v15, g, g, w, ws, sizeof ws), SWIN_ERR_SHAPE);
    ok &= tvol_guard_ok("outputs untouched after failures", &out, 0, 0);
    tvol_free(&in);
    tvol_free(&out);
    tvol_free(&m);
    swin_cpu_backend_free(be);
    return test_exit(ok);
}
