/* swinrun segment: CT NIfTI in, label map NIfTI out on the CT's own grid; the batch form
 * loads the model once for many volumes. Options are parsed here (they are this verb's
 * own); printing, exit codes, signals and the progress bar live here, the pipeline is in
 * runtime/pipeline/segment.h. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "runtime/atomic_file.h"
#include "runtime/cli/cli.h"
#include "runtime/pipeline/segment.h"
#include "runtime/tempfiles.h"

static void usage(FILE *o)
{
    fprintf(o,
            "Usage:\n"
            "  swinrun CT.nii.gz OUT.nii.gz [options]            segment one CT (same as swinrun segment ...)\n"
            "  swinrun segment [options] CT.nii.gz OUT.nii.gz\n"
            "  swinrun segment [options] --out-dir DIR CT1.nii.gz CT2.nii ...\n"
            "      batch: the model is loaded once; DIR/<name>_seg.nii.gz per input; a failed volume is\n"
            "      reported and skipped, the exit status is then 1\n"
            "\n"
            "Reads NIfTI-1/NIfTI-2 (.nii, .nii.gz; any integer or float datatype; scl_slope/scl_inter;\n"
            "sform if sform_code > 0, else qform if qform_code > 0, else pixdim).\n"
            "Writes the label map (uint8, uint16 beyond 256 classes) on the input's grid with the\n"
            "input's affine, qform/sform and codes.\n"
            "Pipeline (MONAI's BTCV recipe): orientation to RAS, trilinear resampling to the spacing,\n"
            "intensity window to [0, 1] with clipping, sliding windows of the model's cube, argmax,\n"
            "labels back to the input grid (nearest).\n"
            "Memory: the windows' logits accumulate in a slab one window deep across the volume\n"
            "((classes + 1) floats per voxel of the slab) and each plane is finished as soon as no\n"
            "window reaches it, so a large CT never holds a float per class for the whole volume.\n"
            "\n"
            "Model:\n"
            "  --model FILE        the Swin UNETR ONNX export; default $SWINRUN_MODEL, else\n"
            "                      $XDG_DATA_HOME/swinrun/model.onnx (XDG_DATA_HOME defaults to ~/.local/share)\n"
            "  --backend B         cpu (default) | cuda | auto (CUDA when a GPU opens, else CPU); cuda without\n"
            "                      a usable GPU says so and runs on the CPU\n"
            "  --threads N         CPU threads (default: every core)\n"
            "  --device N          CUDA device index (default 0)\n"
            "  --precision P       fp32 (default) | fp16 (CUDA: float16 weights and activations, tensor-core\n"
            "                      GEMMs with float32 accumulation, half the device bytes) | bf16 (CPU:\n"
            "                      bfloat16 weights and GEMM inputs, float32 accumulation, norms and\n"
            "                      softmax); --half is --precision fp16; the CPU fallback runs float32\n"
            "  --mem-limit SIZE    refuse a model plan (weights + activations) above SIZE, e.g. 2G\n"
            "Preprocessing:\n"
            "  --spacing X Y Z     target spacing in mm along R, A, S (default 1.5 1.5 2.0)\n"
            "  --no-resample       keep the voxel grid (orientation and window still apply)\n"
            "  --no-reorient       keep the axis order and directions of the file\n"
            "  --window LO HI      intensity window mapped to [0, 1], clipped (default -175 250 HU)\n"
            "  --no-window         feed the intensities unchanged\n"
            "Sliding windows:\n"
            "  --roi D H W         window size (default: the export cube; required for dynamic exports;\n"
            "                      multiples of 32). --cube is the same option\n"
            "  --overlap F         overlap of neighbouring windows, 0 <= F < 1 (default 0.5)\n"
            "  --blend M           constant (default) | gaussian\n"
            "  --sigma-scale F     gaussian blending: sigma = F * window size (default 0.125)\n"
            "Outputs (each written to a temporary file, renamed when complete):\n"
            "  --probabilities FILE  also write softmax class probabilities, float32 4D (x, y, z, class)\n"
            "                      on the input grid (trilinear). Needs one float per class per voxel\n"
            "                      of the resampled volume in memory (the labels alone do not)\n"
            "  --preview FILE.png  three orthogonal mid slices (RAS grid, radiological view) with labels\n"
            "  --json FILE         timings, memory (planned and peak RSS), window count\n"
            "  --out-dir DIR       batch form (see above); with it --with-probabilities and --with-preview\n"
            "                      write DIR/<name>_probabilities.nii.gz and DIR/<name>_preview.png\n"
            "  -q, --quiet         no progress bar (there is none when stderr is not a terminal)\n"
            "\n"
            "Exit status: 0 success, 1 runtime failure, 2 bad arguments, unreadable input or unwritable\n"
            "output files (a full disk included). A failed volume leaves none of its outputs. SIGINT or\n"
            "SIGTERM: the temporary files are removed and swinrun ends by that signal (a shell reports\n"
            "130 or 143); the outputs of volumes already finished are kept.\n");
}

struct seg_args {
    const char **inputs;
    int ninputs;
    const char *out, *out_dir, *model, *probs, *preview, *json;
    bool with_probs, with_preview, quiet;
    swin_context_params ctx;
    struct swin_segment_options opt;
};

static int bad(const char *fmt, const char *what)
{
    fprintf(stderr, "swinrun segment: ");
    fprintf(stderr, fmt, what);
    fprintf(stderr, " (try swinrun segment --help)\n");
    return 2;
}

static int num(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return end == s || *end || errno || !isfinite(*v);
}

static int integer(const char *s, int lo, int hi, int *v)
{
    double d;
    if (num(s, &d) || d != floor(d) || d < lo || d > hi) return 1;
    *v = (int)d;
    return 0;
}

static int parse(int argc, char **argv, struct seg_args *a, bool *help)
{
    memset(a, 0, sizeof *a);
    a->ctx = swin_context_default_params();
    a->opt = swin_segment_default_options();
    a->inputs = calloc((size_t)argc, sizeof *a->inputs);
    if (!a->inputs) {
        fprintf(stderr, "swinrun: out of host memory\n");
        return 1;
    }
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        int left = argc - 1 - i;
#define NEED(n) if (left < (n)) return bad("option %s needs a value", o)
        int rc = cli_parse_context_option("segment", argc, argv, &i, &a->ctx);
        if (rc == 2) return 2;
        if (rc == 1) continue;
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) *help = true;
        else if (!strcmp(o, "-q") || !strcmp(o, "--quiet")) a->quiet = true;
        else if (!strcmp(o, "--model")) { NEED(1); a->model = argv[++i]; }
        else if (!strcmp(o, "--out-dir")) { NEED(1); a->out_dir = argv[++i]; }
        else if (!strcmp(o, "--probabilities")) { NEED(1); a->probs = argv[++i]; }
        else if (!strcmp(o, "--preview")) { NEED(1); a->preview = argv[++i]; }
        else if (!strcmp(o, "--json")) { NEED(1); a->json = argv[++i]; }
        else if (!strcmp(o, "--with-probabilities")) a->with_probs = true;
        else if (!strcmp(o, "--with-preview")) a->with_preview = true;
        else if (!strcmp(o, "--no-resample")) a->opt.resample = false;
        else if (!strcmp(o, "--no-reorient")) a->opt.reorient = false;
        else if (!strcmp(o, "--no-window")) a->opt.window.enabled = false;
        else if (!strcmp(o, "--spacing")) {
            NEED(3);
            for (int k = 0; k < 3; k++)
                if (num(argv[++i], &a->opt.spacing[k]) || !(a->opt.spacing[k] >= 0.01 && a->opt.spacing[k] <= 100))
                    return bad("%s takes three spacings in mm, each 0.01..100", o);
        } else if (!strcmp(o, "--window")) {
            NEED(2);
            double lo, hi;
            if (num(argv[i + 1], &lo) || num(argv[i + 2], &hi) || !(hi > lo))
                return bad("%s takes two numbers LO HI with LO < HI", o);
            a->opt.window = (struct swin_intensity){.enabled = true, .lo = (float)lo, .hi = (float)hi};
            i += 2;
        } else if (!strcmp(o, "--roi") || !strcmp(o, "--cube")) {
            NEED(3);
            for (int k = 0; k < 3; k++)
                if (integer(argv[++i], 32, 1024, &a->ctx.cube[k]) || a->ctx.cube[k] % 32)
                    return bad("%s takes three multiples of 32 (32..1024)", o);
        } else if (!strcmp(o, "--overlap")) {
            NEED(1);
            if (num(argv[++i], &a->opt.overlap) || !(a->opt.overlap >= 0 && a->opt.overlap < 1))
                return bad("%s takes a number in [0, 1)", o);
        } else if (!strcmp(o, "--blend")) {
            NEED(1);
            const char *m = argv[++i];
            if (!strcmp(m, "constant")) a->opt.blend = SWIN_BLEND_CONSTANT;
            else if (!strcmp(m, "gaussian")) a->opt.blend = SWIN_BLEND_GAUSSIAN;
            else return bad("--blend takes constant or gaussian, not '%s'", m);
        } else if (!strcmp(o, "--sigma-scale")) {
            NEED(1);
            if (num(argv[++i], &a->opt.sigma_scale) || !(a->opt.sigma_scale > 0))
                return bad("%s takes a positive number", o);
        } else if (o[0] == '-' && o[1]) {
            return bad("unknown option '%s'", o);
        } else {
            a->inputs[a->ninputs++] = o;
        }
#undef NEED
    }
    if (*help) return 0;
    if (a->out_dir) {
        if (a->probs || a->preview)
            return bad("%s", "with --out-dir use --with-probabilities / --with-preview (one file per input)");
        if (a->ninputs < 1) return bad("%s", "--out-dir needs at least one input volume");
    } else {
        if (a->with_probs || a->with_preview) return bad("%s", "--with-probabilities / --with-preview need --out-dir");
        if (a->ninputs != 2) return bad("%s", "expected CT.nii.gz OUT.nii.gz (or --out-dir DIR and inputs)");
        a->out = a->inputs[1];
        a->ninputs = 1;
    }
    return 0;
}

/* --model, else $SWINRUN_MODEL, else $XDG_DATA_HOME/swinrun/model.onnx (~/.local/share). */
static const char *find_model(const struct seg_args *a, char *buf, size_t n)
{
    if (a->model) return a->model;
    const char *env = getenv("SWINRUN_MODEL");
    if (env && *env) return env;
    const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
    if (xdg && *xdg) snprintf(buf, n, "%s/swinrun/model.onnx", xdg);
    else snprintf(buf, n, "%s/.local/share/swinrun/model.onnx", home ? home : "");
    return buf;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void on_signal(int sig)
{
    swin_tempfile_remove_all(); /* async-signal-safe: only unlink() */
    signal(sig, SIG_DFL);
    raise(sig);
}

struct bar {
    bool on, open; /* open: a bar line is drawn and not yet ended */
    const char *name;
    double t0;
};

static void progress(void *user, int64_t done, int64_t total)
{
    struct bar *b = user;
    if (!b->on) return;
    double el = now() - b->t0, eta = done ? el / (double)done * (double)(total - done) : 0;
    int w = 30, fill = (int)(w * done / (total ? total : 1));
    char bar[32];
    for (int i = 0; i < w; i++) bar[i] = i < fill ? '#' : '.';
    bar[w] = 0;
    fprintf(stderr, "\r%s [%s] %lld/%lld windows  %5.0fs elapsed  ETA %5.0fs ", b->name, bar, (long long)done,
            (long long)total, el, eta);
    b->open = done != total;
    if (!b->open) fputc('\n', stderr);
    fflush(stderr);
}

static void stage(void *user, const char *what)
{
    struct bar *b = user;
    if (!b->on) return;
    fprintf(stderr, "\r%s: %s...%*s", b->name, what, 40, "");
    b->open = true;
    if (!strcmp(what, "writing")) fputc('\n', stderr), b->open = false;
    fflush(stderr);
}

struct predictor {
    swin_context_t *ctx;
};

static swin_status predict(void *user, const float *in, float *out, swin_error *err)
{
    return swin_context_run(((struct predictor *)user)->ctx, in, out, err);
}

static size_t peak_rss(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (size_t)ru.ru_maxrss * 1024;
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", (unsigned char)*s);
        else fputc(*s, f);
    }
    fputc('"', f);
}

static void json_volume(FILE *f, const char *in, const char *out, swin_status st, const swin_error *err,
                        const struct swin_segment_report *r, double total)
{
    fprintf(f, "    {\"input\": ");
    json_string(f, in);
    fprintf(f, ", \"output\": ");
    json_string(f, out);
    fprintf(f, ", \"status\": \"%s\"", swin_status_name(st));
    if (st) {
        fprintf(f, ", \"error\": ");
        json_string(f, err->msg);
        fprintf(f, "}");
        return;
    }
    fprintf(f,
            ",\n     \"input_dim\": [%lld, %lld, %lld], \"input_axcodes\": \"%s\", \"input_spacing\": [%g, %g, %g],\n"
            "     \"grid_dim\": [%lld, %lld, %lld], \"grid_spacing\": [%g, %g, %g], \"windows\": %lld, "
            "\"slab_axis\": %d, \"label_bytes\": %d,\n"
            "     \"seconds\": {\"read\": %.3f, \"preprocess\": %.3f, \"windows\": %.3f, \"write\": %.3f, "
            "\"total\": %.3f},\n"
            "     \"planned_pipeline_bytes\": %zu}",
            (long long)r->in_dim[0], (long long)r->in_dim[1], (long long)r->in_dim[2], r->in_axcodes,
            r->in_spacing[0], r->in_spacing[1], r->in_spacing[2], (long long)r->grid_dim[0],
            (long long)r->grid_dim[1], (long long)r->grid_dim[2], r->grid_spacing[0], r->grid_spacing[1],
            r->grid_spacing[2], (long long)r->windows, r->slab_axis, r->label_bytes, r->t_read, r->t_preprocess,
            r->t_windows, r->t_write, total, r->planned_bytes);
}

/* DIR/<name without .nii(.gz)><suffix> */
static void batch_name(char *buf, size_t n, const char *dir, const char *in, const char *suffix)
{
    const char *base = strrchr(in, '/');
    base = base ? base + 1 : in;
    size_t len = strlen(base);
    if (len > 7 && !strcmp(base + len - 7, ".nii.gz")) len -= 7;
    else if (len > 4 && !strcmp(base + len - 4, ".nii")) len -= 4;
    snprintf(buf, n, "%s/%.*s%s", dir, (int)len, base, suffix);
}

int cli_segment(int argc, char **argv)
{
    struct seg_args a;
    bool help = false;
    int rc = parse(argc, argv, &a, &help);
    if (rc || help) {
        if (help) usage(stdout);
        free(a.inputs);
        return rc;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    struct bar bar = {.on = !a.quiet && isatty(2)};
    double t_start = now();

    char mbuf[4096];
    const char *model_path = find_model(&a, mbuf, sizeof mbuf);
    struct stat sb;
    if (stat(model_path, &sb) != 0) {
        const char *env = getenv("SWINRUN_MODEL");
        if (a.model) fprintf(stderr, "swinrun: model %s: %s\n", model_path, strerror(errno));
        else if (env && *env) fprintf(stderr, "swinrun: SWINRUN_MODEL=%s: %s\n", model_path, strerror(errno));
        else
            fprintf(stderr,
                    "swinrun: no model found at %s: give --model FILE or set SWINRUN_MODEL (export one with "
                    "tools/export_swin_unetr.py)\n",
                    model_path);
        free(a.inputs);
        return 2;
    }
    swin_error err = {0};
    swin_model_t *m = cli_load_model(model_path, &rc);
    if (!m) {
        free(a.inputs);
        return rc;
    }
    double t_model = now() - t_start;
    swin_model_info info;
    swin_model_get_info(m, &info);
    a.opt.in_channels = info.in_channels;
    a.opt.out_channels = info.out_channels;
    swin_context_t *ctx = NULL;
    /* cheap checks before planning and allocating the model's context */
    char out_buf[4096], prob_buf[4096], prev_buf[4096];
    swin_status st = SWIN_OK;
    if (!a.out_dir) {
        a.opt.probabilities_path = a.probs;
        a.opt.preview_path = a.preview;
        st = swin_segment_check(a.out, &a.opt, &err);
        size_t pl = a.preview ? strlen(a.preview) : 0;
        if (!st && a.preview && (pl < 5 || strcmp(a.preview + pl - 4, ".png")))
            st = swin_error_set(&err, SWIN_ERR_ARG, "%s: the preview is a PNG: name it .png", a.preview);
    } else if (stat(a.out_dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        st = swin_error_set(&err, SWIN_ERR_IO, "--out-dir %s: no such directory", a.out_dir);
    } else if (access(a.out_dir, W_OK) != 0) {
        st = swin_error_set(&err, SWIN_ERR_IO, "--out-dir %s: cannot write there: %s", a.out_dir, strerror(errno));
    } else if (info.in_channels != 1) {
        st = swin_segment_check(NULL, &a.opt, &err);
    }
    if (!st && a.json) st = atomic_file_check_dir(a.json, "JSON report", &err);
    if (!st) st = swin_context_create(m, &a.ctx, &ctx, &err);
    if (st == SWIN_ERR_BACKEND && a.ctx.backend == SWIN_BACKEND_CUDA) {
        fprintf(stderr, "swinrun: %s; running on the CPU backend (float32) instead\n", err.msg);
        a.ctx.backend = SWIN_BACKEND_CPU;
        a.ctx.precision = SWIN_PRECISION_FP32;
        st = swin_context_create(m, &a.ctx, &ctx, &err);
    }
    if (st) {
        fprintf(stderr, "swinrun: %s\n", err.msg);
        swin_model_free(m);
        free(a.inputs);
        return cli_exit_code(st);
    }
    swin_plan_info plan;
    swin_context_plan(ctx, &plan);
    memcpy(a.opt.roi, plan.cube, sizeof a.opt.roi);
    struct predictor pr = {ctx};
    a.opt.predict = predict;
    a.opt.predict_user = &pr;
    a.opt.progress = progress;
    a.opt.progress_user = &bar;
    a.opt.stage = stage;

    struct atomic_file jf = {0};
    if (a.json) {
        if ((st = atomic_file_open(&jf, a.json, &err))) {
            fprintf(stderr, "swinrun: %s\n", err.msg);
            swin_context_free(ctx);
            swin_model_free(m);
            free(a.inputs);
            return cli_exit_code(st);
        }
        fprintf(jf.f, "{\"model\": ");
        json_string(jf.f, model_path);
        fprintf(jf.f, ", \"backend\": \"%s\", \"dtype\": \"%s\", \"roi\": [%d, %d, %d], \"overlap\": %g, "
                      "\"blend\": \"%s\", \"classes\": %d,\n \"model_load_seconds\": %.3f, "
                      "\"context_bytes\": %zu, \"context_weight_bytes\": %zu, \"context_arena_bytes\": %zu,\n"
                      " \"volumes\": [\n",
                plan.backend == SWIN_BACKEND_CUDA ? "cuda" : "cpu", swin_precision_storage(plan.precision), plan.cube[0],
                plan.cube[1], plan.cube[2],
                a.opt.overlap,
                a.opt.blend == SWIN_BLEND_GAUSSIAN ? "gaussian" : "constant", info.out_channels, t_model,
                plan.total_bytes, plan.weight_bytes, plan.arena_bytes);
    }
    int failed = 0, worst = 0;
    size_t planned_max = 0;
    for (int i = 0; i < a.ninputs; i++) {
        const char *in = a.inputs[i], *out = a.out;
        if (a.out_dir) {
            batch_name(out_buf, sizeof out_buf, a.out_dir, in, "_seg.nii.gz");
            batch_name(prob_buf, sizeof prob_buf, a.out_dir, in, "_probabilities.nii.gz");
            batch_name(prev_buf, sizeof prev_buf, a.out_dir, in, "_preview.png");
            out = out_buf;
            a.opt.probabilities_path = a.with_probs ? prob_buf : NULL;
            a.opt.preview_path = a.with_preview ? prev_buf : NULL;
        }
        const char *base = strrchr(in, '/');
        bar.name = base ? base + 1 : in;
        bar.t0 = now();
        struct swin_segment_report rep;
        double t0 = now();
        st = swin_segment_file(in, out, &a.opt, &rep, &err);
        if (rep.planned_bytes > planned_max) planned_max = rep.planned_bytes;
        if (bar.open) fputc('\n', stderr);
        bar.open = false;
        if (st) {
            fprintf(stderr, "swinrun: %s\n", err.msg);
            failed++;
            int code = cli_exit_code(st);
            if (code > worst) worst = code;
        } else if (bar.on) {
            fprintf(stderr, "%s -> %s: %lld windows, %.1f s\n", bar.name, out, (long long)rep.windows, now() - t0);
        }
        if (a.json) {
            json_volume(jf.f, in, out, st, &err, &rep, now() - t0);
            fprintf(jf.f, "%s\n", i + 1 < a.ninputs ? "," : "");
        }
    }
    if (a.json) {
        fprintf(jf.f, " ],\n \"planned_pipeline_bytes\": %zu, \"planned_total_bytes\": %zu, \"peak_rss_bytes\": %zu, "
                      "\"total_seconds\": %.3f}\n",
                planned_max, planned_max + plan.total_bytes, peak_rss(), now() - t_start);
        swin_status js = atomic_file_commit(&jf, &err);
        if (js) {
            fprintf(stderr, "swinrun: %s\n", err.msg);
            failed++;
            if (cli_exit_code(js) > worst) worst = cli_exit_code(js);
        }
    }
    swin_context_free(ctx);
    swin_model_free(m);
    free(a.inputs);
    if (!failed) return 0;
    if (a.out_dir && a.ninputs > 1) {
        fprintf(stderr, "swinrun: %d of %d volumes failed\n", failed, a.ninputs);
        return 1;
    }
    return worst;
}
