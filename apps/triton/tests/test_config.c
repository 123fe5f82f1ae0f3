/* The backend's decoding without a server: configurations (Triton's JSON of config.pbtxt)
 * read into the values they state or refused with the reason, and request tensors checked
 * against the model. Each case states the expected value independently of the code. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "apps/triton/config.h"
#include "core/json.h"
#include "apps/triton/request.h"

static int failures;
#define EXPECT(cond)                                                        \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                     \
        }                                                                   \
    } while (0)

#define WINDOW_TENSORS                                                                                     \
    "\"input\":[{\"name\":\"input\",\"data_type\":\"TYPE_FP32\",\"dims\":[\"1\",\"1\",\"32\",\"32\",\"32\"]}]," \
    "\"output\":[{\"name\":\"logits\",\"data_type\":\"TYPE_FP32\",\"dims\":[\"1\",\"14\",\"32\",\"32\",\"32\"]}]"
#define SEG_TENSORS                                                                              \
    "\"input\":[{\"name\":\"VOLUME\",\"data_type\":\"TYPE_INT16\",\"dims\":[\"-1\",\"-1\",\"-1\"]}," \
    "{\"name\":\"AFFINE\",\"data_type\":\"TYPE_FP64\",\"dims\":[\"4\",\"4\"]}],"                  \
    "\"output\":[{\"name\":\"LABELS\",\"data_type\":\"TYPE_UINT16\",\"dims\":[\"-1\",\"-1\",\"-1\"]}]"

static bool parse(const char *json, swt_config *c, char *why) {
    return swt_config_parse(json, strlen(json), c, why, 512);
}

static void test_window_config(void) {
    swt_config c;
    char why[512];
    EXPECT(parse("{\"name\":\"w\",\"max_batch_size\":0," WINDOW_TENSORS ",\"parameters\":{"
                 "\"threads\":{\"string_value\":\"3\"},\"memory_limit\":{\"string_value\":\"1.5GiB\"},"
                 "\"cube\":{\"string_value\":\"64, 32,96\"},\"precision\":{\"string_value\":\"fp16\"}}}",
                 &c, why));
    EXPECT(c.mode == SWT_MODE_WINDOW && c.max_batch_size == 0 && !strcmp(c.name, "w"));
    EXPECT(c.threads == 3 && c.mem_limit == 1610612736u);
    EXPECT(c.cube[0] == 64 && c.cube[1] == 32 && c.cube[2] == 96);
    EXPECT(!strcmp(c.inputs[0].name, "input") && c.inputs[0].ndims == 5 && c.inputs[0].dims[1] == 1);
    EXPECT(!strcmp(c.outputs[0].name, "logits") && c.outputs[0].dims[1] == 14);
    EXPECT(!strcmp(c.model_file, "model.onnx"));
    swin_context_params p = swt_context_params(&c, false, 3);
    EXPECT(p.backend == SWIN_BACKEND_CPU && p.device == 0 && p.threads == 3 && p.precision == SWIN_PRECISION_FP16);
    p = swt_context_params(&c, true, 3);
    EXPECT(p.backend == SWIN_BACKEND_CUDA && p.device == 3);

    /* defaults: one thread, no limit, the input's fixed dims as the cube */
    EXPECT(parse("{\"name\":\"w\"," WINDOW_TENSORS "}", &c, why));
    EXPECT(c.threads == 1 && c.mem_limit == 0 && c.precision == SWT_PRECISION_FP32);
    EXPECT(c.cube[0] == 32 && c.cube[1] == 32 && c.cube[2] == 32);
    /* dynamic dims: the model's cube */
    EXPECT(parse("{\"name\":\"w\",\"input\":[{\"name\":\"input\",\"data_type\":\"TYPE_FP32\",\"dims\":[\"1\",\"1\","
                 "\"-1\",\"-1\",\"-1\"]}],\"output\":[{\"name\":\"logits\",\"data_type\":\"TYPE_FP32\",\"dims\":[\"1\","
                 "\"14\",\"-1\",\"-1\",\"-1\"]}]}", &c, why));
    EXPECT(c.cube[0] == 0);
}

static void test_refusals(void) {
    swt_config c;
    char why[512];
    EXPECT(!parse("{\"name\":\"w\"," WINDOW_TENSORS ",\"parameters\":{\"thread\":{\"string_value\":\"1\"}}}", &c, why));
    EXPECT(strstr(why, "unknown parameter 'thread'"));
    EXPECT(!parse("{\"name\":\"w\"," WINDOW_TENSORS ",\"parameters\":{\"cube\":{\"string_value\":\"48,32,32\"}}}", &c, why));
    EXPECT(strstr(why, "multiple of 32"));
    EXPECT(!parse("{\"name\":\"w\"," WINDOW_TENSORS ",\"parameters\":{\"memory_limit\":{\"string_value\":\"2GB\"}}}", &c, why));
    EXPECT(strstr(why, "memory_limit '2GB'"));
    EXPECT(!parse("{\"name\":\"w\"," WINDOW_TENSORS ",\"parameters\":{\"backend\":{\"string_value\":\"gpu\"}}}", &c, why));
    EXPECT(strstr(why, "parameter backend 'gpu': use cpu, cuda or auto"));
    EXPECT(!parse("{\"name\":\"w\"," WINDOW_TENSORS ",\"parameters\":{\"multi_label\":{\"string_value\":\"1\"}}}", &c, why));
    EXPECT(strstr(why, "parameter multi_label '1': use true or false"));
    EXPECT(parse("{\"name\":\"w\"," WINDOW_TENSORS ",\"parameters\":{\"intensity_norm\":{\"string_value\":"
                 "\"zscore-nonzero\"},\"precision\":{\"string_value\":\"bf16\"}}}", &c, why));
    EXPECT(c.normalize == SWIN_NORM_ZSCORE_NONZERO && c.norm_given && c.precision == SWT_PRECISION_BF16);
    EXPECT(parse("{\"name\":\"w\"," WINDOW_TENSORS ",\"parameters\":{\"merge_order\":{\"string_value\":\"pre15\"},"
                 "\"normalize\":{\"string_value\":\"false\"},\"norm_groups\":{\"string_value\":\"16\"}}}", &c, why));
    EXPECT(c.load.merge_order == SWIN_MERGE_ORDER_PRE15 && c.load.no_normalize && c.load.norm_groups == 16);
    EXPECT(parse("{\"name\":\"w\"," WINDOW_TENSORS "}", &c, why));
    EXPECT(c.load.merge_order == SWIN_MERGE_ORDER_DEFAULT && !c.load.no_normalize && c.load.norm_groups == 0);
    EXPECT(!parse("{\"name\":\"w\"," WINDOW_TENSORS ",\"parameters\":{\"norm_groups\":{\"string_value\":\"0\"}}}", &c, why));
    EXPECT(strstr(why, "parameter norm_groups '0': an integer 1..4096"));
    EXPECT(!parse("{\"name\":\"w\"," WINDOW_TENSORS ",\"parameters\":{\"merge_order\":{\"string_value\":\"1.4\"}}}", &c, why));
    EXPECT(strstr(why, "parameter merge_order '1.4': use v15, pre15 or v2"));
    EXPECT(!parse("{\"name\":\"w\",\"max_batch_size\":4," WINDOW_TENSORS "}", &c, why));
    EXPECT(strstr(why, "needs 4 dims"));
    EXPECT(!parse("{\"name\":\"w\"," WINDOW_TENSORS ",}", &c, why));
    EXPECT(strstr(why, "not valid JSON"));
    EXPECT(!parse("{\"name\":\"s\",\"parameters\":{\"mode\":{\"string_value\":\"segment\"}}," WINDOW_TENSORS "}", &c, why));
    EXPECT(strstr(why, "declare inputs VOLUME and AFFINE"));
}

static void test_segment_config_and_requests(void) {
    swt_config c;
    char why[512];
    EXPECT(parse("{\"name\":\"s\",\"parameters\":{\"mode\":{\"string_value\":\"segment\"},"
                 "\"spacing_mm\":{\"string_value\":\"1,1.25,3\"},\"intensity_range\":{\"string_value\":\"-1000,1000\"},"
                 "\"overlap\":{\"string_value\":\"0.25\"},\"max_voxels\":{\"string_value\":\"1000\"}}," SEG_TENSORS "}",
                 &c, why));
    EXPECT(c.mode == SWT_MODE_SEGMENT && c.max_voxels == 1000);
    swin_segment_params base = swin_segment_default_params();
    base.blend = SWIN_BLEND_GAUSSIAN; /* a recipe's, which the config does not override */
    base.spacing_mm[0] = 9;
    swin_segment_params sp = swt_segment_params(&c, &base);
    EXPECT(sp.spacing_mm[0] == 1 && sp.spacing_mm[1] == 1.25 && sp.spacing_mm[2] == 3);
    EXPECT(sp.intensity_range[0] == -1000 && sp.intensity_range[1] == 1000 && sp.overlap == 0.25);
    EXPECT(sp.blend == SWIN_BLEND_GAUSSIAN);

    long long dim[3];
    int vt, ch;
    int64_t shape[3] = {5, 10, 20};  /* (nz, ny, nx) */
    EXPECT(swt_check_volume_input(&c, "INT16", shape, 3, 5 * 10 * 20 * 2, dim, &ch, &vt, why, sizeof why));
    EXPECT(dim[0] == 20 && dim[1] == 10 && dim[2] == 5 && vt == 1 && ch == 1);
    EXPECT(!swt_check_volume_input(&c, "INT16", shape, 3, 5 * 10 * 20 * 4, dim, &ch, &vt, why, sizeof why));
    EXPECT(strstr(why, "holds 4000 bytes") && strstr(why, "needs 2000"));
    int64_t big[3] = {11, 10, 10};
    EXPECT(!swt_check_volume_input(&c, "FP32", big, 3, 1100 * 4, dim, &ch, &vt, why, sizeof why));
    EXPECT(strstr(why, "too large") && strstr(why, "1000 voxels"));
    int64_t huge[3] = {1LL << 40, 1LL << 40, 1LL << 40};  /* the product overflows int64 */
    EXPECT(!swt_check_volume_input(&c, "FP32", huge, 3, 0, dim, &ch, &vt, why, sizeof why));
    EXPECT(!swt_check_volume_input(&c, "UINT8", shape, 3, 1000, dim, &ch, &vt, why, sizeof why));
    EXPECT(strstr(why, "UINT8"));
    /* (C, nz, ny, nx): max_voxels counts one channel; the bytes all of them */
    int64_t four[4] = {4, 5, 10, 20};
    EXPECT(swt_check_volume_input(&c, "FP32", four, 4, 4 * 1000 * 4, dim, &ch, &vt, why, sizeof why));
    EXPECT(dim[0] == 20 && dim[1] == 10 && dim[2] == 5 && vt == 0 && ch == 4);
    EXPECT(!swt_check_volume_input(&c, "FP32", four, 4, 1000 * 4, dim, &ch, &vt, why, sizeof why));
    EXPECT(strstr(why, "needs 16000"));
    int64_t many[4] = {17, 5, 10, 20};
    EXPECT(!swt_check_volume_input(&c, "FP32", many, 4, 17 * 1000 * 4, dim, &ch, &vt, why, sizeof why));
    EXPECT(strstr(why, "1..16 channels"));
    int64_t five[5] = {1, 4, 5, 10, 20};
    EXPECT(!swt_check_volume_input(&c, "FP32", five, 5, 4 * 1000 * 4, dim, &ch, &vt, why, sizeof why));
    EXPECT(strstr(why, "[C, nz, ny, nx]"));

    /* the recipe of an MRI model: z-scores, a sigmoid mask per channel */
    EXPECT(parse("{\"name\":\"s\",\"parameters\":{\"mode\":{\"string_value\":\"segment\"},"
                 "\"intensity_norm\":{\"string_value\":\"zscore-nonzero\"},\"multi_label\":{\"string_value\":\"true\"}},"
                 SEG_TENSORS "}", &c, why));
    sp = swt_segment_params(&c, &base);
    EXPECT(sp.normalize == SWIN_NORM_ZSCORE_NONZERO && sp.activation == SWIN_ACTIVATION_SIGMOID);
    EXPECT(!parse("{\"name\":\"s\",\"parameters\":{\"mode\":{\"string_value\":\"segment\"},"
                  "\"intensity_norm\":{\"string_value\":\"minmax\"}}," SEG_TENSORS "}", &c, why));
    EXPECT(strstr(why, "intensity_norm 'minmax'"));
    EXPECT(!parse("{\"name\":\"s\",\"parameters\":{\"mode\":{\"string_value\":\"segment\"},"
                  "\"multi_label\":{\"string_value\":\"yes\"}}," SEG_TENSORS "}", &c, why));
    EXPECT(strstr(why, "multi_label 'yes'"));

    double a[16] = {0, 0, -2, 10, 1.5, 0, 0, 0, 0, 1.5, 0, 0, 0, 0, 0, 1};  /* permuted axes: fine */
    EXPECT(swt_check_affine_values(a, why, sizeof why));
    a[8] = 0, a[9] = 0, a[10] = 0;  /* a zero row: singular */
    EXPECT(!swt_check_affine_values(a, why, sizeof why) && strstr(why, "singular"));
}

static void test_window_requests(void) {
    swt_config c;
    char why[512];
    EXPECT(parse("{\"name\":\"w\",\"max_batch_size\":2,"
                 "\"input\":[{\"name\":\"x\",\"data_type\":\"TYPE_FP32\",\"dims\":[\"1\",\"32\",\"32\",\"64\"]}],"
                 "\"output\":[{\"name\":\"y\",\"data_type\":\"TYPE_FP32\",\"dims\":[\"3\",\"32\",\"32\",\"64\"]}]}",
                 &c, why));
    swt_window_geom g = {.in_channels = 1, .out_channels = 3, .cube = {32, 32, 64}};
    int64_t w;
    int64_t two[5] = {2, 1, 32, 32, 64}, three[5] = {3, 1, 32, 32, 64};
    EXPECT(swt_check_window_input(&c, &g, "FP32", two, 5, 2 * 32 * 32 * 64 * 4, &w, why, sizeof why) && w == 2);
    EXPECT(!swt_check_window_input(&c, &g, "FP32", three, 5, 3 * 32 * 32 * 64 * 4, &w, why, sizeof why));
    EXPECT(strstr(why, "B in 1..2"));
    EXPECT(!swt_check_window_input(&c, &g, "FP16", two, 5, 2 * 32 * 32 * 64 * 2, &w, why, sizeof why));
    EXPECT(strstr(why, "data type FP16"));
}

static void test_json(void) {
    char why[160];
    const char *t = "{\"a\":[1,\"x\\u00e9\\n\",true,null,{\"b\":-2.5e3}]}";
    json_node *r = swin_json_parse(t, strlen(t), why, sizeof why);
    EXPECT(r && swin_json_len(swin_json_get(r, "a")) == 5);
    EXPECT(!strcmp(swin_json_text(swin_json_at(swin_json_get(r, "a"), 1)), "x\xc3\xa9\n"));
    EXPECT(!strcmp(swin_json_text(swin_json_get(swin_json_at(swin_json_get(r, "a"), 4), "b")), "-2.5e3"));
    swin_json_free(r);
    char deep[200];
    memset(deep, '[', 100);
    memset(deep + 100, ']', 100);
    EXPECT(!swin_json_parse(deep, sizeof deep, why, sizeof why) && strstr(why, "nested deeper"));
    EXPECT(!swin_json_parse("\"abc", 4, why, sizeof why) && strstr(why, "unterminated"));
}

int main(void) {
    test_window_config();
    test_refusals();
    test_segment_config_and_requests();
    test_window_requests();
    test_json();
    if (failures) return 1;
    printf("PASS\n");
    return 0;
}
