/* The bfloat16 copy of a model (runtime/model_bf16.c) on a real export (test-data f12_c32_ts):
 * its size is what the plan counts and about half the float32 weights; every GEMM weight
 * (checked element by element: patch embedding, qkv, proj, fc1, fc2, merge reduction, the
 * encoder/decoder convs, the transposed conv, the output conv) holds the bfloat16 rounding
 * of the original, every other tensor (norms, biases, bias tables) the original float32
 * values; every pointer of the copy lies in the copy's buffer; the original is untouched.
 *   test_model_bf16 CASE_DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/bf16.h"
#include "runtime/model.h"
#include "runtime/model_bf16.h"
#include "runtime/swinrun.h"
#include "tests/common/check.h"

static bool inside(const struct swin_model *c, const float *p, size_t bytes)
{
    const char *b = c->flat, *q = (const char *)p;
    return q >= b && q + bytes <= b + c->flat_bytes;
}

/* n elements of a GEMM weight: the copy holds bf16(original). */
static bool gemm_ok(const char *what, const struct swin_model *c, const float *copy, const float *orig, size_t n)
{
    bool ok = inside(c, copy, n * sizeof(swin_bf16));
    const swin_bf16 *h = (const swin_bf16 *)(const void *)copy;
    for (size_t i = 0; i < n && ok; i++) ok = h[i] == swin_bf16_from_f32(orig[i]);
    return check_true(what, ok);
}

static bool f32_ok(const char *what, const struct swin_model *c, const float *copy, const float *orig, size_t n)
{
    return check_true(what, inside(c, copy, n * sizeof(float)) && memcmp(copy, orig, n * sizeof(float)) == 0);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_model_bf16 CASE_DIR\n");
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/model.onnx", argv[1]);
    swin_model_t *mt = NULL;
    swin_error err = {0};
    if (swin_model_load(path, &mt, &err)) {
        fprintf(stderr, "FAIL: %s\n", err.msg);
        return 1;
    }
    const struct swin_model *m = mt;
    void *before = malloc(m->flat_bytes);
    memcpy(before, m->flat, m->flat_bytes);
    struct swin_model *c = NULL;
    bool ok = check_true("bf16 copy made", swin_model_bf16_copy(m, &c, &err) == SWIN_OK);
    if (!ok) {
        fprintf(stderr, "%s\n", err.msg);
        return test_exit(false);
    }
    const int f = m->cfg.feature_size, ci = m->cfg.in_channels, co = m->cfg.out_channels;
    ok &= check_true("copy bytes == swin_model_bf16_bytes", c->flat_bytes == swin_model_bf16_bytes(m));
    ok &= check_true("copy about half the float32 bytes",
                     c->flat_bytes < 0.6 * (double)m->flat_bytes && c->flat_bytes > 0.45 * (double)m->flat_bytes);
    ok &= gemm_ok("patch_w", c, c->patch_w, m->patch_w, (size_t)8 * ci * f);
    ok &= f32_ok("patch_b", c, c->patch_b, m->patch_b, (size_t)f);
    for (int s = 0; s < SWIN_STAGES; s++) {
        const int C = swin_stage_channels(&m->cfg, s), hid = m->cfg.mlp_hidden[s];
        for (int b = 0; b < m->cfg.depths[s]; b++) {
            const struct swin_block_w *x = &c->stage[s].block[b], *o = &m->stage[s].block[b];
            ok &= gemm_ok("qkv_w", c, x->qkv_w, o->qkv_w, (size_t)C * 3 * C);
            ok &= gemm_ok("proj_w", c, x->proj_w, o->proj_w, (size_t)C * C);
            ok &= gemm_ok("fc1_w", c, x->fc1_w, o->fc1_w, (size_t)C * hid);
            ok &= gemm_ok("fc2_w", c, x->fc2_w, o->fc2_w, (size_t)hid * C);
            ok &= f32_ok("norm1_w", c, x->norm1_w, o->norm1_w, (size_t)C);
            ok &= f32_ok("fc1_b", c, x->fc1_b, o->fc1_b, (size_t)hid);
            ok &= f32_ok("bias_table", c, x->bias_table, o->bias_table,
                         (size_t)swin_bias_table_rows(&m->cfg) * m->cfg.heads[s]);
        }
        ok &= gemm_ok("merge_red_w", c, c->stage[s].merge_red_w, m->stage[s].merge_red_w, (size_t)8 * C * 2 * C);
        ok &= f32_ok("merge_norm_w", c, c->stage[s].merge_norm_w, m->stage[s].merge_norm_w, (size_t)8 * C);
    }
    for (int e = 0; e < 5; e++) {
        const struct swin_resblock_w *x = &c->encoder[e], *o = &m->encoder[e];
        ok &= gemm_ok("encoder conv1_w", c, x->conv1_w, o->conv1_w, (size_t)27 * o->cin * o->cout);
        ok &= gemm_ok("encoder conv2_w", c, x->conv2_w, o->conv2_w, (size_t)27 * o->cout * o->cout);
        if (o->conv3_w) ok &= gemm_ok("encoder conv3_w", c, x->conv3_w, o->conv3_w, (size_t)o->cin * o->cout);
    }
    for (int d = 0; d < SWIN_DECODERS; d++) {
        const struct swin_upblock_w *x = &c->decoder[d], *o = &m->decoder[d];
        ok &= gemm_ok("transp_w", c, x->transp_w, o->transp_w, (size_t)8 * o->res.cout * o->res.cout);  /* cin >= cout in every decoder */
        ok &= gemm_ok("decoder conv1_w", c, x->res.conv1_w, o->res.conv1_w, (size_t)27 * o->res.cin * o->res.cout);
    }
    ok &= gemm_ok("out_w", c, c->out_w, m->out_w, (size_t)f * co);
    ok &= f32_ok("out_b", c, c->out_b, m->out_b, (size_t)co);
    ok &= check_true("the float32 model is untouched", memcmp(before, m->flat, m->flat_bytes) == 0);
    swin_model_bf16_free(c);
    free(before);
    swin_model_free(mt);
    return test_exit(ok);
}
