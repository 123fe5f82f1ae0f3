#include "apps/triton/config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"

static bool fail(char *why, size_t why_len, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_len, fmt, ap);
    va_end(ap);
    return false;
}

/* A whole decimal integer in [lo, hi]. */
static bool parse_ll(const char *s, long long lo, long long hi, long long *out) {
    if (!s || !*s) return false;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return false;
    *out = v;
    return true;
}

static bool parse_double(const char *s, double *out) {
    if (!s || !*s) return false;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v)) return false;
    *out = v;
    return true;
}

/* n comma-separated numbers, e.g. "1.5,1.5,2". */
static bool parse_list(const char *s, int n, double *out) {
    char buf[128];
    if (strlen(s) >= sizeof buf) return false;
    strcpy(buf, s);
    char *save = NULL, *tok = strtok_r(buf, ", ", &save);
    for (int i = 0; i < n; i++) {
        if (!tok || !parse_double(tok, &out[i])) return false;
        tok = strtok_r(NULL, ", ", &save);
    }
    return tok == NULL;
}

/* Bytes with an optional binary suffix: "2147483648", "512MiB", "2GiB". */
static bool parse_bytes(const char *s, size_t *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !isfinite(v) || v < 0) return false;
    double mult = 1;
    if (!strcmp(end, "KiB")) mult = 1024.0;
    else if (!strcmp(end, "MiB")) mult = 1024.0 * 1024;
    else if (!strcmp(end, "GiB")) mult = 1024.0 * 1024 * 1024;
    else if (*end) return false;
    v *= mult;
    if (v >= 1.8e19) return false;
    *out = (size_t)v;
    return true;
}

static bool copy_name(char *dst, const char *src) {
    if (!src || strlen(src) >= SWT_NAME_MAX) return false;
    strcpy(dst, src);
    return true;
}

static bool read_tensor(const json_node *t, swt_tensor *out, const char *what, char *why, size_t why_len) {
    if (!copy_name(out->name, swin_json_text(swin_json_get(t, "name"))))
        return fail(why, why_len, "%s without a name (or a name over %d bytes)", what, SWT_NAME_MAX - 1);
    const char *dt = swin_json_text(swin_json_get(t, "data_type"));
    if (!dt || strlen(dt) >= sizeof out->data_type)
        return fail(why, why_len, "%s '%s' has no data_type", what, out->name);
    strcpy(out->data_type, dt);
    const json_node *dims = swin_json_get(t, "dims");
    size_t n = swin_json_len(dims);
    if (n > SWT_DIMS_MAX) return fail(why, why_len, "%s '%s' has %zu dims: at most %d", what, out->name, n, SWT_DIMS_MAX);
    out->ndims = (int)n;
    for (size_t i = 0; i < n; i++)
        if (!parse_ll(swin_json_text(swin_json_at(dims, i)), -1, 1LL << 40, &out->dims[i]) || out->dims[i] == 0)
            return fail(why, why_len, "%s '%s': dims[%zu] is not -1 or a positive integer", what, out->name, i);
    return true;
}

struct choice {
    const char *name;
    int value;
};
#define CHOICES(...) ((const struct choice[]){__VA_ARGS__, {NULL, 0}})

/* Parameter key's value v as one of the named choices in t (ended by a NULL name): its value in
 * *out, else why lists the names ("use a, b or c"). */
static bool choose(const char *key, const char *v, const struct choice *t, int *out, char *why, size_t why_len) {
    for (int i = 0; t[i].name; i++)
        if (!strcmp(v, t[i].name)) {
            *out = t[i].value;
            return true;
        }
    char names[160] = "";
    size_t o = 0;
    for (int i = 0; t[i].name && o < sizeof names; i++)
        o += (size_t)snprintf(names + o, sizeof names - o, "%s%s", i ? (t[i + 1].name ? ", " : " or ") : "", t[i].name);
    return fail(why, why_len, "parameter %s '%s': use %s", key, v, names);
}

/* One entry of `parameters`, value already as text. */
static bool read_parameter(swt_config *c, const char *key, const char *v, char *why, size_t why_len) {
    long long n;
    double d[3];
    int choice;
    if (!strcmp(key, "mode")) {
        if (!choose(key, v, CHOICES({"window", SWT_MODE_WINDOW}, {"segment", SWT_MODE_SEGMENT}), &choice, why, why_len)) return false;
        c->mode = (swt_mode)choice;
    } else if (!strcmp(key, "backend")) {
        if (!choose(key, v, CHOICES({"cpu", SWIN_BACKEND_CPU}, {"cuda", SWIN_BACKEND_CUDA}, {"auto", SWIN_BACKEND_AUTO}), &choice,
                    why, why_len))
            return false;
        c->backend = (swin_backend)choice;
        c->backend_given = true;
    } else if (!strcmp(key, "precision")) {
        if (!choose(key, v, CHOICES({"fp32", SWT_PRECISION_FP32}, {"fp16", SWT_PRECISION_FP16}, {"bf16", SWT_PRECISION_BF16}),
                    &choice, why, why_len))
            return false;
        c->precision = (swt_precision)choice;
    } else if (!strcmp(key, "threads")) {
        if (!parse_ll(v, 0, SWIN_THREADS_MAX, &n))
            return fail(why, why_len, "parameter threads '%s': an integer 0..%d (0 = every core)", v, SWIN_THREADS_MAX);
        c->threads = (int)n;
    } else if (!strcmp(key, "memory_limit")) {
        if (!parse_bytes(v, &c->mem_limit))
            return fail(why, why_len, "parameter memory_limit '%s': bytes, optionally with KiB, MiB or GiB (0 = none)", v);
    } else if (!strcmp(key, "cube")) {
        if (!parse_list(v, 3, d))
            return fail(why, why_len, "parameter cube '%s': three sides D,H,W", v);
        for (int k = 0; k < 3; k++) {
            if (d[k] != floor(d[k]) || d[k] < SWIN_CUBE_MIN || d[k] > SWIN_CUBE_MAX || (int)d[k] % SWIN_CUBE_MULTIPLE)
                return fail(why, why_len, "parameter cube '%s': each side a multiple of %d in %d..%d", v,
                            SWIN_CUBE_MULTIPLE, SWIN_CUBE_MIN, SWIN_CUBE_MAX);
            c->cube[k] = (int)d[k];
        }
    } else if (!strcmp(key, "spacing_mm")) {
        if (!parse_list(v, 3, d))
            return fail(why, why_len, "parameter spacing_mm '%s': three spacings x,y,z in mm", v);
        for (int k = 0; k < 3; k++) {
            if (d[k] < SWIN_SPACING_MIN_MM || d[k] > SWIN_SPACING_MAX_MM)
                return fail(why, why_len, "parameter spacing_mm '%s': each in %g..%g mm", v, SWIN_SPACING_MIN_MM,
                            SWIN_SPACING_MAX_MM);
            c->spacing_mm[k] = d[k];
        }
        c->spacing_given = true;
    } else if (!strcmp(key, "intensity_range")) {
        if (!parse_list(v, 2, d) || !(d[0] < d[1]))
            return fail(why, why_len, "parameter intensity_range '%s': lo,hi with lo < hi", v);
        c->intensity_range[0] = (float)d[0];
        c->intensity_range[1] = (float)d[1];
        c->range_given = true;
    } else if (!strcmp(key, "overlap")) {
        if (!parse_double(v, &d[0]) || d[0] < 0 || d[0] > SWIN_OVERLAP_MAX)
            return fail(why, why_len, "parameter overlap '%s': 0..%g", v, SWIN_OVERLAP_MAX);
        c->overlap = d[0];
        c->overlap_given = true;
    } else if (!strcmp(key, "blend")) {
        if (!choose(key, v, CHOICES({"constant", SWIN_BLEND_CONSTANT}, {"gaussian", SWIN_BLEND_GAUSSIAN}), &choice, why, why_len))
            return false;
        c->blend = (swin_blend)choice;
        c->blend_given = true;
    } else if (!strcmp(key, "intensity_norm")) {
        if (!choose(key, v, CHOICES({"range", SWIN_NORM_RANGE}, {"zscore", SWIN_NORM_ZSCORE},
                                    {"zscore-nonzero", SWIN_NORM_ZSCORE_NONZERO}), &choice, why, why_len))
            return false;
        c->normalize = (swin_intensity_norm)choice;
        c->norm_given = true;
    } else if (!strcmp(key, "multi_label")) {
        if (!choose(key, v, CHOICES({"true", 1}, {"false", 0}), &choice, why, why_len)) return false;
        c->multi_label = choice;
        c->multi_label_given = true;
    } else if (!strcmp(key, "merge_order")) {
        if (!choose(key, v, CHOICES({"v15", SWIN_MERGE_ORDER_V15}, {"pre15", SWIN_MERGE_ORDER_PRE15}, {"v2", SWIN_MERGE_ORDER_V2}),
                    &choice, why, why_len))
            return false;
        c->load.merge_order = (swin_merge_order_choice)choice;
    } else if (!strcmp(key, "normalize")) {
        if (!choose(key, v, CHOICES({"true", 1}, {"false", 0}), &choice, why, why_len)) return false;
        c->load.no_normalize = !choice;
    } else if (!strcmp(key, "norm_groups")) {
        if (!parse_ll(v, 1, 4096, &n)) return fail(why, why_len, "parameter norm_groups '%s': an integer 1..4096", v);
        c->load.norm_groups = (int)n;
    } else if (!strcmp(key, "max_voxels")) {
        if (!parse_ll(v, 1, 1LL << 40, &n)) return fail(why, why_len, "parameter max_voxels '%s': a positive integer", v);
        c->max_voxels = n;
    } else {
        return fail(why, why_len,
                    "unknown parameter '%s' (known: mode backend precision threads memory_limit cube merge_order "
                    "normalize norm_groups spacing_mm intensity_range overlap blend intensity_norm multi_label "
                    "max_voxels)", key);
    }
    return true;
}

static const swt_tensor *find(const swt_tensor *t, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (!strcmp(t[i].name, name)) return &t[i];
    return NULL;
}

static bool check_segment_tensors(const swt_config *c, char *why, size_t why_len) {
    const swt_tensor *vol = find(c->inputs, c->n_inputs, SWT_SEG_VOLUME);
    const swt_tensor *aff = find(c->inputs, c->n_inputs, SWT_SEG_AFFINE);
    const swt_tensor *lab = find(c->outputs, c->n_outputs, SWT_SEG_LABELS);
    if (c->max_batch_size != 0) return fail(why, why_len, "mode segment: max_batch_size must be 0 (one volume per request)");
    if (c->n_inputs != 2 || !vol || !aff || c->n_outputs != 1 || !lab)
        return fail(why, why_len, "mode segment: declare inputs %s and %s and output %s", SWT_SEG_VOLUME, SWT_SEG_AFFINE,
                    SWT_SEG_LABELS);
    if (strcmp(vol->data_type, "TYPE_FP32") && strcmp(vol->data_type, "TYPE_INT16"))
        return fail(why, why_len, "mode segment: %s data_type TYPE_FP32 or TYPE_INT16", SWT_SEG_VOLUME);
    if (vol->ndims != 3 && vol->ndims != 4)
        return fail(why, why_len,
                    "mode segment: %s dims [ -1, -1, -1 ] (nz, ny, nx), or [ C, -1, -1, -1 ] for a model of C input "
                    "channels", SWT_SEG_VOLUME);
    if (vol->ndims == 4 && vol->dims[0] != -1 && (vol->dims[0] < 1 || vol->dims[0] > SWIN_VOLUME_MAX_CHANNELS))
        return fail(why, why_len, "mode segment: %s dims[0] %lld: the channels, 1..%d", SWT_SEG_VOLUME, vol->dims[0],
                    SWIN_VOLUME_MAX_CHANNELS);
    if (strcmp(aff->data_type, "TYPE_FP64") || aff->ndims != 2 || aff->dims[0] != 4 || aff->dims[1] != 4)
        return fail(why, why_len, "mode segment: %s data_type TYPE_FP64, dims [ 4, 4 ]", SWT_SEG_AFFINE);
    if (strcmp(lab->data_type, "TYPE_UINT16") || lab->ndims != 3)
        return fail(why, why_len, "mode segment: %s data_type TYPE_UINT16, dims [ -1, -1, -1 ]", SWT_SEG_LABELS);
    return true;
}

static bool check_window_tensors(const swt_config *c, char *why, size_t why_len) {
    if (c->n_inputs != 1 || c->n_outputs != 1)
        return fail(why, why_len, "mode window: one input (the export's, e.g. 'input') and one output (e.g. 'logits')");
    for (int i = 0; i < 2; i++) {
        const swt_tensor *t = i ? &c->outputs[0] : &c->inputs[0];
        if (strcmp(t->data_type, "TYPE_FP32"))
            return fail(why, why_len, "mode window: '%s' data_type must be TYPE_FP32, not %s", t->name, t->data_type);
        /* (1, C, D, H, W) without a batch axis, (C, D, H, W) with one */
        int want = c->max_batch_size > 0 ? 4 : 5;
        if (t->ndims != want)
            return fail(why, why_len, "mode window: '%s' needs %d dims (%s) with max_batch_size %d", t->name, want,
                        want == 5 ? "1, C, D, H, W" : "C, D, H, W", c->max_batch_size);
        if (want == 5 && t->dims[0] != 1 && t->dims[0] != -1)
            return fail(why, why_len, "mode window: '%s' dims[0] must be 1 with max_batch_size 0 (the exports fix the batch at 1)",
                        t->name);
    }
    return true;
}

/* Window mode without parameter cube: fixed spatial dims of the input, (1, C, D, H, W) or
 * (C, D, H, W) with a batch axis, are the cube when each side is one a context can run. */
static void cube_from_dims(swt_config *c) {
    const swt_tensor *t = &c->inputs[0];
    const long long *d = t->dims + t->ndims - 3;
    for (int k = 0; k < 3; k++)
        if (d[k] < SWIN_CUBE_MIN || d[k] > SWIN_CUBE_MAX || d[k] % SWIN_CUBE_MULTIPLE) return;
    for (int k = 0; k < 3; k++) c->cube[k] = (int)d[k];
}

bool swt_config_parse(const char *text, size_t len, swt_config *c, char *why, size_t why_len) {
    *c = (swt_config){.threads = 1, .max_voxels = 512LL * 512 * 1024};
    swin_segment_params sp = swin_segment_default_params();
    memcpy(c->spacing_mm, sp.spacing_mm, sizeof c->spacing_mm);
    memcpy(c->intensity_range, sp.intensity_range, sizeof c->intensity_range);
    c->overlap = sp.overlap;
    c->blend = sp.blend;
    strcpy(c->model_file, "model.onnx");

    char jwhy[160] = "";
    json_node *root = swin_json_parse(text, len, jwhy, sizeof jwhy);
    if (!root) return fail(why, why_len, "model configuration is not valid JSON: %s", jwhy);
    bool ok = false;
    long long n;
    const json_node *name = swin_json_get(root, "name");
    if (!copy_name(c->name, swin_json_text(name) ? swin_json_text(name) : "")) {
        fail(why, why_len, "model name missing or over %d bytes", SWT_NAME_MAX - 1);
        goto done;
    }
    const char *mbs = swin_json_text(swin_json_get(root, "max_batch_size"));
    if (mbs && !parse_ll(mbs, 0, 1 << 20, &n)) {
        fail(why, why_len, "max_batch_size '%s' is not an integer >= 0", mbs);
        goto done;
    }
    c->max_batch_size = mbs ? (int)n : 0;
    const char *file = swin_json_text(swin_json_get(root, "default_model_filename"));
    if (file && *file) {
        if (!copy_name(c->model_file, file) || strchr(file, '/')) {
            fail(why, why_len, "default_model_filename '%.60s': a file name in the version folder", file);
            goto done;
        }
        c->model_file_given = true;
    }
    const json_node *params = swin_json_get(root, "parameters");
    if (params && params->kind == JSON_OBJECT) {
        for (const json_node *p = params->child; p; p = p->next) {
            const char *v = swin_json_text(swin_json_get(p, "string_value"));
            if (!v) {
                fail(why, why_len, "parameter '%s' has no string_value", p->key);
                goto done;
            }
            if (!read_parameter(c, p->key, v, why, why_len)) goto done;
        }
    }
    const json_node *ins = swin_json_get(root, "input"), *outs = swin_json_get(root, "output");
    if (swin_json_len(ins) > 2 || swin_json_len(outs) > 1) {
        fail(why, why_len, "%zu inputs and %zu outputs: swinrun serves at most 2 inputs and 1 output", swin_json_len(ins),
             swin_json_len(outs));
        goto done;
    }
    c->n_inputs = (int)swin_json_len(ins);
    c->n_outputs = (int)swin_json_len(outs);
    for (int i = 0; i < c->n_inputs; i++)
        if (!read_tensor(swin_json_at(ins, (size_t)i), &c->inputs[i], "input", why, why_len)) goto done;
    for (int i = 0; i < c->n_outputs; i++)
        if (!read_tensor(swin_json_at(outs, (size_t)i), &c->outputs[i], "output", why, why_len)) goto done;
    ok = c->mode == SWT_MODE_SEGMENT ? check_segment_tensors(c, why, why_len) : check_window_tensors(c, why, why_len);
    if (ok && c->mode == SWT_MODE_WINDOW && !c->cube[0]) cube_from_dims(c);
done:
    swin_json_free(root);
    return ok;
}

swin_context_params swt_context_params(const swt_config *c, bool kind_gpu, int device) {
    swin_context_params p = swin_context_default_params();
    p.backend = c->backend_given ? c->backend : kind_gpu ? SWIN_BACKEND_CUDA : SWIN_BACKEND_CPU;
    p.device = kind_gpu ? device : 0;
    p.threads = c->threads;
    p.mem_limit = c->mem_limit;
    memcpy(p.cube, c->cube, sizeof p.cube);
    p.precision = c->precision == SWT_PRECISION_FP16   ? SWIN_PRECISION_FP16
                  : c->precision == SWT_PRECISION_BF16 ? SWIN_PRECISION_BF16
                                                       : SWIN_PRECISION_FP32;
    return p;
}

swin_segment_params swt_segment_params(const swt_config *c, const swin_segment_params *base) {
    swin_segment_params sp = *base;
    if (c->spacing_given) memcpy(sp.spacing_mm, c->spacing_mm, sizeof sp.spacing_mm);
    if (c->range_given) {
        memcpy(sp.intensity_range, c->intensity_range, sizeof sp.intensity_range);
        sp.intensity_clip = true;
    }
    if (c->overlap_given) sp.overlap = c->overlap;
    if (c->blend_given) sp.blend = c->blend;
    if (c->norm_given) sp.normalize = c->normalize;
    if (c->multi_label_given) sp.activation = c->multi_label ? SWIN_ACTIVATION_SIGMOID : SWIN_ACTIVATION_AUTO;
    return sp;
}
