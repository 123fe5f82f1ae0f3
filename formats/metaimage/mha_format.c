/* MetaImage as a format (formats/format.h): one .mha or .mhd volume in (ITK's format, as
 * Grand Challenge and ITK-based tools exchange CTs; several channels as a fourth axis or as
 * ElementNumberOfChannels); out a .mha label map on its grid (uint8 up to 256 classes, else
 * uint16; a multi-label run: a 4D uint8 image of one mask per channel) and, when asked, the
 * class probabilities as a 4D float32 .mha. The float32 intensities stay for the statistics. */
#include <stdlib.h>
#include <string.h>

#include "fileio/atomic_file.h"
#include "formats/format.h"
#include "formats/metaimage/mha_read.h"
#include "formats/metaimage/mha_write.h"

struct mha_outputs {
    struct swin_mha_writer *labels, *probs;
    int wide;       /* uint16 labels */
    uint8_t *plane; /* a plane of uint8 labels */
    size_t plane_n;
    int masks;      /* overlapping masks: one uint8 volume each, from the bit masks held */
    uint16_t *held; /* masks: every plane's bit masks, until finish */
    int64_t nz;
};

static int mha_claims(const char *path)
{
    return swin_mha_name(path);
}

static bool is_mha_out(const char *path)
{
    size_t n = strlen(path);
    return n > 4 && !strcmp(path + n - 4, ".mha");
}

static int mha_channels(const char *const *paths, int npaths)
{
    struct swin_mha_header h;
    swin_error ignored;
    if (npaths != 1 || swin_mha_header_read(paths[0], &h, &ignored)) return 0;
    return (int)h.dim[3] * h.components;
}

static swin_status mha_check(const char *const *paths, int npaths, const char *out, const swin_segment_params *p,
                             swin_error *err)
{
    if (npaths != 1)
        return swin_error_set(err, SWIN_ERR_ARG,
                              "%d MetaImage files: one volume at a time (several channels go in one file, as a "
                              "fourth axis or ElementNumberOfChannels)",
                              npaths);
    const char *outs[2] = {out, p->probabilities_path};
    const char *what[2] = {"label map", "probabilities"};
    for (int i = 0; i < 2; i++) {
        if (!outs[i]) continue;
        if (!is_mha_out(outs[i]))
            return swin_error_set(err, SWIN_ERR_ARG, "%s: from MetaImage input the %s is written as .mha", outs[i],
                                  what[i]);
        swin_status st = swin_atomic_file_check_dir(outs[i], what[i], err);
        if (st) return st;
    }
    return SWIN_OK;
}

static swin_status mha_read_input(const char *const *paths, int npaths, const char *out, const swin_segment_params *p,
                                  struct swin_format_input *in, swin_segment_report *rep, swin_error *err)
{
    struct swin_mha_image *img = calloc(1, sizeof *img);
    if (!img) return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
    swin_status st = swin_mha_read(paths[0], img, err);
    if (st) {
        free(img);
        return st;
    }
    *in = (struct swin_format_input){.name = paths[0], .channels = img->channels, .hu = img->data, .state = img};
    memcpy(in->dim, img->h.dim, sizeof in->dim);
    const swin_mat4 a = swin_mha_affine(&img->h);
    memcpy(in->affine, a.m, sizeof in->affine);
    in->read_peak = img->read_peak;
    in->kept_bytes = (size_t)(in->dim[0] * in->dim[1] * in->dim[2]) * (size_t)img->channels * sizeof(float);
    in->hu_kept = true;
    return SWIN_OK;
}

static void mha_release(struct swin_format_input *in)
{
    /* the float32 intensities are what hu_plane reads */
}

static swin_status mha_hu_plane(struct swin_format_input *in, int64_t k, const float **plane, swin_error *err)
{
    const struct swin_mha_image *img = in->state;
    *plane = img->data + (size_t)k * (size_t)(in->dim[0] * in->dim[1]);
    return SWIN_OK;
}

static void mha_discard(void *outputs)
{
    struct mha_outputs *o = outputs;
    if (!o) return;
    swin_mha_writer_abort(o->labels);
    swin_mha_writer_abort(o->probs);
    free(o->plane);
    free(o->held);
    free(o);
}

static swin_status mha_open_outputs(struct swin_format_input *in, const char *out, const swin_segment_params *p,
                                    int classes, int threads, void **outputs, swin_error *err)
{
    const struct swin_mha_image *img = in->state;
    struct mha_outputs *o = calloc(1, sizeof *o);
    if (!o) return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
    o->masks = swin_mask_channels(p->activation, classes);
    o->wide = !o->masks && classes > 256;
    o->plane_n = (size_t)(in->dim[0] * in->dim[1]);
    o->nz = in->dim[2];
    swin_status st = SWIN_OK;
    if ((!o->wide && !(o->plane = malloc(o->plane_n))) ||
        (o->masks && !(o->held = malloc(o->plane_n * (size_t)o->nz * sizeof *o->held))))
        st = swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for the label map");
    if (!st)
        st = swin_mha_writer_open(&o->labels, out, &img->h, o->wide ? SWIN_MHA_USHORT : SWIN_MHA_UCHAR,
                                  o->masks ? o->masks : 1, err);
    if (!st && p->probabilities_path)
        st = swin_mha_writer_open(&o->probs, p->probabilities_path, &img->h, SWIN_MHA_FLOAT, classes, err);
    if (st) {
        mha_discard(o);
        return st;
    }
    *outputs = o;
    return SWIN_OK;
}

static swin_status mha_put_labels(void *outputs, int64_t k, const uint16_t *plane, swin_error *err)
{
    struct mha_outputs *o = outputs;
    if (o->masks) { /* the file holds channel after channel: written at finish */
        memcpy(o->held + (size_t)k * o->plane_n, plane, o->plane_n * sizeof *plane);
        return SWIN_OK;
    }
    if (o->wide) return swin_mha_writer_write(o->labels, plane, o->plane_n * 2, err);
    for (size_t i = 0; i < o->plane_n; i++) o->plane[i] = (uint8_t)plane[i];
    return swin_mha_writer_write(o->labels, o->plane, o->plane_n, err);
}

static swin_status mha_put_probs(void *outputs, int c, int64_t k, const float *plane, swin_error *err)
{
    struct mha_outputs *o = outputs;
    return swin_mha_writer_write(o->probs, plane, o->plane_n * sizeof *plane, err);
}

static swin_status mha_finish(void *outputs, swin_segment_report *rep, swin_error *err)
{
    struct mha_outputs *o = outputs;
    swin_status st = SWIN_OK;
    for (int c = 0; c < o->masks && !st; c++)
        for (int64_t k = 0; k < o->nz && !st; k++) {
            const uint16_t *src = o->held + (size_t)k * o->plane_n;
            for (size_t i = 0; i < o->plane_n; i++) o->plane[i] = (uint8_t)((src[i] >> c) & 1);
            st = swin_mha_writer_write(o->labels, o->plane, o->plane_n, err);
        }
    if (!st) st = swin_mha_writer_finish(o->labels, err);
    if (!st && o->probs) st = swin_mha_writer_finish(o->probs, err);
    return st;
}

static swin_status mha_publish(void *outputs, swin_segment_report *rep, swin_error *err)
{
    struct mha_outputs *o = outputs;
    swin_status st = swin_mha_writer_publish(o->labels, err);
    o->labels = NULL;
    if (o->probs && !st) {
        st = swin_mha_writer_publish(o->probs, err);
        o->probs = NULL;
    }
    mha_discard(o);
    return st;
}

static void mha_close(struct swin_format_input *in)
{
    struct swin_mha_image *img = in->state;
    if (!img) return;
    swin_mha_image_free(img);
    free(img);
    in->state = NULL;
    in->hu = NULL;
}

const struct swin_format swin_format_metaimage = {
    .name = "MetaImage", .claims = mha_claims, .check = mha_check, .channels = mha_channels,
    .read = mha_read_input, .release = mha_release, .hu_plane = mha_hu_plane, .open_outputs = mha_open_outputs,
    .put_labels = mha_put_labels, .put_probs = mha_put_probs, .finish = mha_finish, .publish = mha_publish,
    .discard = mha_discard, .close = mha_close,
};
