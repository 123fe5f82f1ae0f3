/* swinrun segment: CT NIfTI in, label map NIfTI out on the CT's own grid, through the
 * library's swin_segment_file; the batch form loads the model once for many volumes. Here:
 * finding the model, printing, exit codes, signals, the progress bar and the JSON report. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apps/cli/cli.h"
#include "apps/cli/prefetch.h"
#include "core/clock.h"
#include "fileio/atomic_file.h"
#include "fileio/tempfiles.h"
#include "formats/format.h"

/* --model, else $SWINRUN_MODEL, else the bundle swinrun fetch installs,
 * $XDG_DATA_HOME/swinrun/bundles/<default>/, when it exists, else
 * $XDG_DATA_HOME/swinrun/model.onnx (XDG_DATA_HOME defaults to ~/.local/share). */
static const char *find_model(const struct cli_args *a, char *buf, size_t n)
{
    if (a->model) return a->model;
    const char *env = getenv("SWINRUN_MODEL");
    if (env && *env) return env;
    struct stat sb;
    if (!cli_data_path(buf, n, "swinrun/bundles/" CLI_DEFAULT_BUNDLE) && stat(buf, &sb) == 0) return buf;
    cli_data_path(buf, n, "swinrun/model.onnx");
    return buf;
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

static const char *const stage_names[] = {"reading", "preprocessing", "segmenting", "writing", "done"};

/* The library's progress callback: a bar while the cubes run, the stage otherwise. */
static void progress(void *user, swin_stage stage, double fraction)
{
    struct bar *b = user;
    if (!b->on) return;
    if (stage != SWIN_STAGE_INFER) {
        if (stage == SWIN_STAGE_DONE) return;
        fprintf(stderr, "\r%s: %s...%*s", b->name, stage_names[stage], 40, "");
        b->open = true;
        fflush(stderr);
        return;
    }
    double el = swin_clock_seconds() - b->t0, eta = fraction > 0.05 ? el / (fraction - 0.05) * (0.95 - fraction) : 0;
    int w = 30, fill = (int)(w * (fraction - 0.05) / 0.9);
    char bar[32];
    for (int i = 0; i < w; i++) bar[i] = i < fill ? '#' : '.';
    bar[w] = 0;
    fprintf(stderr, "\r%s [%s] %3.0f%%  %5.0fs elapsed  ETA %5.0fs ", b->name, bar, 100.0 * fraction, el, eta);
    b->open = true;
    fflush(stderr);
}

static size_t peak_rss(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (size_t)ru.ru_maxrss * 1024;
}

static void json_volume(FILE *f, const char *in, const char *out, swin_status st, const swin_error *err,
                        const swin_segment_report *r, double total, bool prefetched)
{
    fprintf(f, "    {\"input\": ");
    json_string(f, in);
    fprintf(f, ", \"output\": ");
    json_string(f, out);
    fprintf(f, ", \"prefetched\": %s", prefetched ? "true" : "false");
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
            "\"classes\": %d,\n"
            "     \"seconds\": {\"read\": %.3f, \"preprocess\": %.3f, \"windows\": %.3f, \"cut\": %.3f, "
            "\"forward\": %.3f, \"blend\": %.3f, \"argmax\": %.3f, \"write\": %.3f, \"write_overlapped\": %.3f, "
            "\"seg\": %.3f, \"rtstruct\": %.3f, \"total\": %.3f},\n"
            "     \"planned_pipeline_bytes\": %zu, \"labels_present\": %d, \"dicom_input\": %s, "
            "\"dicom_written\": %s, \"dicom_notice\": ",
            r->input_dim[0], r->input_dim[1], r->input_dim[2], r->input_axcodes,
            r->input_spacing[0], r->input_spacing[1], r->input_spacing[2], r->grid_dim[0], r->grid_dim[1],
            r->grid_dim[2], r->grid_spacing[0], r->grid_spacing[1],
            r->grid_spacing[2], (long long)r->cubes, r->classes, r->seconds_read, r->seconds_preprocess,
            r->seconds_infer, r->seconds_cut, r->seconds_forward, r->seconds_blend, r->seconds_argmax,
            r->seconds_write, r->seconds_write_overlapped, r->seconds_seg, r->seconds_rtstruct, total, r->pipeline_bytes, r->labels_present,
            r->dicom_input ? "true" : "false", r->dicom_written ? "true" : "false");
    json_string(f, r->dicom_notice);
    fprintf(f, ",\n     \"blended_on_device\": %s, \"ring_bytes\": %zu, \"blend_note\": ",
            r->blended_on_device ? "true" : "false", r->ring_bytes);
    json_string(f, r->blend_note);
    if (r->seconds_device_idle >= 0) fprintf(f, ", \"device_idle_seconds\": %.4f", r->seconds_device_idle);
    else fprintf(f, ", \"device_idle_seconds\": null");
    if (r->dicom_input) {
        fprintf(f, ",\n     \"dicom_series\": ");
        json_string(f, r->dicom_series_uid);
        fprintf(f, ", \"dicom_series_reason\": ");
        json_string(f, r->dicom_series_reason);
        fprintf(f, ", \"dicom_series_found\": %d, \"dicom_skipped\": %d, \"dicom_skipped_what\": ",
                r->dicom_series_found, r->dicom_skipped);
        json_string(f, r->dicom_skipped_what);
        fprintf(f, ", \"dicom_tilt_degrees\": %.4g, \"dicom_slices\": %d, \"dicom_planes_filled\": %d",
                r->dicom_tilt_deg, r->dicom_slices, r->dicom_planes_filled);
    }
    /* organ statistics on the input's grid, one line per label present */
    fprintf(f, ",\n     \"statistics\": [");
    for (int i = 0; i < r->nstats; i++) {
        const swin_label_stats *x = &r->stats[i];
        fprintf(f, "%s\n      {\"label\": %d, \"voxels\": %lld, \"volume_ml\": %.6g, \"hu_mean\": %.6g, \"hu_std\": %.6g}",
                i ? "," : "", x->label, x->voxels, x->volume_ml, x->hu_mean, x->hu_std);
    }
    fprintf(f, "]}");
}

/* DIR/<name without its extension><suffix><ext>; ext NULL: the extension of the volumes the
 * input's format writes (.mha from MetaImage, .nrrd from NRRD, else .nii.gz) */
static void batch_name(char *buf, size_t n, const char *dir, const char *in, const char *suffix, const char *ext)
{
    const struct swin_format *f = swin_format_claiming(in);
    if (!ext) ext = f == swin_format_named("MetaImage") ? ".mha" : f == swin_format_named("NRRD") ? ".nrrd" : ".nii.gz";
    size_t end = strlen(in);
    while (end > 1 && in[end - 1] == '/') end--; /* a series folder: its name */
    const char *base = in + end;
    while (base > in && base[-1] != '/') base--;
    size_t len = (size_t)(in + end - base);
    static const char *const exts[] = {".nii.gz", ".hdr.gz", ".img.gz", ".nii", ".hdr", ".img",
                                       ".mha", ".mhd", ".nrrd", ".nhdr"};
    for (size_t i = 0; i < sizeof exts / sizeof *exts; i++) {
        size_t k = strlen(exts[i]);
        if (len > k && !strcmp(base + len - k, exts[i])) {
            len -= k;
            break;
        }
    }
    snprintf(buf, n, "%s/%.*s%s%s", dir, (int)len, base, suffix, ext);
}

/* What must hold before the model's context is made: the form's arguments, the inputs of
 * the one-volume form, the batch folder, the JSON report's folder. */
static swin_status check_form(const struct cli_args *a, swin_error *err)
{
    struct stat sb;
    for (int i = 0; !a->out_dir && i + 1 < a->npos; i++)
        if (stat(a->pos[i], &sb) != 0)
            return swin_error_set(err, SWIN_ERR_IO, "%s: %s", a->pos[i],
                                  errno == ENOENT ? "no such file or folder" : strerror(errno));
    if (a->out_dir) {
        if (a->probs || a->preview)
            return swin_error_set(err, SWIN_ERR_ARG,
                                  "with --out-dir use --with-probabilities / --with-preview (one file per input)");
        if (a->npos < 1) return swin_error_set(err, SWIN_ERR_ARG, "--out-dir needs at least one input volume");
        if (a->seg.rtstruct_path)
            return swin_error_set(err, SWIN_ERR_ARG, "--rtstruct names one file: use it without --out-dir");
        if (stat(a->out_dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
            return swin_error_set(err, SWIN_ERR_IO, "--out-dir %s: no such directory", a->out_dir);
        if (access(a->out_dir, W_OK) != 0)
            return swin_error_set(err, SWIN_ERR_IO, "--out-dir %s: cannot write there: %s", a->out_dir,
                                  strerror(errno));
    } else {
        if (a->with_probs || a->with_preview)
            return swin_error_set(err, SWIN_ERR_ARG, "--with-probabilities / --with-preview need --out-dir");
        if (a->npos < 2)
            return swin_error_set(err, SWIN_ERR_ARG, "expected CT.nii.gz OUT.nii.gz (or --out-dir DIR and inputs)");
        /* the files of one DICOM series, or the NIfTI files of one volume's channels */
        const struct swin_format *nifti = swin_format_named("NIfTI"), *first = swin_format_claiming(a->pos[0]);
        for (int i = 0; a->npos > 2 && i + 1 < a->npos; i++) {
            const struct swin_format *f = swin_format_claiming(a->pos[i]);
            if (!f || (first == nifti) != (f == nifti) || (f != nifti && !f->series))
                return swin_error_set(err, SWIN_ERR_ARG,
                                      "%s: several inputs before the output must be the DICOM files of one series or "
                                      "the NIfTI files of one volume's channels (for several volumes use --out-dir)",
                                      a->pos[i]);
        }
    }
    if (a->json && strcmp(a->json, "-")) return swin_atomic_file_check_dir(a->json, "JSON report", err);
    return SWIN_OK;
}

/* Finds and loads the model, or prints why not (exit code in *rc). */
static swin_model_t *open_model(const struct cli_args *a, char *buf, size_t n, const char **path, int *rc)
{
    *path = find_model(a, buf, n);
    struct stat sb;
    if (stat(*path, &sb) == 0) return cli_load_model(*path, &a->load, rc);
    const char *env = getenv("SWINRUN_MODEL");
    if (a->model) fprintf(stderr, "swinrun: model %s: %s\n", *path, strerror(errno));
    else if (env && *env) fprintf(stderr, "swinrun: SWINRUN_MODEL=%s: %s\n", *path, strerror(errno));
    else
        fprintf(stderr,
                "swinrun: no model found (no fetched bundle, nothing at %s): run swinrun fetch, give --model "
                "FILE or set SWINRUN_MODEL (or export one with tools/export/export_swin_unetr.py)\n",
                *path);
    *rc = 2;
    return NULL;
}

int cli_segment(const struct cli_args *a)
{
    swin_error err = {0};
    swin_status st = check_form(a, &err);
    if (st == SWIN_ERR_ARG) fprintf(stderr, "swinrun segment: %s (try swinrun segment --help)\n", err.msg);
    else if (st) fprintf(stderr, "swinrun: %s\n", err.msg);
    if (st) return cli_exit_code(st);
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    struct bar bar = {.on = !a->quiet && isatty(2)};
    double t_start = swin_clock_seconds();

    char mbuf[4096];
    const char *model_path;
    int rc;
    swin_model_t *m = open_model(a, mbuf, sizeof mbuf, &model_path, &rc);
    if (!m) {
        cli_free_classes();
        return rc;
    }
    /* a bundle's recipe, with the command line's options over it */
    struct cli_args over = *a;
    swin_segment_params recipe = swin_model_segment_params(m);
    cli_seg_over(&over, &recipe);
    swin_segment_params sp = over.seg;
    swin_model_info mi;
    swin_model_get_info(m, &mi);
    if (mi.recipe_warnings[0] && !a->quiet) {
        fprintf(stderr, "swinrun: %s: keys of the recipe swinrun does not follow (docs/bundles.md):\n", mi.recipe);
        cli_print_lines(stderr, "  ", mi.recipe_warnings);
    }
    int crc = a->classes ? cli_load_classes(a->classes, &sp) : 0;
    if (crc) {
        swin_model_free(m);
        return crc;
    }
    double t_model = swin_clock_seconds() - t_start;
    swin_context_t *ctx = NULL;
    if ((st = swin_context_create(m, &a->ctx, &ctx, &err))) {
        fprintf(stderr, "swinrun: %s\n", err.msg);
        swin_model_free(m);
        cli_free_classes();
        return cli_exit_code(st);
    }
    swin_plan_info plan;
    swin_context_plan(ctx, &plan);
    if (plan.precision == SWIN_PRECISION_BF16) {
        /* the context runs its own bfloat16 copy: the float32 weights can go before the run */
        swin_model_free(m);
        m = NULL;
    }
    if (bar.on)
        fprintf(stderr, "swinrun: backend %s (%s; %s), cube %d x %d x %d\n", cli_backend_name(plan.backend),
                cli_dtype_name(&plan), plan.backend_reason, plan.cube[0], plan.cube[1], plan.cube[2]);
    sp.progress = progress;
    sp.user = &bar;

    FILE *jf = NULL;
    struct cli_json *json = NULL;
    if (a->json && (st = cli_json_open(&json, a->json, &jf, &err))) {
        fprintf(stderr, "swinrun: %s\n", err.msg);
        swin_context_free(ctx);
        swin_model_free(m);
        cli_free_classes();
        return cli_exit_code(st);
    }
    if (jf) {
        fprintf(jf, "{\"model\": ");
        json_string(jf, model_path);
        fprintf(jf, ", \"backend\": \"%s\", \"backend_reason\": ", cli_backend_name(plan.backend));
        json_string(jf, plan.backend_reason);
        fprintf(jf, ", \"precision\": \"%s\", \"precision_note\": ", swin_precision_name(plan.precision));
        json_string(jf, plan.precision_note ? plan.precision_note : "");
        fprintf(jf, ", \"cpu_isa\": \"%s\", \"cpu_isa_best\": \"%s\"", plan.cpu_isa ? plan.cpu_isa : "",
                plan.cpu_isa_best ? plan.cpu_isa_best : "");
        fprintf(
            jf,
            ", \"dtype\": \"%s\", \"roi\": [%d, %d, %d], \"overlap\": %g, \"blend\": \"%s\",\n"
            " \"intensity_norm\": \"%s\", \"multi_label\": %s, \"invert\": \"%s\", \"model_load_seconds\": %.3f, \"context_bytes\": %zu, \"context_weight_bytes\": %zu, "
            "\"context_arena_bytes\": %zu,\n \"volumes\": [\n",
            cli_dtype_name(&plan), plan.cube[0], plan.cube[1], plan.cube[2], sp.overlap,
            sp.blend == SWIN_BLEND_GAUSSIAN ? "gaussian" : "constant",
            sp.normalize == SWIN_NORM_ZSCORE_NONZERO ? "zscore-nonzero"
            : sp.normalize == SWIN_NORM_ZSCORE       ? "zscore"
                                                     : "range",
            swin_mask_channels(sp.activation, mi.out_channels) ? "true" : "false",
            sp.invert == SWIN_INVERT_LINEAR ? "linear" : "nearest", t_model, plan.total_bytes, plan.weight_bytes,
            plan.arena_bytes);
    }
    char out_buf[4096], prob_buf[4096], prev_buf[4096];
    /* one input given as its files: a DICOM series' files, or the channels of one volume */
    bool file_list = !a->out_dir && a->npos > 2;
    const bool channel_files = file_list && swin_format_claiming(a->pos[0]) == swin_format_named("NIfTI");
    int ninputs = a->out_dir ? a->npos : 1, failed = 0, worst = 0, classes = 0;
    size_t planned_max = 0, ring_max = 0, last_bytes = 0;
    /* with CUDA, each next volume read and preprocessed while this one's cubes run; the CPU
     * backend's cubes use every core, and the host would hold two volumes for nothing */
    const bool prefetch = a->out_dir && ninputs > 1 && plan.backend == SWIN_BACKEND_CUDA && !a->no_prefetch;
    struct cli_prefetch pf[2] = {0};
    for (int i = 0; i < ninputs; i++) {
        const char *in = a->pos[i], *out = a->out_dir ? out_buf : a->pos[a->npos - 1];
        sp.probabilities_path = a->probs;
        sp.preview_path = a->preview;
        if (a->out_dir) {
            batch_name(out_buf, sizeof out_buf, a->out_dir, in, "_seg", NULL);
            batch_name(prob_buf, sizeof prob_buf, a->out_dir, in, "_probabilities", NULL);
            batch_name(prev_buf, sizeof prev_buf, a->out_dir, in, "_preview", ".png");
            sp.probabilities_path = a->with_probs ? prob_buf : NULL;
            sp.preview_path = a->with_preview ? prev_buf : NULL;
        }
        const char *base = strrchr(in, '/');
        bar.name = base ? base + 1 : in;
        bar.t0 = swin_clock_seconds();
        swin_segment_report rep;
        double t0 = swin_clock_seconds();
        if (prefetch) {
            struct cli_prefetch *now = &pf[i % 2], *next = &pf[(i + 1) % 2];
            if (i == 0) cli_prefetch_start(now, ctx, &sp, in, out, sp.probabilities_path, sp.preview_path);
            cli_prefetch_wait(now);
            if (i + 1 < ninputs) {
                char o[4096], pr[4096], pv[4096];
                batch_name(o, sizeof o, a->out_dir, a->pos[i + 1], "_seg", NULL);
                batch_name(pr, sizeof pr, a->out_dir, a->pos[i + 1], "_probabilities", NULL);
                batch_name(pv, sizeof pv, a->out_dir, a->pos[i + 1], "_preview", ".png");
                cli_prefetch_start(next, ctx, &sp, a->pos[i + 1], o, a->with_probs ? pr : NULL,
                                   a->with_preview ? pv : NULL);
            }
            rep = now->rep;
            err = now->err;
            st = now->st ? now->st : swin_segment_file_prepared(ctx, now->prepared, &sp, &rep, &err);
            now->prepared = NULL;
        } else {
            const char *const *files = (const char *const *)a->pos;
            st = channel_files ? swin_segment_files(ctx, files, a->npos - 1, out, &sp, &rep, &err)
                 : file_list   ? swin_segment_dicom(ctx, files, a->npos - 1, out, &sp, &rep, &err)
                               : swin_segment_file(ctx, in, out, &sp, &rep, &err);
        }
        /* prefetching, a volume's bytes and the next's are held at once */
        if (rep.pipeline_bytes + last_bytes > planned_max) planned_max = rep.pipeline_bytes + last_bytes;
        if (prefetch) last_bytes = rep.pipeline_bytes;
        if (rep.ring_bytes > ring_max) ring_max = rep.ring_bytes;
        if (rep.blend_note[0]) fprintf(stderr, "swinrun: %s: blended on the host: %s\n", in, rep.blend_note);
        if (rep.classes) classes = rep.classes;
        if (bar.open) fputc('\n', stderr);
        bar.open = false;
        const char *const *series_in = file_list ? (const char *const *)a->pos : &in;
        int nseries_in = file_list ? a->npos - 1 : 1;
        if (rep.dicom_input && (rep.dicom_series_found > 1 || rep.dicom_skipped) && rep.dicom_series_uid[0])
            fprintf(stderr, "swinrun: %s: series %s: %s%s%s\n", in, rep.dicom_series_uid, rep.dicom_series_reason,
                    rep.dicom_skipped ? "; skipped " : "", rep.dicom_skipped_what);
        if (!st && rep.dicom_planes_filled)
            fprintf(stderr,
                    "swinrun: %s: uneven slice spacing: %d slices read onto a grid of %lld planes %.4g mm apart, %d "
                    "interpolated between slices (labelled in a NIfTI label map; a SEG or RT Structure Set covers "
                    "the slices)\n",
                    in, rep.dicom_slices, rep.input_dim[2], rep.input_spacing[2], rep.dicom_planes_filled);
        if (!st && rep.dicom_tilt_deg >= SWIN_DICOM_TILT_NOTICE_DEG)
            fprintf(stderr, "swinrun: %s: gantry tilt %.1f degrees: segmented on the tilted slices (a sheared grid)\n",
                    in, rep.dicom_tilt_deg);
        if (st) {
            fprintf(stderr, "swinrun: %s\n", err.msg);
            if (rep.dicom_input && rep.dicom_series_found > 1 && !rep.dicom_series_uid[0])
                cli_print_series(stderr, series_in, nseries_in, sp.dicom_series, "swinrun:   ");
            failed++;
            int code = cli_exit_code(st);
            if (code > worst) worst = code;
        } else {
            size_t ol = strlen(out);
            bool wants_dicom = sp.rtstruct_path || (ol > 4 && !strcasecmp(out + ol - 4, ".dcm"));
            if (rep.dicom_input && !rep.dicom_written && wants_dicom) {
                if (!rep.labels_present)
                    fprintf(stderr, "swinrun: no organ found in %s: no DICOM SEG or RT Structure Set written\n", in);
                else
                    fprintf(stderr,
                            "swinrun: %s: organs found only on planes interpolated between the slices: no DICOM SEG "
                            "or RT Structure Set written\n", in);
            }
            if (rep.dicom_written && rep.dicom_notice[0]) fprintf(stderr, "swinrun: %s: %s\n", in, rep.dicom_notice);
            if (bar.on)
                fprintf(stderr, "%s -> %s: %lld cubes, %.1f s\n", bar.name, out, rep.cubes, swin_clock_seconds() - t0);
        }
        if (jf) {
            json_volume(jf, in, out, st, &err, &rep, swin_clock_seconds() - t0, prefetch && i > 0);
            fprintf(jf, "%s\n", i + 1 < ninputs ? "," : "");
        }
    }
#ifdef SWINRUN_EMULATED_CUDA
    if (!failed && plan.backend == SWIN_BACKEND_CUDA && (st = cli_emu_check_device_bytes(&plan, ring_max, &err))) {
        fprintf(stderr, "swinrun: %s\n", err.msg);
        failed++;
        worst = worst > 1 ? worst : 1;
    }
#endif
    if (jf) {
        fprintf(jf, " ],\n \"classes\": %d, \"planned_pipeline_bytes\": %zu, \"planned_total_bytes\": %zu, "
                    "\"peak_rss_bytes\": %zu, \"total_seconds\": %.3f}\n",
                classes, planned_max, planned_max + plan.total_bytes, peak_rss(), swin_clock_seconds() - t_start);
        swin_status js = cli_json_commit(json, &err);
        if (js) {
            fprintf(stderr, "swinrun: %s\n", err.msg);
            failed++;
            if (cli_exit_code(js) > worst) worst = cli_exit_code(js);
        }
    }
    swin_context_free(ctx);
    swin_model_free(m);
    cli_free_classes();
    if (!failed) return 0;
    if (a->out_dir && ninputs > 1) {
        fprintf(stderr, "swinrun: %d of %d volumes failed\n", failed, ninputs);
        return 1;
    }
    return worst;
}
