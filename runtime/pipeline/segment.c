#include "runtime/pipeline/segment.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime/atomic_file.h"
#include "runtime/pipeline/nifti_io.h"
#include "runtime/pipeline/preview.h"

struct swin_segment_options swin_segment_default_options(void)
{
    return (struct swin_segment_options){
        .reorient = true, .resample = true, .spacing = {1.5, 1.5, 2.0},
        .window = {.enabled = true, .lo = -175.0f, .hi = 250.0f},
        .overlap = 0.5, .blend = SWIN_BLEND_CONSTANT, .sigma_scale = 0.125, .in_channels = 1,
    };
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

swin_status swin_segment_check(const char *out_path, const struct swin_segment_options *o, swin_error *err)
{
    if (o->in_channels != 1)
        return swin_error_set(err, SWIN_ERR_SHAPE,
                              "the model takes %d input channels but a CT volume has 1: use a model exported with "
                              "in_channels=1",
                              o->in_channels);
    if (o->out_channels < 1 || o->out_channels > 65535)
        return swin_error_set(err, SWIN_ERR_MODEL, "the model has %d output channels (1..65535 supported)",
                              o->out_channels);
    if (o->window.enabled && !(o->window.hi > o->window.lo))
        return swin_error_set(err, SWIN_ERR_ARG, "intensity window [%g, %g]: the upper end must exceed the lower",
                              o->window.lo, o->window.hi);
    for (int k = 0; k < 3; k++)
        if (o->resample && !(o->spacing[k] >= 0.01 && o->spacing[k] <= 100))
            return swin_error_set(err, SWIN_ERR_ARG, "spacing %g mm: each must be 0.01..100 mm", o->spacing[k]);
    const char *outs[3] = {out_path, o->probabilities_path, o->preview_path};
    const char *what[3] = {"label map", "probabilities", "preview"};
    for (int i = 0; i < 3; i++) {
        if (!outs[i]) continue;
        if (i < 2 && !swin_nifti_output_name_ok(outs[i]))
            return swin_error_set(err, SWIN_ERR_ARG, "%s: the %s must be named .nii or .nii.gz", outs[i], what[i]);
        swin_status st = swin_atomic_file_check_dir(outs[i], what[i], err);
        if (st) return st;
    }
    return SWIN_OK;
}

struct sink {
    void *labels;
    int lb;
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

static swin_status write_labels(const char *path, const struct swin_image *img, const struct sink *s,
                                const struct swin_inverse *inv, struct swin_nifti_writer **done, swin_error *err)
{
    struct swin_nifti_writer *w;
    swin_status st = swin_nifti_writer_open(&w, path, img->hdr, s->lb == 1 ? DT_UINT8 : DT_UINT16, 1,
                                            NIFTI_INTENT_LABEL, "swinrun labels", err);
    if (st) return st;
    int64_t nx = img->dim[0], ny = img->dim[1];
    void *plane = malloc((size_t)(nx * ny) * (size_t)s->lb);
    if (!plane) st = swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
    for (int64_t k = 0; k < img->dim[2] && !st; k++) {
        if (s->lb == 1) swin_plane_nearest_u8(inv, s->labels, nx, ny, k, plane);
        else swin_plane_nearest_u16(inv, s->labels, nx, ny, k, plane);
        st = swin_nifti_writer_write(w, plane, (size_t)(nx * ny) * (size_t)s->lb, err);
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

/* 4D float32 (nx, ny, nz, classes) on the input grid: softmax, trilinear back. */
static swin_status write_probs(const char *path, const struct swin_image *img, const struct sink *s,
                               const struct swin_inverse *inv, struct swin_nifti_writer **done, swin_error *err)
{
    struct swin_nifti_writer *w;
    swin_status st = swin_nifti_writer_open(&w, path, img->hdr, DT_FLOAT32, s->co, NIFTI_INTENT_NONE,
                                            "swinrun class probabilities", err);
    if (st) return st;
    int64_t nx = img->dim[0], ny = img->dim[1];
    float *plane = malloc((size_t)(nx * ny) * sizeof *plane);
    if (!plane) st = swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
    for (int c = 0; c < s->co && !st; c++)
        for (int64_t k = 0; k < img->dim[2] && !st; k++) {
            swin_plane_trilinear(inv, s->probs + c * s->n, nx, ny, k, plane);
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

swin_status swin_segment_file(const char *in_path, const char *out_path, const struct swin_segment_options *o,
                              struct swin_segment_report *rep, swin_error *err)
{
    memset(rep, 0, sizeof *rep);
    swin_status st = swin_segment_check(out_path, o, err);
    if (st) return st;
    double t0 = now();
    struct swin_image img;
    if (o->stage) o->stage(o->progress_user, "reading");
    if ((st = swin_image_read(in_path, &img, err))) return st;
    float *vol = NULL;
    struct swin_windows win = {0};
    struct swin_inverse inv = {0};
    struct outputs outs = {0};
    struct sink sk = {.co = o->out_channels, .lb = o->out_channels <= 256 ? 1 : 2};
    memcpy(rep->in_dim, img.dim, sizeof img.dim);
    swin_affine_axcodes(img.affine, rep->in_axcodes);
    swin_mat4_spacing(img.affine, rep->in_spacing);
    rep->label_bytes = sk.lb;
    rep->t_read = now() - t0;

    t0 = now();
    struct swin_grid g;
    char msg[400];
    if (!swin_resample_grid_plan(img.affine, img.dim, o->reorient, o->resample ? o->spacing : NULL, SWIN_NIFTI_MAX_VOXELS, &g, msg,
                   sizeof msg)) {
        st = swin_error_set(err, SWIN_ERR_SHAPE, "%s: %s", in_path, msg);
        goto done;
    }
    if ((st = swin_inverse_init(&g, &inv))) {
        if (st == SWIN_ERR_NOMEM) swin_error_set(err, st, "%s: out of host memory for the inverse resampling", in_path);
        else swin_error_set(err, st, "%s: the resampled grid cannot be mapped back (singular affine)", in_path);
        goto done;
    }
    memcpy(rep->grid_dim, g.dim, sizeof g.dim);
    swin_mat4_spacing(g.affine, rep->grid_spacing);
    sk.n = g.dim[0] * g.dim[1] * g.dim[2];
    if ((st = swin_windows_plan(g.dim, o->roi, o->overlap, o->blend, o->sigma_scale, &win, err))) goto done;
    rep->windows = swin_windows_count(&win);
    rep->slab_axis = swin_sliding_axis(&win);
    {
        size_t in_n = (size_t)(img.dim[0] * img.dim[1] * img.dim[2]), n = (size_t)sk.n;
        size_t read_peak = in_n * ((size_t)img.hdr->nbyper + (img.hdr->datatype == DT_FLOAT32 ? 0 : 4));
        size_t prep_peak = in_n * 4 + n * 4;
        size_t run_peak = n * 4 + swin_sliding_bytes(&win, o->out_channels) + n * (size_t)sk.lb +
                          (o->probabilities_path ? n * (size_t)o->out_channels * 4 : 0);
        rep->planned_bytes = read_peak > prep_peak ? read_peak : prep_peak;
        if (run_peak > rep->planned_bytes) rep->planned_bytes = run_peak;
    }
    if (!(vol = malloc((size_t)sk.n * sizeof *vol))) {
        st = swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for the %lld x %lld x %lld preprocessed volume",
                            (long long)g.dim[0], (long long)g.dim[1], (long long)g.dim[2]);
        goto done;
    }
    if (o->stage) o->stage(o->progress_user, "preprocessing");
    swin_resample_in(img.data, img.dim, &g, o->window, vol);
    free(img.data); /* only the header is needed from here on */
    img.data = NULL;
    rep->t_preprocess = now() - t0;

    t0 = now();
    sk.labels = malloc((size_t)sk.n * (size_t)sk.lb);
    if (o->probabilities_path) sk.probs = malloc((size_t)sk.n * (size_t)sk.co * sizeof *sk.probs);
    if (!sk.labels || (o->probabilities_path && !sk.probs)) {
        st = swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for the labels%s",
                            o->probabilities_path ? " and probabilities" : "");
        goto done;
    }
    struct swin_sliding sl = {.layout = &win, .out_channels = o->out_channels, .predict = o->predict,
                              .predict_user = o->predict_user, .sink = sink_voxel, .sink_user = &sk,
                              .progress = o->progress, .progress_user = o->progress_user};
    if ((st = swin_sliding_run(&sl, vol, err))) goto done;
    rep->t_windows = now() - t0;

    t0 = now();
    if (o->stage) o->stage(o->progress_user, "writing");
    if ((st = write_labels(out_path, &img, &sk, &inv, &outs.labels, err))) goto done;
    if (o->probabilities_path && (st = write_probs(o->probabilities_path, &img, &sk, &inv, &outs.probs, err))) goto done;
    if (o->preview_path &&
        (st = swin_preview_finish(&outs.preview, o->preview_path, vol, sk.labels, sk.lb, g.dim, rep->grid_spacing, err)))
        goto done;
    st = publish(&outs, err);
    rep->t_write = now() - t0;
done:
    discard(&outs);
    free(sk.labels);
    free(sk.probs);
    free(vol);
    swin_windows_free(&win);
    swin_inverse_free(&inv);
    swin_image_free(&img);
    return st;
}
