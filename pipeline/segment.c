#include "pipeline/segment.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fileio/atomic_file.h"
#include "pipeline/label_stats.h"
#include "formats/nifti/nifti_io.h"
#include "pipeline/preview.h"
#include "pipeline/resample.h"
#include "pipeline/cubes.h"

struct swin_pipeline swin_pipeline_defaults(void)
{
    return (struct swin_pipeline){.params = swin_segment_default_params(), .in_channels = 1};
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static swin_status check_params(const struct swin_pipeline *p, swin_error *err)
{
    const swin_segment_params *o = &p->params;
    if (p->in_channels != 1)
        return swin_error_set(err, SWIN_ERR_SHAPE,
                              "the model takes %d input channels but a CT volume has 1: use a model exported with "
                              "in_channels=1",
                              p->in_channels);
    if (p->out_channels < 1 || p->out_channels > SWIN_CLASSES_MAX)
        return swin_error_set(err, SWIN_ERR_MODEL, "the model has %d output channels (1..%d supported)",
                              p->out_channels, SWIN_CLASSES_MAX);
    if (o->intensity_clip && !(o->intensity_range[1] > o->intensity_range[0]))
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
    if (!p->predict) return swin_error_set(err, SWIN_ERR_ARG, "no predictor given");
    return SWIN_OK;
}

swin_status swin_pipeline_check(const char *out_path, const struct swin_pipeline *p, swin_error *err)
{
    swin_status st = check_params(p, err);
    if (st || !out_path) return st;
    const swin_segment_params *o = &p->params;
    const char *outs[3] = {out_path, o->probabilities_path, o->preview_path};
    const char *what[3] = {"label map", "probabilities", "preview"};
    for (int i = 0; i < 3; i++) {
        if (!outs[i]) continue;
        size_t len = strlen(outs[i]);
        if (i < 2 && !swin_nifti_output_name_ok(outs[i]))
            return swin_error_set(err, SWIN_ERR_ARG, "%s: the %s must be named .nii or .nii.gz", outs[i], what[i]);
        if (i == 2 && (len < 5 || strcmp(outs[i] + len - 4, ".png")))
            return swin_error_set(err, SWIN_ERR_ARG, "%s: the preview is a PNG: name it .png", outs[i]);
        if ((st = swin_atomic_file_check_dir(outs[i], what[i], err))) return st;
    }
    return SWIN_OK;
}

/* Progress, cancel and the predictor of one run. */
struct run_ctl {
    const struct swin_pipeline *p;
    double fraction; /* last reported */
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
    return st ? st : c->p->predict(c->p->predict_user, in, out, err);
}

/* Labels (argmax) and optionally softmax probabilities on the preprocessed grid. */
struct sink {
    void *labels;
    int lb;       /* bytes per label: 1 or 2 */
    float *probs; /* out_channels planes of n voxels, or NULL */
    int64_t n;
    int co;
};

static void sink_voxel(void *user, int64_t v, const float *x)
{
    struct sink *s = user;
    int best = 0;
    for (int c = 1; c < s->co; c++)
        if (x[c] > x[best]) best = c; /* the first maximum, as torch.argmax */
    if (s->lb == 1) ((uint8_t *)s->labels)[v] = (uint8_t)best;
    else ((uint16_t *)s->labels)[v] = (uint16_t)best;
    if (s->probs) {
        double sum = 0;
        for (int c = 0; c < s->co; c++) sum += exp((double)x[c] - (double)x[best]);
        for (int c = 0; c < s->co; c++) s->probs[c * s->n + v] = (float)(exp((double)x[c] - (double)x[best]) / sum);
    }
}

/* One volume between its input grid and the model: the preprocessed grid and volume, the
 * way back, the cube layout and what the cubes produced. */
struct job {
    struct run_ctl ctl;
    struct swin_grid g;
    struct swin_inverse inv;
    struct swin_windows win;
    float *vol;
    struct sink sk;
};

static void job_free(struct job *j)
{
    free(j->sk.labels);
    free(j->sk.probs);
    free(j->vol);
    swin_windows_free(&j->win);
    swin_inverse_free(&j->inv);
}

/* Plans the grid, the way back and the cubes; fills the report's geometry and bytes.
 * input_peak: the bytes the input held at its largest (file: reading and converting). */
static swin_status job_plan(struct job *j, const int64_t dim[3], swin_mat4 affine, const char *name, bool probs,
                            size_t input_peak, swin_segment_report *rep, swin_error *err)
{
    const struct swin_pipeline *p = j->ctl.p;
    const swin_segment_params *o = &p->params;
    char msg[400];
    for (int k = 0; k < 3; k++) rep->input_dim[k] = dim[k];
    swin_affine_axcodes(affine, rep->input_axcodes);
    swin_mat4_spacing(affine, rep->input_spacing);
    rep->classes = p->out_channels;
    if (!swin_resample_grid_plan(affine, dim, o->reorient, o->resample ? o->spacing_mm : NULL, SWIN_NIFTI_MAX_VOXELS, &j->g, msg,
                   sizeof msg))
        return swin_error_set(err, SWIN_ERR_SHAPE, "%s: %s", name, msg);
    swin_status st = swin_inverse_init(&j->g, &j->inv);
    if (st == SWIN_ERR_NOMEM) return swin_error_set(err, st, "%s: out of host memory for the inverse resampling", name);
    if (st) return swin_error_set(err, st, "%s: the resampled grid cannot be mapped back (singular affine)", name);
    for (int k = 0; k < 3; k++) rep->grid_dim[k] = j->g.dim[k];
    swin_mat4_spacing(j->g.affine, rep->grid_spacing);
    j->sk.n = j->g.dim[0] * j->g.dim[1] * j->g.dim[2];
    if ((st = swin_windows_plan(j->g.dim, p->cube, o->overlap, o->blend, o->sigma_scale, &j->win, err))) return st;
    rep->cubes = swin_windows_count(&j->win);
    size_t in_n = (size_t)(dim[0] * dim[1] * dim[2]), n = (size_t)j->sk.n;
    size_t prep_peak = in_n * 4 + n * 4;
    size_t run_peak = n * 4 + swin_sliding_bytes(&j->win, p->out_channels) + n * (size_t)j->sk.lb +
                      (probs ? n * (size_t)p->out_channels * 4 : 0);
    rep->pipeline_bytes = input_peak > prep_peak ? input_peak : prep_peak;
    if (run_peak > rep->pipeline_bytes) rep->pipeline_bytes = run_peak;
    return SWIN_OK;
}

static swin_status job_preprocess(struct job *j, const float *data, const int64_t dim[3], swin_error *err)
{
    const swin_segment_params *o = &j->ctl.p->params;
    if (!(j->vol = malloc((size_t)j->sk.n * sizeof *j->vol)))
        return swin_error_set(err, SWIN_ERR_NOMEM,
                              "out of host memory for the %lld x %lld x %lld preprocessed volume",
                              (long long)j->g.dim[0], (long long)j->g.dim[1], (long long)j->g.dim[2]);
    struct swin_intensity range = {.enabled = o->intensity_clip, .lo = o->intensity_range[0],
                                   .hi = o->intensity_range[1]};
    swin_resample_in(data, dim, &j->g, range, j->vol);
    return SWIN_OK;
}

static swin_status job_infer(struct job *j, bool probs, swin_error *err)
{
    const struct swin_pipeline *p = j->ctl.p;
    j->sk.labels = malloc((size_t)j->sk.n * (size_t)j->sk.lb);
    if (probs) j->sk.probs = malloc((size_t)j->sk.n * (size_t)j->sk.co * sizeof *j->sk.probs);
    if (!j->sk.labels || (probs && !j->sk.probs))
        return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for the labels%s",
                              probs ? " and probabilities" : "");
    struct swin_sliding sl = {.layout = &j->win, .out_channels = p->out_channels, .predict = cube_predict,
                              .predict_user = &j->ctl, .sink = sink_voxel, .sink_user = &j->sk,
                              .progress = cube_progress, .progress_user = &j->ctl};
    return swin_sliding_run(&sl, j->vol, err);
}

/* ---- file form ---------------------------------------------------------------------- */

/* The outputs of one volume, each finished under its temporary name; published together
 * once all are, so that a failure on any leaves none. */
struct outputs {
    struct swin_nifti_writer *labels, *probs;
    struct swin_atomic_file preview;
};

/* Publishes labels, probabilities, preview in this order; stops at the first failure and
 * leaves the rest to discard(). */
static swin_status publish(struct outputs *o, swin_error *err)
{
    swin_status st = swin_nifti_writer_publish(o->labels, err);
    o->labels = NULL;
    if (o->probs && !st) {
        st = swin_nifti_writer_publish(o->probs, err);
        o->probs = NULL;
    }
    if (o->preview.tmp[0] && !st) st = swin_atomic_file_publish(&o->preview, err);
    return st;
}

static void discard(struct outputs *o)
{
    swin_nifti_writer_abort(o->labels);
    swin_nifti_writer_abort(o->probs);
    swin_atomic_file_abort(&o->preview);
}

/* The label map on the input grid, plane by plane, into a temporary file; the organ
 * statistics of each plane over the input's intensities (read again: the pipeline frees
 * them before inference) go into rep, so that a failure of either leaves no output. */
static swin_status write_labels(const char *path, const char *in_path, const struct swin_image *img,
                                const struct job *j, swin_segment_report *rep, struct swin_nifti_writer **done,
                                swin_error *err)
{
    const struct sink *s = &j->sk;
    struct swin_nifti_writer *w;
    swin_status st = swin_nifti_writer_open(&w, path, img->hdr, s->lb == 1 ? DT_UINT8 : DT_UINT16, 1,
                                            NIFTI_INTENT_LABEL, "swinrun labels", err);
    if (st) return st;
    int64_t nx = img->dim[0], ny = img->dim[1];
    const size_t np = (size_t)(nx * ny);
    struct swin_image ct = {0};
    struct swin_stats_acc acc = {0};
    void *plane = malloc(np * (size_t)s->lb);
    uint16_t *plane16 = s->lb == 1 ? malloc(np * sizeof *plane16) : NULL;
    if (!plane || (s->lb == 1 && !plane16))
        st = swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for a plane of the label map");
    if (!st) st = swin_image_read(in_path, &ct, err);
    if (!st) st = swin_stats_begin(&acc, s->co, err);
    for (int64_t k = 0; k < img->dim[2] && !st; k++) {
        if (s->lb == 1) {
            swin_plane_nearest_u8(&j->inv, s->labels, nx, ny, k, plane);
            for (size_t i = 0; i < np; i++) plane16[i] = ((const uint8_t *)plane)[i];
        } else {
            swin_plane_nearest_u16(&j->inv, s->labels, nx, ny, k, plane);
        }
        swin_stats_add(&acc, SWIN_VOXELS_F32, ct.data + (size_t)k * np, s->lb == 1 ? plane16 : plane, np);
        st = swin_nifti_writer_write(w, plane, np * (size_t)s->lb, err);
    }
    if (!st) swin_stats_end(&acc, swin_voxel_mm3((const double(*)[4])ct.affine.m), rep);
    swin_stats_free(&acc);
    swin_image_free(&ct);
    free(plane16);
    free(plane);
    if (!st) st = swin_nifti_writer_finish(w, err);
    if (st) {
        swin_nifti_writer_abort(w);
        return st;
    }
    *done = w;
    return SWIN_OK;
}

/* 4D float32 (nx, ny, nz, classes) on the input grid: softmax, trilinear back. */
static swin_status write_probs(const char *path, const struct swin_image *img, const struct job *j,
                               struct swin_nifti_writer **done, swin_error *err)
{
    const struct sink *s = &j->sk;
    struct swin_nifti_writer *w;
    swin_status st = swin_nifti_writer_open(&w, path, img->hdr, DT_FLOAT32, s->co, NIFTI_INTENT_NONE,
                                            "swinrun class probabilities", err);
    if (st) return st;
    int64_t nx = img->dim[0], ny = img->dim[1];
    float *plane = malloc((size_t)(nx * ny) * sizeof *plane);
    if (!plane) st = swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
    for (int c = 0; c < s->co && !st; c++)
        for (int64_t k = 0; k < img->dim[2] && !st; k++) {
            swin_plane_trilinear(&j->inv, s->probs + c * s->n, nx, ny, k, plane);
            st = swin_nifti_writer_write(w, plane, (size_t)(nx * ny) * sizeof *plane, err);
        }
    free(plane);
    if (!st) st = swin_nifti_writer_finish(w, err);
    if (st) {
        swin_nifti_writer_abort(w);
        return st;
    }
    *done = w;
    return SWIN_OK;
}

swin_status swin_pipeline_file(const char *in_path, const char *out_path, const struct swin_pipeline *p,
                               swin_segment_report *rep, swin_error *err)
{
    memset(rep, 0, sizeof *rep);
    swin_status st = swin_pipeline_check(out_path, p, err);
    if (st) return st;
    const swin_segment_params *o = &p->params;
    struct job j = {.ctl = {.p = p}, .sk = {.co = p->out_channels, .lb = p->out_channels <= 256 ? 1 : 2}};
    struct outputs outs = {0};
    struct swin_image img = {0};
    double t0 = now();
    report(&j.ctl, SWIN_STAGE_READ, 0);
    if ((st = poll_cancel(&j.ctl, err)) || (st = swin_image_read(in_path, &img, err))) return st;
    rep->seconds_read = now() - t0;

    t0 = now();
    report(&j.ctl, SWIN_STAGE_PREPROCESS, 0.02);
    size_t in_n = (size_t)(img.dim[0] * img.dim[1] * img.dim[2]);
    size_t read_peak = in_n * ((size_t)img.hdr->nbyper + (img.hdr->datatype == DT_FLOAT32 ? 0 : 4));
    if ((st = poll_cancel(&j.ctl, err)) ||
        (st = job_plan(&j, img.dim, img.affine, in_path, o->probabilities_path, read_peak, rep, err)) ||
        (st = job_preprocess(&j, img.data, img.dim, err)))
        goto done;
    free(img.data); /* only the header is needed from here on */
    img.data = NULL;
    rep->seconds_preprocess = now() - t0;

    t0 = now();
    report(&j.ctl, SWIN_STAGE_INFER, 0.05);
    if ((st = job_infer(&j, o->probabilities_path, err))) goto done;
    rep->seconds_infer = now() - t0;

    t0 = now();
    report(&j.ctl, SWIN_STAGE_WRITE, 0.95);
    if ((st = poll_cancel(&j.ctl, err)) || (st = write_labels(out_path, in_path, &img, &j, rep, &outs.labels, err))) goto done;
    if (o->probabilities_path && (st = write_probs(o->probabilities_path, &img, &j, &outs.probs, err))) goto done;
    if (o->preview_path && (st = swin_preview_finish(&outs.preview, o->preview_path, j.vol, j.sk.labels, j.sk.lb,
                                                     j.g.dim, rep->grid_spacing, err)))
        goto done;
    if ((st = poll_cancel(&j.ctl, err)) || (st = publish(&outs, err))) goto done;
    rep->seconds_write = now() - t0;
    report(&j.ctl, SWIN_STAGE_DONE, 1.0);
done:
    discard(&outs);
    job_free(&j);
    swin_image_free(&img);
    return st;
}

/* ---- memory form -------------------------------------------------------------------- */

swin_status swin_pipeline_volume(const swin_volume *v, const struct swin_pipeline *p, uint16_t *labels, float *probs,
                                 swin_segment_report *rep, swin_error *err)
{
    memset(rep, 0, sizeof *rep);
    swin_status st = swin_pipeline_check(NULL, p, err);
    if (st) return st;
    if (!v || !v->voxels || !labels) return swin_error_set(err, SWIN_ERR_ARG, "a volume and a label buffer are required");
    if (v->type != SWIN_VOXELS_F32 && v->type != SWIN_VOXELS_I16)
        return swin_error_set(err, SWIN_ERR_ARG, "unknown voxel type %d (float32 or int16)", (int)v->type);
    int64_t dim[3];
    for (int k = 0; k < 3; k++) {
        if (v->dim[k] < 1 || v->dim[k] > SWIN_NIFTI_MAX_DIM)
            return swin_error_set(err, SWIN_ERR_SHAPE, "volume size %lld x %lld x %lld: each side must be 1..%d",
                                  v->dim[0], v->dim[1], v->dim[2], SWIN_NIFTI_MAX_DIM);
        dim[k] = v->dim[k];
    }
    swin_mat4 affine;
    memcpy(affine.m, v->affine, sizeof affine.m);
    const int64_t n_in = dim[0] * dim[1] * dim[2];
    struct job j = {.ctl = {.p = p}, .sk = {.co = p->out_channels, .lb = 2}};
    float *converted = NULL;
    const float *data = v->voxels;
    double t0 = now();
    report(&j.ctl, SWIN_STAGE_PREPROCESS, 0.02);
    if (v->type == SWIN_VOXELS_F32) {
        for (int64_t i = 0; i < n_in; i++)
            if (!isfinite(data[i])) {
                st = swin_error_set(err, SWIN_ERR_ARG, "the volume has a non-finite voxel at index %lld", (long long)i);
                goto done;
            }
    } else {
        if (!(converted = malloc((size_t)n_in * sizeof *converted))) {
            st = swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for the volume as float32");
            goto done;
        }
        for (int64_t i = 0; i < n_in; i++) converted[i] = (float)((const int16_t *)v->voxels)[i];
        data = converted;
    }
    size_t input_peak = converted ? (size_t)n_in * 4 : 0;
    if ((st = poll_cancel(&j.ctl, err)) || (st = job_plan(&j, dim, affine, "volume", probs, input_peak, rep, err)) ||
        (st = job_preprocess(&j, data, dim, err)))
        goto done;
    free(converted);
    converted = NULL;
    rep->seconds_preprocess = now() - t0;

    t0 = now();
    report(&j.ctl, SWIN_STAGE_INFER, 0.05);
    if ((st = job_infer(&j, probs, err))) goto done;
    rep->seconds_infer = now() - t0;

    t0 = now();
    report(&j.ctl, SWIN_STAGE_WRITE, 0.95);
    if ((st = poll_cancel(&j.ctl, err))) goto done;
    const int64_t nx = dim[0], ny = dim[1], plane = nx * ny;
    for (int64_t k = 0; k < dim[2]; k++) swin_plane_nearest_u16(&j.inv, j.sk.labels, nx, ny, k, labels + k * plane);
    for (int c = 0; probs && c < j.sk.co; c++)
        for (int64_t k = 0; k < dim[2]; k++)
            swin_plane_trilinear(&j.inv, j.sk.probs + c * j.sk.n, nx, ny, k, probs + c * n_in + k * plane);
    rep->seconds_write = now() - t0;
    report(&j.ctl, SWIN_STAGE_DONE, 1.0);
done:
    free(converted);
    job_free(&j);
    return st;
}
