/* NIfTI as a format (formats/format.h): one .nii / .nii.gz volume in (its volumes, or several
 * files on one grid, the channels of a multi-channel model); out the label map on
 * its grid (uint8 up to 256 classes, else uint16; its header's geometry and codes) and, when
 * asked, the class probabilities as a 4D float32 image (x, y, z, class). Once the pipeline has
 * resampled the intensities, the float32 copy is freed when the file's own values are
 * narrower (they stay, and give the statistics their planes again); otherwise the float32
 * copy itself stays. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fileio/atomic_file.h"
#include "formats/format.h"
#include "formats/label_outputs.h"
#include "formats/nifti/nifti_header.h"
#include "formats/nifti/nifti_io.h"

struct nifti_state {
    const char *path;
    struct swin_image img; /* the input's header, its values; the float32 copy until release if they stay */
    float *plane;          /* hu_plane's, from the kept values */
};

/* .nii, and a NIfTI-1 (or ANALYZE 7.5) pair by either of its files, each also gzipped */
static int nifti_claims(const char *path)
{
    static const char *const ends[] = {".nii", ".nii.gz", ".hdr", ".hdr.gz", ".img", ".img.gz"};
    size_t n = strlen(path);
    for (size_t i = 0; i < sizeof ends / sizeof *ends; i++) {
        size_t k = strlen(ends[i]);
        if (n > k && !strcmp(path + n - k, ends[i])) return 1;
    }
    return 0;
}

static int nifti_channels(const char *const *paths, int npaths)
{
    int64_t n = 0;
    for (int i = 0; i < npaths; i++) {
        struct swin_nifti_header h;
        swin_error ignored;
        if (swin_nifti_header_read(paths[i], &h, &ignored)) return 0;
        n += h.volumes;
    }
    return n <= SWIN_VOLUME_MAX_CHANNELS ? (int)n : 0;
}

static swin_status nifti_check(const char *const *paths, int npaths, const char *out, const swin_segment_params *p,
                               swin_error *err)
{
    if (npaths < 1 || npaths > SWIN_VOLUME_MAX_CHANNELS)
        return swin_error_set(err, SWIN_ERR_ARG,
                              "%d NIfTI files: one volume, or one file per channel of one volume (up to %d), at a time",
                              npaths, SWIN_VOLUME_MAX_CHANNELS);
    for (int i = 0; i < npaths; i++)
        if (!nifti_claims(paths[i]))
            return swin_error_set(err, SWIN_ERR_ARG, "%s: the channels of one volume must all be NIfTI files", paths[i]);
    const char *outs[2] = {out, p->probabilities_path};
    const char *what[2] = {"label map", "probabilities"};
    for (int i = 0; i < 2; i++) {
        if (!outs[i]) continue;
        if (!swin_nifti_output_name_ok(outs[i]))
            return swin_error_set(err, SWIN_ERR_ARG, "%s: the %s must be named .nii or .nii.gz", outs[i], what[i]);
        swin_status st = swin_atomic_file_check_dir(outs[i], what[i], err);
        if (st) return st;
    }
    return SWIN_OK;
}

/* Whether two images share a voxel grid: the same size and voxel-to-world map (to 1e-3 mm,
 * per voxel index). */
static bool same_grid(const struct swin_image *a, const struct swin_image *b)
{
    if (memcmp(a->dim, b->dim, sizeof a->dim)) return false;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            if (fabs(a->affine.m[i][j] - b->affine.m[i][j]) > 1e-3) return false;
    return true;
}

/* The volumes of paths[1..] after img's (one file per channel, e.g. an MRI sequence each, as
 * BraTS ships them): each on img's grid. img's own values stay kept for the statistics. */
static swin_status append_channels(const char *const *paths, int npaths, struct swin_image *img, swin_error *err)
{
    const size_t n = (size_t)(img->dim[0] * img->dim[1] * img->dim[2]);
    for (int i = 1; i < npaths; i++) {
        struct swin_image more;
        swin_status st = swin_image_read(paths[i], &more, err);
        if (st) return st;
        if (!same_grid(img, &more))
            st = swin_error_set(err, SWIN_ERR_SHAPE,
                                "%s: its grid (%lld x %lld x %lld, affine) differs from %s's; the channels of one volume "
                                "must share one grid (resample them onto it first)",
                                paths[i], (long long)more.dim[0], (long long)more.dim[1], (long long)more.dim[2], paths[0]);
        else if (img->channels + more.channels > SWIN_VOLUME_MAX_CHANNELS)
            st = swin_error_set(err, SWIN_ERR_SHAPE, "%s: more than %d channels with the files before it", paths[i],
                                SWIN_VOLUME_MAX_CHANNELS);
        if (st) {
            swin_image_free(&more);
            return st;
        }
        float *all = realloc(img->data, n * (size_t)(img->channels + more.channels) * sizeof *all);
        if (!all) {
            swin_image_free(&more);
            return swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of host memory for its channels", paths[i]);
        }
        memcpy(all + n * (size_t)img->channels, more.data, n * (size_t)more.channels * sizeof *all);
        img->data = all;
        img->channels += more.channels;
        swin_image_free(&more);
    }
    return SWIN_OK;
}

static swin_status nifti_read(const char *const *paths, int npaths, const char *out, const swin_segment_params *p,
                              int threads, struct swin_format_input *in, swin_segment_report *rep, swin_error *err)
{
    struct nifti_state *s = calloc(1, sizeof *s);
    if (!s) return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
    s->path = paths[0];
    swin_status st = swin_image_read_keep(s->path, &s->img, err);
    const size_t raw_channels = (size_t)s->img.channels; /* the first file's: its values kept */
    if (!st) st = append_channels(paths, npaths, &s->img, err);
    const size_t n = st ? 0 : (size_t)(s->img.dim[0] * s->img.dim[1] * s->img.dim[2]);
    const size_t nc = n * (size_t)(st ? 0 : s->img.channels);
    const size_t np = st ? 0 : (size_t)(s->img.dim[0] * s->img.dim[1]);
    if (!st && s->img.raw && !(s->plane = malloc(np * sizeof *s->plane)))
        st = swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for a plane of %s", s->path);
    if (st) {
        swin_image_free(&s->img);
        free(s);
        return st;
    }
    *in = (struct swin_format_input){.name = s->path, .channels = s->img.channels, .hu = s->img.data, .state = s};
    memcpy(in->dim, s->img.dim, sizeof in->dim);
    memcpy(in->affine, s->img.affine.m, sizeof in->affine);
    /* the file's values and their float32 conversion side by side, and a .gz file mapped */
    const size_t nbyper = (size_t)s->img.hdr->nbyper;
    struct stat sb;
    const size_t mapped = nifti_is_gzfile(s->img.hdr->iname) && !stat(s->img.hdr->iname, &sb) ? (size_t)sb.st_size : 0;
    in->read_peak = nc * (nbyper + 4) + mapped;
    in->hu_kept = !s->img.raw;
    in->kept_bytes = s->img.raw ? n * raw_channels * nbyper + np * sizeof *s->plane : nc * sizeof(float);
    return SWIN_OK;
}

static void nifti_release(struct swin_format_input *in)
{
    struct nifti_state *s = in->state;
    if (!s->img.raw) return; /* the float32 copy is what hu_plane reads */
    free(s->img.data);
    s->img.data = NULL;
    in->hu = NULL;
}

static swin_status nifti_hu_plane(struct swin_format_input *in, int64_t k, const float **plane, swin_error *err)
{
    struct nifti_state *s = in->state;
    if (s->img.raw) {
        swin_image_plane(&s->img, k, s->plane);
        *plane = s->plane;
    } else {
        *plane = s->img.data + (size_t)k * (size_t)(in->dim[0] * in->dim[1]);
    }
    return SWIN_OK;
}

static swin_status nifti_write(void *w, const void *data, size_t bytes, swin_error *err)
{
    return swin_nifti_writer_write(w, data, bytes, err);
}
static swin_status nifti_finish(void *w, swin_error *err)
{
    return swin_nifti_writer_finish(w, err);
}
static swin_status nifti_publish(void *w, swin_error *err)
{
    return swin_nifti_writer_publish(w, err);
}
static void nifti_abort(void *w)
{
    swin_nifti_writer_abort(w);
}
static const struct swin_voxel_writer_ops nifti_writer_ops = {nifti_write, nifti_finish, nifti_publish, nifti_abort};

static swin_status nifti_open_outputs(struct swin_format_input *in, const char *out, const swin_segment_params *p,
                                      int classes, int threads, void **outputs, swin_error *err)
{
    struct nifti_state *s = in->state;
    struct swin_label_outputs *o;
    swin_status st = swin_label_outputs_new(&o, &nifti_writer_ops, in->dim, p, classes, err);
    if (st) return st;
    struct swin_nifti_writer *labels = NULL, *probs = NULL;
    st = swin_nifti_writer_open(&labels, out, s->img.hdr, o->wide ? DT_UINT16 : DT_UINT8, o->masks ? o->masks : 1,
                                NIFTI_INTENT_LABEL, o->masks ? "swinrun masks (one per channel)" : "swinrun labels",
                                threads, err);
    o->labels = labels;
    if (!st && p->probabilities_path)
        st = swin_nifti_writer_open(&probs, p->probabilities_path, s->img.hdr, DT_FLOAT32, classes, NIFTI_INTENT_NONE,
                                    "swinrun class probabilities", threads, err);
    o->probs = probs;
    if (st) {
        swin_label_outputs_discard(o);
        return st;
    }
    *outputs = o;
    return SWIN_OK;
}

static void nifti_close(struct swin_format_input *in)
{
    struct nifti_state *s = in->state;
    if (!s) return;
    swin_image_free(&s->img);
    free(s->plane);
    free(s);
    in->state = NULL;
    in->hu = NULL;
}

const struct swin_format swin_format_nifti = {
    .name = "NIfTI", .claims = nifti_claims, .check = nifti_check, .channels = nifti_channels,
    .read = nifti_read, .release = nifti_release,
    .hu_plane = nifti_hu_plane, .open_outputs = nifti_open_outputs, .put_labels = swin_label_outputs_put_labels,
    .put_probs = swin_label_outputs_put_probs, .finish = swin_label_outputs_finish,
    .publish = swin_label_outputs_publish, .discard = swin_label_outputs_discard, .close = nifti_close,
};
