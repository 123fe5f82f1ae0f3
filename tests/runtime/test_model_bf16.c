/* The bfloat16 copy of a model (kernels/cpu/model_bf16.c) on a real export (test-data f12_c32_ts),
 * with no class kept in float32 and with the default keep mask: its size is what the plan
 * counts and about half the float32 weights; every GEMM weight (checked element by element:
 * patch embedding, qkv, proj, fc1, fc2, merge reduction, the encoder/decoder convs, the
 * transposed conv, the output conv) holds the bfloat16 rounding of the original inside the
 * copy's leading bfloat16 range, except the kept ones (the stem's convs and the head), which
 * hold the original float32 values after that range like every other tensor (norms, biases,
 * bias tables); the original is untouched. Then a BF16 context outlives its model: created,
 * the model freed, it runs and gives the logits, bit for bit, of a BF16 context whose model
 * is alive (the CLI frees the float32 weights that way).
 *   test_model_bf16 CASE_DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/bf16.h"
#include "core/model.h"
#include "kernels/cpu/model_bf16.h"
#include "fileio/npy.h"
#include "pipeline/swinrun.h"
#include "tests/common/check.h"

/* The copy under test and the length of its bfloat16 range. */
static const struct swin_model *cur;
static size_t cur_bf16;

/* [p, p + bytes) inside [lo, hi) of the copy's buffer */
static bool within(const float *p, size_t bytes, size_t lo, size_t hi)
{
    const char *b = cur->flat, *q = (const char *)p;
    return q >= b + lo && q + bytes <= b + hi;
}

/* n elements of a GEMM weight: the copy holds bf16(original) in the bfloat16 range. */
static bool gemm_ok(const char *what, const struct swin_model *c, const float *copy, const float *orig, size_t n)
{
    bool ok = within(copy, n * sizeof(swin_bf16), 0, cur_bf16);
    const swin_bf16 *h = (const swin_bf16 *)(const void *)copy;
    for (size_t i = 0; i < n && ok; i++) ok = h[i] == swin_bf16_from_f32(orig[i]);
    return check_true(what, ok);
}

/* n float32 elements, the original values, after the bfloat16 range. */
static bool f32_ok(const char *what, const struct swin_model *c, const float *copy, const float *orig, size_t n)
{
    return check_true(what, within(copy, n * sizeof(float), cur_bf16, c->flat_bytes) &&
                                memcmp(copy, orig, n * sizeof(float)) == 0);
}

/* A GEMM weight that keep names stays float32, else it is bfloat16. */
static bool weight_ok(const char *what, unsigned keep, unsigned cls, const struct swin_model *c, const float *copy,
                      const float *orig, size_t n)
{
    return keep & cls ? f32_ok(what, c, copy, orig, n) : gemm_ok(what, c, copy, orig, n);
}

/* The copy of m with mask keep. */
static bool check_copy(const struct swin_model *m, unsigned keep)
{
    void *before = malloc(m->flat_bytes);
    memcpy(before, m->flat, m->flat_bytes);
    struct swin_model *c = NULL;
    swin_error err = {0};
    bool ok = check_true("bf16 copy made", swin_model_bf16_copy(m, keep, &c, &cur_bf16, &err) == SWIN_OK);
    if (!ok) {
        fprintf(stderr, "%s\n", err.msg);
        free(before);
        return false;
    }
    cur = c;
    printf("keep mask 0x%x: %zu bytes (%zu in bfloat16) of %zu float32\n", keep, c->flat_bytes, cur_bf16,
           m->flat_bytes);
    const int f = m->cfg.feature_size, ci = m->cfg.in_channels, co = m->cfg.out_channels;
    ok &= check_true("copy bytes == swin_model_bf16_bytes", c->flat_bytes == swin_model_bf16_bytes(m, keep));
    ok &= check_true("copy about half the float32 bytes",
                     c->flat_bytes < 0.6 * (double)m->flat_bytes && c->flat_bytes > 0.45 * (double)m->flat_bytes);
    ok &= weight_ok("patch_w", keep, SWIN_BF16_KEEP_STEM, c, c->patch_w, m->patch_w, (size_t)8 * ci * f);
    ok &= f32_ok("patch_b", c, c->patch_b, m->patch_b, (size_t)f);
    for (int s = 0; s < SWIN_STAGES; s++) {
        const int C = swin_stage_channels(&m->cfg, s), hid = m->cfg.mlp_hidden[s];
        for (int b = 0; b < m->cfg.depths[s]; b++) {
            const struct swin_block_w *x = &c->stage[s].block[b], *o = &m->stage[s].block[b];
            ok &= weight_ok("qkv_w", keep, SWIN_BF16_KEEP_ATTN, c, x->qkv_w, o->qkv_w, (size_t)C * 3 * C);
            ok &= weight_ok("proj_w", keep, SWIN_BF16_KEEP_ATTN, c, x->proj_w, o->proj_w, (size_t)C * C);
            ok &= weight_ok("fc1_w", keep, SWIN_BF16_KEEP_MLP, c, x->fc1_w, o->fc1_w, (size_t)C * hid);
            ok &= weight_ok("fc2_w", keep, SWIN_BF16_KEEP_MLP, c, x->fc2_w, o->fc2_w, (size_t)hid * C);
            ok &= f32_ok("norm1_w", c, x->norm1_w, o->norm1_w, (size_t)C);
            ok &= f32_ok("fc1_b", c, x->fc1_b, o->fc1_b, (size_t)hid);
            ok &= f32_ok("bias_table", c, x->bias_table, o->bias_table,
                         (size_t)swin_bias_table_rows(&m->cfg) * m->cfg.heads[s]);
        }
        ok &= weight_ok("merge_red_w", keep, SWIN_BF16_KEEP_MERGE, c, c->stage[s].merge_red_w,
                           m->stage[s].merge_red_w, (size_t)8 * C * 2 * C);
        ok &= f32_ok("merge_norm_w", c, c->stage[s].merge_norm_w, m->stage[s].merge_norm_w, (size_t)8 * C);
    }
    for (int e = 0; e < 5; e++) {
        const struct swin_resblock_w *x = &c->encoder[e], *o = &m->encoder[e];
        /* encoder1's conv1 and conv3 read the image: the stem */
        const unsigned in_cls = e == 0 ? SWIN_BF16_KEEP_STEM : SWIN_BF16_KEEP_ENCODER;
        ok &= weight_ok("encoder conv1_w", keep, in_cls, c, x->conv1_w, o->conv1_w, (size_t)27 * o->cin * o->cout);
        ok &= weight_ok("encoder conv2_w", keep, SWIN_BF16_KEEP_ENCODER, c, x->conv2_w, o->conv2_w,
                        (size_t)27 * o->cout * o->cout);
        if (o->conv3_w)
            ok &= weight_ok("encoder conv3_w", keep, in_cls, c, x->conv3_w, o->conv3_w, (size_t)o->cin * o->cout);
    }
    for (int d = 0; d < SWIN_DECODERS; d++) {
        const struct swin_upblock_w *x = &c->decoder[d], *o = &m->decoder[d];
        /* cin >= cout in every decoder */
        ok &= weight_ok("transp_w", keep, SWIN_BF16_KEEP_DECODER, c, x->transp_w, o->transp_w,
                        (size_t)8 * o->res.cout * o->res.cout);
        ok &= weight_ok("decoder conv1_w", keep, SWIN_BF16_KEEP_DECODER, c, x->res.conv1_w, o->res.conv1_w,
                        (size_t)27 * o->res.cin * o->res.cout);
    }
    ok &= weight_ok("out_w", keep, SWIN_BF16_KEEP_HEAD, c, c->out_w, m->out_w, (size_t)f * co);
    ok &= f32_ok("out_b", c, c->out_b, m->out_b, (size_t)co);
    ok &= check_true("the float32 model is untouched", memcmp(before, m->flat, m->flat_bytes) == 0);
    swin_model_bf16_free(c);
    free(before);
    return ok;
}

static bool run_ctx(const swin_model_t *mt, bool free_model, const struct swin_npy_array *x, float *y)
{
    swin_context_params p = swin_context_default_params();
    p.backend = SWIN_BACKEND_CPU;
    p.precision = SWIN_PRECISION_BF16;
    p.threads = 2;
    swin_context_t *ctx = NULL;
    swin_error err = {0};
    swin_status st = swin_context_create(mt, &p, &ctx, &err);
    if (!st && free_model) swin_model_free((swin_model_t *)mt);
    if (!st) st = swin_context_run(ctx, x->data, y, &err);
    if (st) fprintf(stderr, "%s\n", err.msg);
    swin_context_free(ctx);
    return st == SWIN_OK;
}

/* A BF16 context run after its model was freed equals one whose model is alive. */
static bool context_outlives_model(const char *dir, const char *model_path, const swin_model_t *alive)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/input.npy", dir);
    struct swin_npy_array x;
    swin_error err = {0};
    swin_model_t *gone = NULL;
    if (swin_npy_read_f32(path, &x, &err) || swin_model_load(model_path, &gone, &err)) {
        fprintf(stderr, "FAIL: %s\n", err.msg);
        return false;
    }
    const size_t n = (size_t)alive->cfg.out_channels * x.count / (size_t)alive->cfg.in_channels;
    float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    bool ok = check_true("BF16 context, model alive, runs", a && b && run_ctx(alive, false, &x, a));
    ok &= check_true("BF16 context, model freed after creation, runs", ok && run_ctx(gone, true, &x, b));
    ok &= check_true("both BF16 contexts give the same logits", ok && memcmp(a, b, n * sizeof *a) == 0);
    free(a), free(b), free(x.data);
    return ok;
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
    bool ok = check_copy(m, 0) & check_copy(m, SWIN_BF16_KEEP_DEFAULT);
    ok &= check_true("default keep: under 1 % more bytes than keeping none",
                     swin_model_bf16_bytes(m, SWIN_BF16_KEEP_DEFAULT) < 1.01 * (double)swin_model_bf16_bytes(m, 0));
    ok &= context_outlives_model(argv[1], path, mt);
    swin_model_free(mt);
    return test_exit(ok);
}
