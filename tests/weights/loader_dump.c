/* loader_dump: loads a Swin UNETR ONNX file with swin_onnx_load and prints the detected
 * configuration as one JSON object on stdout (or the error as {"status", "message"}).
 *
 *   loader_dump model.onnx                       config JSON; exit 0, or 1 on a load error
 *   loader_dump model.onnx SLOT out.bin ...      also writes the named weights (float32,
 *                                                canonical layout) to files
 * SLOT names: patch_w patch_b patch_norm_w out_w out_b
 *   stage<s>.block<b>.{norm1_w,norm1_b,qkv_w,qkv_b,bias_table,proj_w,proj_b,norm2_w,norm2_b,fc1_w,fc1_b,fc2_w,fc2_b}
 *   stage<s>.{merge_norm_w,merge_norm_b,merge_red_w,v2.conv1_w,v2.conv2_w}
 *   encoder<e>.{conv1_w,conv2_w,conv3_w,norm1_w,norm1_b}   decoder<d>.{transp_w,res.conv1_w,res.conv3_w,res.norm1_w}
 * (s, b, e, d 0-based as in struct swin_model). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weights/onnx/onnx_loader.h"

static const char *merge_kind_key(enum swin_merge_kind k)
{
    static const char *const n[] = {"v15", "pre15", "v2", "other"};
    return (unsigned)k < 4 ? n[k] : "?";
}

static void json_ints(const char *key, const int *v, int n)
{
    printf("\"%s\": [", key);
    for (int i = 0; i < n; i++) printf(i ? ", %d" : "%d", v[i]);
    printf("], ");
}

static size_t res_count(const struct swin_resblock_w *r, const char *field)
{
    if (!strcmp(field, "conv1_w")) return (size_t)27 * r->cin * r->cout;
    if (!strcmp(field, "conv2_w")) return (size_t)27 * r->cout * r->cout;
    if (!strcmp(field, "conv3_w")) return (size_t)r->cin * r->cout;
    return (size_t)r->cout;
}

static const float *res_field(const struct swin_resblock_w *r, const char *field)
{
    if (!strcmp(field, "conv1_w")) return r->conv1_w;
    if (!strcmp(field, "conv2_w")) return r->conv2_w;
    if (!strcmp(field, "conv3_w")) return r->conv3_w;
    if (!strcmp(field, "norm1_w")) return r->norm1_w;
    if (!strcmp(field, "norm1_b")) return r->norm1_b;
    return NULL;
}

/* The named weight and its element count; NULL when unknown or unbound. */
static const float *slot(const struct swin_model *m, const char *name, size_t *n)
{
    const struct swin_config *c = &m->cfg;
    int f = c->feature_size, s, b, e;
    char field[64];
    if (!strcmp(name, "patch_w")) return *n = (size_t)8 * c->in_channels * f, m->patch_w;
    if (!strcmp(name, "patch_b")) return *n = (size_t)f, m->patch_b;
    if (!strcmp(name, "patch_norm_w")) return *n = (size_t)f, m->patch_norm_w;
    if (!strcmp(name, "out_w")) return *n = (size_t)f * c->out_channels, m->out_w;
    if (!strcmp(name, "out_b")) return *n = (size_t)c->out_channels, m->out_b;
    if (sscanf(name, "stage%d.block%d.%63s", &s, &b, field) == 3 && s >= 0 && s < 4 && b >= 0 && b < c->depths[s]) {
        const struct swin_block_w *k = &m->stage[s].block[b];
        size_t C = (size_t)swin_stage_channels(c, s), H = (size_t)c->mlp_hidden[s];
        if (!strcmp(field, "norm1_w")) return *n = C, k->norm1_w;
        if (!strcmp(field, "norm1_b")) return *n = C, k->norm1_b;
        if (!strcmp(field, "norm2_b")) return *n = C, k->norm2_b;
        if (!strcmp(field, "qkv_w")) return *n = 3 * C * C, k->qkv_w;
        if (!strcmp(field, "qkv_b")) return *n = 3 * C, k->qkv_b;
        if (!strcmp(field, "bias_table")) return *n = (size_t)swin_bias_table_rows(c) * c->heads[s], k->bias_table;
        if (!strcmp(field, "proj_w")) return *n = C * C, k->proj_w;
        if (!strcmp(field, "proj_b")) return *n = C, k->proj_b;
        if (!strcmp(field, "norm2_w")) return *n = C, k->norm2_w;
        if (!strcmp(field, "fc1_w")) return *n = C * H, k->fc1_w;
        if (!strcmp(field, "fc1_b")) return *n = H, k->fc1_b;
        if (!strcmp(field, "fc2_w")) return *n = C * H, k->fc2_w;
        if (!strcmp(field, "fc2_b")) return *n = C, k->fc2_b;
        return NULL;
    }
    if (sscanf(name, "stage%d.%63s", &s, field) == 2 && s >= 0 && s < 4) {
        size_t C = (size_t)swin_stage_channels(c, s);
        if (!strcmp(field, "merge_norm_w")) return *n = 8 * C, m->stage[s].merge_norm_w;
        if (!strcmp(field, "merge_norm_b")) return *n = 8 * C, m->stage[s].merge_norm_b;
        if (!strcmp(field, "merge_red_w")) return *n = 16 * C * C, m->stage[s].merge_red_w;
        if (!strncmp(field, "v2.", 3)) return *n = res_count(&m->stage[s].v2, field + 3), res_field(&m->stage[s].v2, field + 3);
        return NULL;
    }
    if (sscanf(name, "encoder%d.%63s", &e, field) == 2 && e >= 0 && e < 5)
        return *n = res_count(&m->encoder[e], field), res_field(&m->encoder[e], field);
    if (sscanf(name, "decoder%d.%63s", &e, field) == 2 && e >= 0 && e < SWIN_DECODERS) {
        const struct swin_upblock_w *u = &m->decoder[e];
        size_t tcin = (size_t)f << e;   /* decoder1 f -> f; decoder<e+1> (f << e) -> (f << e) / 2 */
        if (!strcmp(field, "transp_w")) return *n = 8 * tcin * (size_t)u->res.cout, u->transp_w;
        if (!strncmp(field, "res.", 4)) return *n = res_count(&u->res, field + 4), res_field(&u->res, field + 4);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc % 2) {
        fprintf(stderr, "usage: loader_dump model.onnx [SLOT out.bin]...\n");
        return 2;
    }
    struct swin_model m;
    swin_error err = {SWIN_OK, ""};
    swin_status st = swin_onnx_load(argv[1], &m, &err);
    if (st) {
        printf("{\"status\": \"%s\", \"message\": \"", swin_status_name(st));
        for (const char *p = err.msg; *p; p++) printf(*p == '"' || *p == '\\' ? "\\%c" : "%c", *p);
        printf("\"}\n");
        return 1;
    }
    const struct swin_config *c = &m.cfg;
    printf("{\"status\": \"SWIN_OK\", \"in_channels\": %d, \"out_channels\": %d, \"feature_size\": %d, ", c->in_channels,
           c->out_channels, c->feature_size);
    json_ints("depths", c->depths, 4);
    json_ints("heads", c->heads, 4);
    json_ints("window", c->window, 3);
    json_ints("mlp_hidden", c->mlp_hidden, 4);
    printf("\"qkv_bias\": %s, \"normalize\": %s, \"patch_norm\": %s, \"use_v2\": %s, \"instnorm_affine\": %s, "
           "\"batch_norm\": %s, ",
           c->qkv_bias ? "true" : "false", c->normalize ? "true" : "false", c->patch_norm ? "true" : "false",
           c->use_v2 ? "true" : "false", c->instnorm_affine ? "true" : "false", c->batch_norm ? "true" : "false");
    printf("\"merge_order\": [");
    for (int i = 0; i < 8; i++) printf("%s[%d, %d, %d]", i ? ", " : "", c->merge_order[i][0], c->merge_order[i][1], c->merge_order[i][2]);
    printf("], \"merge_kind\": \"%s\", ", merge_kind_key(c->merge_kind));
    json_ints("cube", c->cube, 3);
    json_ints("bias_tokens", c->bias_tokens, 4);
    printf("\"opset\": %d, \"exporter\": \"%s\", \"post\": \"%s\", \"weight_storage\": \"%s\", ", m.source.opset,
           m.source.exporter, m.source.post, m.source.weight_storage);
    printf("\"param_count\": %zu, \"flat_bytes\": %zu}\n", m.param_count, m.flat_bytes);
    int rc = 0;
    for (int i = 2; i + 1 < argc; i += 2) {
        size_t n = 0;
        const float *p = slot(&m, argv[i], &n);
        FILE *fo = p ? fopen(argv[i + 1], "wb") : NULL;
        if (!p || !fo || fwrite(p, sizeof *p, n, fo) != n) {
            fprintf(stderr, "loader_dump: cannot write slot '%s' to %s (unknown or unbound slot, or I/O error)\n", argv[i], argv[i + 1]);
            rc = 1;
        }
        if (fo) fclose(fo);
    }
    swin_model_release(&m);
    return rc;
}
