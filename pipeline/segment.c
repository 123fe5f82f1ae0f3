#include "pipeline/segment.h"
#include "core/settings.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "fileio/atomic_file.h"
#include "formats/format.h"
#include "pipeline/invert_linear.h"
#include "pipeline/label_writer.h"
#include "pipeline/parallel.h"
#include "pipeline/preview.h"
#include "pipeline/normalize.h"
#include "pipeline/resample.h"
#include "pipeline/segment_params.h"
#include "pipeline/cubes.h"

struct swin_pipeline swin_pipeline_defaults(void)
{
    return (struct swin_pipeline){.params = swin_segment_default_params(), .in_channels = 1};
}

static swin_status check_params(const struct swin_pipeline *p, swin_error *err)
{
    const swin_segment_params *o = &p->params;
    if (p->in_channels < 1 || p->in_channels > SWIN_VOLUME_MAX_CHANNELS)
        return swin_error_set(err, SWIN_ERR_MODEL, "the model takes %d input channels (1..%d supported)",
                              p->in_channels, SWIN_VOLUME_MAX_CHANNELS);
    if (o->activation != SWIN_ACTIVATION_AUTO && o->activation != SWIN_ACTIVATION_SIGMOID)
        return swin_error_set(err, SWIN_ERR_ARG, "unknown activation %d (auto or sigmoid)", (int)o->activation);
    if (swin_mask_channels(o->activation, p->out_channels) > SWIN_MASK_CHANNELS_MAX)
        return swin_error_set(err, SWIN_ERR_MODEL,
                              "the model has %d output channels: one sigmoid mask each takes at most %d",
                              p->out_channels, SWIN_MASK_CHANNELS_MAX);
    if (o->normalize != SWIN_NORM_RANGE && o->normalize != SWIN_NORM_ZSCORE && o->normalize != SWIN_NORM_ZSCORE_NONZERO)
        return swin_error_set(err, SWIN_ERR_ARG, "unknown intensity normalisation %d (range, zscore or zscore-nonzero)",
                              (int)o->normalize);
    if (p->out_channels < 1 || p->out_channels > SWIN_CLASSES_MAX)
        return swin_error_set(err, SWIN_ERR_MODEL, "the model has %d output channels (1..%d supported)",
                              p->out_channels, SWIN_CLASSES_MAX);
    if (o->normalize == SWIN_NORM_RANGE && o->intensity_clip && !(o->intensity_range[1] > o->intensity_range[0]))
        return swin_error_set(err, SWIN_ERR_ARG, "intensity range [%g, %g]: the upper end must exceed the lower",
                              o->intensity_range[0], o->intensity_range[1]);
    for (int k = 0; k < 3; k++)
        if (o->resample && !(o->spacing_mm[k] >= SWIN_SPACING_MIN_MM && o->spacing_mm[k] <= SWIN_SPACING_MAX_MM))
            return swin_error_set(err, SWIN_ERR_ARG, "spacing %g mm: each must be %g..%g mm", o->spacing_mm[k],
                                  SWIN_SPACING_MIN_MM, SWIN_SPACING_MAX_MM);
    if (!(o->overlap >= 0 && o->overlap <= SWIN_OVERLAP_MAX))
        return swin_error_set(err, SWIN_ERR_ARG, "overlap %g: it must be 0..%g", o->overlap, SWIN_OVERLAP_MAX);
    if (o->blend != SWIN_BLEND_CONSTANT && o->blend != SWIN_BLEND_GAUSSIAN)
        return swin_error_set(err, SWIN_ERR_ARG, "unknown blending mode %d", (int)o->blend);
    if (o->blend == SWIN_BLEND_GAUSSIAN && !(o->sigma_scale > 0 && o->sigma_scale <= 10))
        return swin_error_set(err, SWIN_ERR_ARG, "sigma scale %g: it must be in (0, 10]", o->sigma_scale);
    if (o->invert != SWIN_INVERT_NEAREST && o->invert != SWIN_INVERT_LINEAR)
        return swin_error_set(err, SWIN_ERR_ARG, "unknown way back to the input grid %d (nearest or linear)",
                              (int)o->invert);
    if (!p->predict) return swin_error_set(err, SWIN_ERR_ARG, "no predictor given");
    return SWIN_OK;
}

/* The input's channels against the model's. */
static swin_status check_channels(const struct swin_pipeline *p, int channels, const char *name, swin_error *err)
{
    if (channels == p->in_channels) return SWIN_OK;
    if (channels == 1)
        return swin_error_set(err, SWIN_ERR_SHAPE,
                              "%s: one channel, but the model takes %d (e.g. MRI sequences): give one NIfTI file of "
                              "%d volumes, or %d files on one grid, in the order the model was trained with",
                              name, p->in_channels, p->in_channels, p->in_channels);
    return swin_error_set(err, SWIN_ERR_SHAPE, "%s: %d channels, but the model takes %d%s", name, channels,
                          p->in_channels, p->in_channels == 1 ? ": give one 3D volume (several: segment each on its own)" : "");
}

/* Progress, cancel and the predictor of one run. */
struct run_ctl {
    const struct swin_pipeline *p;
    double fraction;                  /* last reported */
    struct swin_label_stream *stream; /* the labels written while the cubes run, or NULL */
};

static void report(struct run_ctl *c, swin_stage stage, double fraction)
{
    if (fraction < c->fraction) fraction = c->fraction;
    c->fraction = fraction;
    if (c->p->params.progress) c->p->params.progress(c->p->params.user, stage, fraction);
}

static swin_status poll_cancel(const struct run_ctl *c, swin_error *err)
{
    const swin_segment_params *o = &c->p->params;
    if (o->cancel && o->cancel(o->user))
        return swin_error_set(err, SWIN_ERR_CANCELLED, "segmentation cancelled by the caller");
    return SWIN_OK;
}

/* The cubes take fractions 0.05..0.95 of the whole run. */
static void cube_progress(void *user, int64_t done, int64_t total)
{
    report(user, SWIN_STAGE_INFER, 0.05 + 0.9 * (double)done / (double)(total ? total : 1));
}

static swin_status cube_predict(void *user, const float *in, float *out, swin_error *err)
{
    struct run_ctl *c = user;
    swin_status st = poll_cancel(c, err);
    if (!st && c->stream) st = swin_label_stream_poll(c->stream, err);
    return st ? st : c->p->predict(c->p->predict_user, in, out, err);
}

/* What each preprocessed voxel's averaged logits become: the argmax there (the nearest way
 * back, the preview), softmax probabilities of the whole grid (--probabilities), and the
 * softmax probabilities the linear way back streams. */
struct sink {
    void *labels;                   /* argmax on the preprocessed grid, or NULL */
    int lb;                         /* bytes per label: 1 or 2 */
    float *probs;                   /* out_channels planes of n voxels, or NULL */
    struct swin_invert_linear *lin; /* or NULL */
    struct swin_label_stream *stream; /* told of each finished plane, or NULL */
    int64_t n;
    int co;
    int masks;                      /* overlapping sigmoid masks (swin_mask_channels), or 0 */
    const int64_t *dim;             /* the preprocessed grid (the device path's planes) */
    int ax;                         /* the slab axis */
};

static void sink_voxel(void *user, int64_t v, const float *x)
{
    struct sink *s = user;
    /* the first maximum, as torch.argmax; the maximum kept in a register, not reloaded through
     * best (a load on every step's critical path). One channel: the sigmoid threshold; masks:
     * each channel's. */
    int best = s->masks ? swin_mask_label(x, s->masks) : s->co == 1 ? swin_sigmoid_label(x[0]) : 0;
    float top = x[0];
    for (int c = 1; c < s->co && !s->masks; c++)
        if (x[c] > top) top = x[c], best = c;
    if (s->labels && s->lb == 1) ((uint8_t *)s->labels)[v] = (uint8_t)best;
    else if (s->labels) ((uint16_t *)s->labels)[v] = (uint16_t)best;
    if (!s->probs && !s->lin) return;
    if (s->co == 1 || s->masks) { /* each channel's sigmoid */
        float *lin = s->lin ? swin_invert_linear_voxel(s->lin, v) : NULL;
        for (int c = 0; c < s->co; c++) {
            const float p = (float)(1.0 / (1.0 + exp(-(double)x[c])));
            if (lin) lin[c] = p;
            if (s->probs) s->probs[c * s->n + v] = p;
        }
        return;
    }
    double sum = 0;
    for (int c = 0; c < s->co; c++) sum += exp((double)x[c] - (double)x[best]);
    float *lin = s->lin ? swin_invert_linear_voxel(s->lin, v) : NULL;
    for (int c = 0; c < s->co; c++) {
        const float p = (float)(exp((double)x[c] - (double)x[best]) / sum);
        if (lin) lin[c] = p;
        if (s->probs) s->probs[c * s->n + v] = p;
    }
}

/* The device path: plane `plane` along the slab axis, as sink_voxel fills it voxel by voxel,
 * from its labels and probabilities (o2 fastest, classes fastest; sliding.h). */
static void sink_plane_result(void *user, int64_t plane, const void *labels, const float *probs)
{
    struct sink *s = user;
    const int ax = s->ax, o1 = ax == 0 ? 1 : 0, o2 = ax == 2 ? 1 : 2;
    const int64_t stride[3] = {s->dim[1] * s->dim[2], s->dim[2], 1};
    for (int64_t u1 = 0, u = 0; u1 < s->dim[o1]; u1++)
        for (int64_t u2 = 0; u2 < s->dim[o2]; u2++, u++) {
            const int64_t v = plane * stride[ax] + u1 * stride[o1] + u2 * stride[o2];
            if (s->labels && s->lb == 1) ((uint8_t *)s->labels)[v] = ((const uint8_t *)labels)[u];
            else if (s->labels) ((uint16_t *)s->labels)[v] = ((const uint16_t *)labels)[u];
            if (!probs) continue;
            const float *p = probs + u * s->co;
            if (s->lin) memcpy(swin_invert_linear_voxel(s->lin, v), p, (size_t)s->co * sizeof *p);
            for (int c = 0; s->probs && c < s->co; c++) s->probs[c * s->n + v] = p[c];
        }
}

static void sink_plane(void *user, int64_t plane)
{
    struct sink *s = user;
    if (s->lin) swin_invert_linear_plane_done(s->lin, plane);
    if (s->stream) swin_label_stream_planes_done(s->stream, plane + 1);
}

/* One volume between its input grid and the model: the preprocessed grid and volume, the
 * way back, the cube layout and what the cubes produced. */
struct job {
    struct run_ctl ctl;
    int ci;                        /* the input's channels (the model's) */
    struct swin_grid g;
    struct swin_forward fwd;
    struct swin_inverse inv;
    struct swin_cubes win;
    float *vol;
    struct sink sk;
    bool linear;                   /* SWIN_INVERT_LINEAR */
    bool grid_labels;              /* the argmax on the preprocessed grid is kept */
    bool stream;                   /* file form: the labels can be written while the cubes run */
    struct swin_invert_linear lin; /* linear: the streaming way back */
    void *in_labels;               /* linear, file form: the label map on the input grid */
    struct swin_sliding_times times;
    struct swin_blend_info blend;
};

static void job_free(struct job *j)
{
    free(j->sk.labels);
    free(j->sk.probs);
    free(j->in_labels);
    swin_invert_linear_free(&j->lin);
    free(j->vol);
    swin_cubes_free(&j->win);
    swin_forward_free(&j->fwd);
    swin_inverse_free(&j->inv);
}

/* The form of a run, for the plan: what it keeps and writes besides the labels. */
struct job_outputs {
    bool probs, preview;
    bool file;         /* the file form: the labels go out plane by plane through a format */
    size_t input_peak; /* the bytes the input held at its largest (file: reading and converting) */
    size_t input_kept; /* the bytes the format holds from release to close */
    bool hu_kept;      /* they are the intensities themselves (held from the start) */
};

/* Host bytes of the write stage of the file form: put_labels' planes and statistics, then
 * put_probs' plane. */
static size_t write_bytes(const struct job *j, const int64_t dim[3], bool probs)
{
    size_t np = (size_t)(dim[0] * dim[1]);
    size_t labels = j->linear ? (j->sk.lb == 1 ? np * 2 : 0) : np * 2 + (j->sk.lb == 1 ? np : 0);
    labels += (size_t)swin_label_values(j->sk.co, j->sk.masks) * (sizeof(long long) + 2 * sizeof(double));
    if (j->sk.masks) labels += np * (size_t)dim[2] * 2 + np; /* the format holds every plane's bit masks */
    return probs && np * 4 > labels ? np * 4 : labels;
}

/* Plans the grid, the way back and the cubes; fills the report's geometry and bytes. */
static swin_status job_plan(struct job *j, const int64_t dim[3], swin_mat4 affine, const char *name,
                            const struct job_outputs *out, swin_segment_report *rep, swin_error *err)
{
    const struct swin_pipeline *p = j->ctl.p;
    const swin_segment_params *o = &p->params;
    char msg[400];
    for (int k = 0; k < 3; k++) rep->input_dim[k] = dim[k];
    swin_affine_axcodes(affine, rep->input_axcodes);
    swin_mat4_spacing(affine, rep->input_spacing);
    rep->classes = p->out_channels;
    if (!swin_resample_grid_plan(affine, dim, o->reorient, o->resample ? o->spacing_mm : NULL, SWIN_VOLUME_MAX_VOXELS, &j->g, msg,
                   sizeof msg))
        return swin_error_set(err, SWIN_ERR_SHAPE, "%s: %s", name, msg);
    swin_status st = swin_forward_init(&j->g, dim, &j->fwd);
    if (!st) st = swin_inverse_init(&j->g, &j->inv);
    if (st == SWIN_ERR_NOMEM) return swin_error_set(err, st, "%s: out of host memory for the resampling tables", name);
    if (st) return swin_error_set(err, st, "%s: the resampled grid cannot be mapped back (singular affine)", name);
    for (int k = 0; k < 3; k++) rep->grid_dim[k] = j->g.dim[k];
    swin_mat4_spacing(j->g.affine, rep->grid_spacing);
    j->sk.n = j->g.dim[0] * j->g.dim[1] * j->g.dim[2];
    if ((st = swin_cubes_plan(j->g.dim, p->cube, o->overlap, o->blend, o->sigma_scale, &j->win, err))) return st;
    rep->cubes = swin_cubes_count(&j->win);
    j->linear = o->invert == SWIN_INVERT_LINEAR;
    j->grid_labels = !j->linear || out->preview;
    if (j->linear && swin_invert_linear_plan(&j->lin, &j->inv, swin_sliding_axis(&j->win), p->out_channels, dim))
        return swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of host memory for the linear way back", name);
    j->lin.masks = j->sk.masks;
    /* bytes: the preprocessed volume and what stays until the outputs are written, then the
     * largest of the three stages (preprocessing, the cubes, writing) */
    size_t in_n = (size_t)(dim[0] * dim[1] * dim[2]), n = (size_t)j->sk.n, co = (size_t)p->out_channels;
    const size_t ci = (size_t)p->in_channels;
    size_t held = n * 4 * ci + (j->grid_labels ? n * (size_t)j->sk.lb : 0) + (out->probs ? n * co * 4 : 0) +
                  (j->linear && out->file ? in_n * (size_t)j->sk.lb : 0) + out->input_kept;
    size_t prep_peak = (in_n + n) * 4 * ci + (out->hu_kept ? 0 : out->input_kept);
    j->stream = out->file && swin_label_stream_possible(&j->inv, j->linear, swin_sliding_axis(&j->win));
    size_t run_peak = held + swin_sliding_bytes(&j->win, p->in_channels, p->out_channels, p->threads) +
                      (j->linear ? swin_invert_linear_bytes(&j->lin) : 0) +
                      (j->stream ? write_bytes(j, dim, false) : 0);
    size_t write_peak = held + (out->file ? write_bytes(j, dim, out->probs) : 0);
    rep->pipeline_bytes = out->input_peak > prep_peak ? out->input_peak : prep_peak;
    if (run_peak > rep->pipeline_bytes) rep->pipeline_bytes = run_peak;
    if (write_peak > rep->pipeline_bytes) rep->pipeline_bytes = write_peak;
    return SWIN_OK;
}

/* chan: the input's channels (the model's in_channels of them); j->vol the same on the
 * preprocessed grid, one after another. */
static swin_status job_preprocess(struct job *j, const float *const *chan, swin_error *err)
{
    const struct swin_pipeline *p = j->ctl.p;
    const swin_segment_params *o = &p->params;
    j->ci = p->in_channels;
    if (!(j->vol = malloc((size_t)j->sk.n * (size_t)j->ci * sizeof *j->vol)))
        return swin_error_set(err, SWIN_ERR_NOMEM,
                              "out of host memory for the %lld x %lld x %lld preprocessed volume",
                              (long long)j->g.dim[0], (long long)j->g.dim[1], (long long)j->g.dim[2]);
    const bool range = o->normalize == SWIN_NORM_RANGE;
    struct swin_intensity window = {.enabled = range && o->intensity_clip, .lo = o->intensity_range[0],
                                    .hi = o->intensity_range[1]};
    for (int c = 0; c < j->ci; c++) {
        float *out = j->vol + c * j->sk.n;
        swin_resample_in(chan[c], &j->fwd, window, out, p->threads);
        if (!range) swin_zscore(out, j->sk.n, o->normalize == SWIN_NORM_ZSCORE_NONZERO, p->threads);
    }
    return SWIN_OK;
}

/* What the sink fills: the labels on the grid, the probabilities, the linear way back's
 * label map on the input grid (in_n voxels of the sink's label bytes; NULL: the job
 * allocates it). */
static swin_status job_sinks(struct job *j, bool probs, int64_t in_n, void *in_labels, swin_error *err)
{
    struct sink *s = &j->sk;
    bool ok = true;
    if (j->grid_labels) ok &= (s->labels = malloc((size_t)s->n * (size_t)s->lb)) != NULL;
    if (probs) ok &= (s->probs = malloc((size_t)s->n * (size_t)s->co * sizeof *s->probs)) != NULL;
    if (j->linear) {
        if (!in_labels) ok &= (in_labels = j->in_labels = malloc((size_t)in_n * (size_t)s->lb)) != NULL;
        ok = ok && swin_invert_linear_start(&j->lin, in_labels, s->lb) == SWIN_OK;
        s->lin = &j->lin;
    }
    if (!ok)
        return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for the labels%s",
                              probs ? " and probabilities" : "");
    return SWIN_OK;
}

/* The cubes, and what the sink makes of them. */
static swin_status job_infer(struct job *j, swin_error *err)
{
    const struct swin_pipeline *p = j->ctl.p;
    struct sink *s = &j->sk;
    struct swin_sliding sl = {.layout = &j->win,
                              .in_channels = j->ci,
                              .out_channels = p->out_channels,
                              .predict = cube_predict,
                              .predict_user = &j->ctl,
                              .sink = sink_voxel,
                              .plane_done = sink_plane,
                              .sink_user = &j->sk,
                              .planes_in_order = j->linear,
                              .progress = cube_progress,
                              .progress_user = &j->ctl,
                              .threads = p->threads,
                              .times = &j->times,
                              .device = p->device,
                              .plane_result = sink_plane_result,
                              .label_bytes = s->lb,
                              .want_labels = s->labels != NULL,
                              .want_probs = s->probs || s->lin,
                              .blend = &j->blend};
    s->dim = j->g.dim;
    s->ax = swin_sliding_axis(&j->win);
    return swin_sliding_run(&sl, j->vol, err);
}

static void infer_times(const struct job *j, swin_segment_report *rep)
{
    rep->seconds_cut = j->times.gather;
    rep->seconds_forward = j->times.predict;
    rep->seconds_blend = j->times.blend;
    rep->seconds_argmax = j->times.finalise;
    rep->blended_on_device = j->blend.on_device;
    rep->ring_bytes = j->blend.ring_bytes;
    snprintf(rep->blend_note, sizeof rep->blend_note, "%s", j->blend.note);
}

/* ---- file form ---------------------------------------------------------------------- */

/* What the label writer makes the label map from. */
static struct swin_label_planes label_planes(const struct swin_format *f, struct swin_format_input *in, void *outs,
                                             const struct job *j)
{
    return (struct swin_label_planes){.f = f, .in = in, .outs = outs, .inv = &j->inv,
                                      .grid_labels = j->linear ? NULL : j->sk.labels, .in_labels = j->in_labels,
                                      .lb = j->sk.lb, .classes = swin_label_values(j->sk.co, j->sk.masks),
                                      .masks = j->sk.masks};
}

/* The class probabilities on the input grid: softmax, trilinear back, class by class. */
static swin_status put_probs(const struct swin_format *f, const struct swin_format_input *in, void *outs,
                             const struct job *j, swin_error *err)
{
    const struct sink *s = &j->sk;
    const int64_t nx = in->dim[0], ny = in->dim[1];
    float *plane = malloc((size_t)(nx * ny) * sizeof *plane);
    swin_status st = plane ? SWIN_OK : swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
    for (int c = 0; c < s->co && !st; c++)
        for (int64_t k = 0; k < in->dim[2] && !st; k++) {
            swin_plane_trilinear(&j->inv, s->probs + c * s->n, nx, ny, k, plane);
            st = f->put_probs(outs, c, k, plane, err);
        }
    free(plane);
    return st;
}

static swin_status check_preview(const char *path, swin_error *err)
{
    size_t len = strlen(path);
    if (len < 5 || strcmp(path + len - 4, ".png"))
        return swin_error_set(err, SWIN_ERR_ARG, "%s: the preview is a PNG: name it .png", path);
    return swin_atomic_file_check_dir(path, "preview", err);
}

/* A volume read and preprocessed, waiting for its cubes (segment.h). */
struct swin_prepared {
    const struct swin_format *f;
    const char *const *paths; /* the caller's, as out_path */
    int npaths;
    const char *out_path;
    struct job j;
    struct swin_format_input in;
    swin_segment_report rep; /* what reading and preprocessing filled */
};

void swin_prepared_free(struct swin_prepared *pv)
{
    if (!pv) return;
    if (pv->f->close) pv->f->close(&pv->in);
    job_free(&pv->j);
    free(pv);
}

swin_status swin_pipeline_prepare(const struct swin_format *f, const char *const *paths, int npaths,
                                  const char *out_path, const struct swin_pipeline *p, struct swin_prepared **out,
                                  swin_segment_report *rep, swin_error *err)
{
    memset(rep, 0, sizeof *rep);
    *out = NULL;
    const swin_segment_params *o = &p->params;
    swin_status st = check_params(p, err);
    if (!st && !out_path) st = swin_error_set(err, SWIN_ERR_ARG, "an output path is required");
    if (!st) st = f->check(paths, npaths, out_path, o, err);
    if (!st && o->preview_path) st = check_preview(o->preview_path, err);
    const int masks = swin_mask_channels(o->activation, p->out_channels);
    const int lb = swin_label_values(p->out_channels, masks) <= 256 ? 1 : 2;
    /* a channel count the model cannot take, refused before the volumes are read */
    const int counted = !st && f->channels ? f->channels(paths, npaths) : 0;
    if (counted) st = check_channels(p, counted, paths[0], err);
    if (st) return st;
    struct swin_prepared *pv = calloc(1, sizeof *pv);
    if (!pv) return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
    *pv = (struct swin_prepared){.f = f, .paths = paths, .npaths = npaths, .out_path = out_path,
                                 .j = {.ctl = {.p = p}, .sk = {.co = p->out_channels, .masks = masks, .lb = lb}}};
    struct job *j = &pv->j;
    double t0 = swin_clock_seconds();
    report(&j->ctl, SWIN_STAGE_READ, 0);
    if ((st = poll_cancel(&j->ctl, err)) || (st = f->read(paths, npaths, out_path, o, swin_parallel_threads(p->threads), &pv->in, rep, err))) {
        job_free(j);
        free(pv);
        return st;
    }
    if ((st = check_channels(p, pv->in.channels, pv->in.name, err))) {
        swin_prepared_free(pv);
        return st;
    }
    rep->seconds_read = swin_clock_seconds() - t0;

    t0 = swin_clock_seconds();
    report(&j->ctl, SWIN_STAGE_PREPROCESS, 0.02);
    struct swin_format_input *in = &pv->in;
    swin_mat4 affine;
    memcpy(affine.m, in->affine, sizeof affine.m);
    const float *chan[SWIN_VOLUME_MAX_CHANNELS];
    for (int c = 0; c < in->channels; c++) chan[c] = in->hu + c * in->dim[0] * in->dim[1] * in->dim[2];
    if ((st = poll_cancel(&j->ctl, err)) ||
        (st = job_plan(
             j, in->dim, affine, in->name,
             &(struct job_outputs){.probs = o->probabilities_path, .preview = o->preview_path, .file = true,
                                   .input_peak = in->read_peak, .input_kept = in->kept_bytes, .hu_kept = in->hu_kept},
             rep, err)) ||
        (st = job_preprocess(j, chan, err))) {
        swin_prepared_free(pv);
        return st;
    }
    f->release(in);
    rep->seconds_preprocess = swin_clock_seconds() - t0;
    pv->rep = *rep;
    *out = pv;
    return SWIN_OK;
}

swin_status swin_pipeline_run_prepared(struct swin_prepared *pv, const struct swin_pipeline *p,
                                       swin_segment_report *rep, swin_error *err)
{
    const struct swin_format *f = pv->f;
    const swin_segment_params *o = &p->params;
    const char *out_path = pv->out_path;
    struct job *j = &pv->j;
    struct swin_format_input *in = &pv->in;
    *rep = pv->rep;
    j->ctl.p = p;
    void *outs = NULL;
    struct swin_atomic_file preview = {0};
    swin_status st;
    double t0 = swin_clock_seconds();
    report(&j->ctl, SWIN_STAGE_INFER, 0.05);
    const int threads = swin_parallel_threads(p->threads);
    if ((st = job_sinks(j, o->probabilities_path, in->dim[0] * in->dim[1] * in->dim[2], NULL, err))) goto done;
    if (j->stream) { /* the outputs open before the cubes: label planes go out while they run */
        if ((st = f->open_outputs(in, out_path, o, p->out_channels, threads, &outs, err))) goto done;
        struct swin_label_planes lp = label_planes(f, in, outs, j);
        if ((st = swin_label_stream_start(&j->ctl.stream, &lp, swin_sliding_axis(&j->win), err))) goto done;
        j->sk.stream = j->ctl.stream;
    }
    if ((st = job_infer(j, err))) goto done;
    rep->seconds_infer = swin_clock_seconds() - t0;
    infer_times(j, rep);

    t0 = swin_clock_seconds();
    report(&j->ctl, SWIN_STAGE_WRITE, 0.95);
    if ((st = poll_cancel(&j->ctl, err))) goto done;
    if (j->ctl.stream) {
        st = swin_label_stream_finish(j->ctl.stream, rep, err);
        j->ctl.stream = j->sk.stream = NULL;
    } else {
        if (!outs && (st = f->open_outputs(in, out_path, o, p->out_channels, threads, &outs, err))) goto done;
        struct swin_label_planes lp = label_planes(f, in, outs, j);
        st = swin_label_planes_write(&lp, rep, err);
    }
    if (st) goto done;
    if (o->probabilities_path && (st = put_probs(f, in, outs, j, err))) goto done;
    if ((st = f->finish(outs, rep, err))) goto done;
    /* the first channel in grey: the intensity range's [0, 1], or z-scores within 2.5 deviations */
    const bool zscore = o->normalize != SWIN_NORM_RANGE;
    const float black = zscore ? -2.5f : 0.0f, white = zscore ? 2.5f : 1.0f;
    if (o->preview_path && (st = swin_preview_finish(&preview, o->preview_path, j->vol, black, white, j->sk.labels,
                                                     j->sk.lb, j->g.dim, rep->grid_spacing, err)))
        goto done;
    if ((st = poll_cancel(&j->ctl, err))) goto done;
    st = f->publish(outs, rep, err); /* frees outs */
    outs = NULL;
    if (!st && preview.tmp[0]) st = swin_atomic_file_publish(&preview, err);
    if (st) goto done;
    rep->seconds_write = swin_clock_seconds() - t0;
    report(&j->ctl, SWIN_STAGE_DONE, 1.0);
done:
    swin_label_stream_abort(j->ctl.stream); /* before the outputs it writes into go */
    if (outs) f->discard(outs);
    swin_atomic_file_abort(&preview);
    swin_prepared_free(pv);
    return st;
}

swin_status swin_pipeline_inputs(const struct swin_format *f, const char *const *paths, int npaths,
                                 const char *out_path, const struct swin_pipeline *p, swin_segment_report *rep,
                                 swin_error *err)
{
    struct swin_prepared *pv;
    swin_status st = swin_pipeline_prepare(f, paths, npaths, out_path, p, &pv, rep, err);
    return st ? st : swin_pipeline_run_prepared(pv, p, rep, err);
}

swin_status swin_pipeline_file(const char *in_path, const char *out_path, const struct swin_pipeline *p,
                               swin_segment_report *rep, swin_error *err)
{
    if (!in_path) {
        memset(rep, 0, sizeof *rep);
        return swin_error_set(err, SWIN_ERR_ARG, "input and output paths are required");
    }
    return swin_pipeline_inputs(swin_format_for(in_path), &in_path, 1, out_path, p, rep, err);
}

/* ---- memory form -------------------------------------------------------------------- */

/* The channels of a volume in memory: one grid (v[0]'s size and affine), finite values; int16
 * channels converted into *converted (freed by the caller), float32 ones used in place. */
static swin_status volume_channels(const swin_volume *v, int nv, const float **chan, float **converted,
                                   swin_error *err)
{
    for (int c = 0; c < nv; c++) {
        if (!v[c].voxels)
            return swin_error_set(err, SWIN_ERR_ARG, "channel %d: no voxels given", c);
        if (v[c].type != SWIN_VOXELS_F32 && v[c].type != SWIN_VOXELS_I16)
            return swin_error_set(err, SWIN_ERR_ARG, "channel %d: unknown voxel type %d (float32 or int16)", c,
                                  (int)v[c].type);
        if (c && memcmp(v[c].dim, v[0].dim, sizeof v[0].dim))
            return swin_error_set(err, SWIN_ERR_SHAPE,
                                  "channel %d is %lld x %lld x %lld, channel 0 %lld x %lld x %lld: the channels of one "
                                  "volume share one grid",
                                  c, v[c].dim[0], v[c].dim[1], v[c].dim[2], v[0].dim[0], v[0].dim[1], v[0].dim[2]);
        for (int r = 0; c && r < 3; r++)
            for (int k = 0; k < 4; k++)
                if (!(fabs(v[c].affine[r][k] - v[0].affine[r][k]) <= 1e-3))
                    return swin_error_set(err, SWIN_ERR_SHAPE,
                                          "channel %d's affine differs from channel 0's (row %d, column %d: %g against "
                                          "%g): the channels of one volume share one grid",
                                          c, r, k, v[c].affine[r][k], v[0].affine[r][k]);
    }
    const int64_t n = v[0].dim[0] * v[0].dim[1] * v[0].dim[2];
    int n16 = 0;
    for (int c = 0; c < nv; c++) n16 += v[c].type == SWIN_VOXELS_I16;
    if (n16 && !(*converted = malloc((size_t)n * (size_t)n16 * sizeof **converted)))
        return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for the volume as float32");
    for (int c = 0, k = 0; c < nv; c++) {
        if (v[c].type == SWIN_VOXELS_F32) {
            const float *f = v[c].voxels;
            for (int64_t i = 0; i < n; i++)
                if (!isfinite(f[i]))
                    return swin_error_set(err, SWIN_ERR_ARG, "%s has a non-finite voxel at index %lld",
                                          nv > 1 ? "a channel of the volume" : "the volume", (long long)i);
            chan[c] = f;
            continue;
        }
        float *out = *converted + (size_t)n * (size_t)k++;
        const int16_t *h = v[c].voxels;
        for (int64_t i = 0; i < n; i++) out[i] = (float)h[i];
        chan[c] = out;
    }
    return SWIN_OK;
}

swin_status swin_pipeline_volume(const swin_volume *v, int nv, const struct swin_pipeline *p, uint16_t *labels,
                                 float *probs, swin_segment_report *rep, swin_error *err)
{
    memset(rep, 0, sizeof *rep);
    swin_status st = check_params(p, err);
    if (st) return st;
    if (!v || nv < 1 || !labels) return swin_error_set(err, SWIN_ERR_ARG, "a volume and a label buffer are required");
    if (nv != p->in_channels)
        return swin_error_set(err, SWIN_ERR_SHAPE, "the volume has %d channel%s, but the model takes %d%s", nv,
                              nv == 1 ? "" : "s", p->in_channels,
                              p->in_channels > 1 ? " (e.g. MRI sequences, in the order it was trained with)" : "");
    int64_t dim[3];
    for (int k = 0; k < 3; k++) {
        if (v->dim[k] < 1 || v->dim[k] > SWIN_VOLUME_MAX_DIM)
            return swin_error_set(err, SWIN_ERR_SHAPE, "volume size %lld x %lld x %lld: each side must be 1..%d",
                                  v->dim[0], v->dim[1], v->dim[2], SWIN_VOLUME_MAX_DIM);
        dim[k] = v->dim[k];
    }
    swin_mat4 affine;
    memcpy(affine.m, v->affine, sizeof affine.m);
    const int64_t n_in = dim[0] * dim[1] * dim[2];
    struct job j = {.ctl = {.p = p}, .sk = {.co = p->out_channels, .masks = swin_mask_channels(p->params.activation,
                                                                                                 p->out_channels),
                                            .lb = 2}};
    float *converted = NULL;
    const float *chan[SWIN_VOLUME_MAX_CHANNELS];
    double t0 = swin_clock_seconds();
    report(&j.ctl, SWIN_STAGE_PREPROCESS, 0.02);
    if ((st = volume_channels(v, nv, chan, &converted, err))) goto done;
    size_t input_peak = 0;
    for (int c = 0; c < nv; c++) input_peak += v[c].type == SWIN_VOXELS_I16 ? (size_t)n_in * 4 : 0;
    if ((st = poll_cancel(&j.ctl, err)) ||
        (st = job_plan(&j, dim, affine, "volume", &(struct job_outputs){.probs = probs, .input_peak = input_peak}, rep,
                       err)) ||
        (st = job_preprocess(&j, chan, err)))
        goto done;
    free(converted);
    converted = NULL;
    rep->seconds_preprocess = swin_clock_seconds() - t0;

    t0 = swin_clock_seconds();
    report(&j.ctl, SWIN_STAGE_INFER, 0.05);
    if ((st = job_sinks(&j, probs, n_in, labels, err)) || (st = job_infer(&j, err))) goto done;
    rep->seconds_infer = swin_clock_seconds() - t0;
    infer_times(&j, rep);

    t0 = swin_clock_seconds();
    report(&j.ctl, SWIN_STAGE_WRITE, 0.95);
    if ((st = poll_cancel(&j.ctl, err))) goto done;
    const int64_t nx = dim[0], ny = dim[1], plane = nx * ny;
    for (int64_t k = 0; !j.linear && k < dim[2]; k++)
        swin_plane_nearest_u16(&j.inv, j.sk.labels, nx, ny, k, labels + k * plane);
    for (int c = 0; probs && c < j.sk.co; c++)
        for (int64_t k = 0; k < dim[2]; k++)
            swin_plane_trilinear(&j.inv, j.sk.probs + c * j.sk.n, nx, ny, k, probs + c * n_in + k * plane);
    rep->seconds_write = swin_clock_seconds() - t0;
    report(&j.ctl, SWIN_STAGE_DONE, 1.0);
done:
    free(converted);
    job_free(&j);
    return st;
}
