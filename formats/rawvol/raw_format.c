/* The text-header formats' shared entries (raw_format.h). */
#include "formats/rawvol/raw_format.h"

#include <stdlib.h>
#include <string.h>

#include "fileio/atomic_file.h"
#include "formats/label_outputs.h"
#include "formats/rawvol/raw_read.h"

struct raw_state {
    const struct swin_raw_kind *kind;
    struct swin_raw_image img; /* the float32 copy until release where the file's narrower values stay */
    float *plane;              /* hu_plane's, from the file's values */
};

static bool named(const char *path, const char *ext)
{
    size_t n = strlen(path), e = strlen(ext);
    return n > e && !strcmp(path + n - e, ext);
}

int swin_raw_format_channels(const struct swin_raw_kind *k, const char *const *paths, int npaths)
{
    struct swin_raw_header h;
    swin_error ignored;
    if (npaths != 1 || k->read_header(paths[0], &h, &ignored)) return 0;
    return (int)h.dim[3] * h.components;
}

swin_status swin_raw_format_check(const struct swin_raw_kind *k, const char *const *paths, int npaths,
                                  const char *out, const swin_segment_params *p, swin_error *err)
{
    if (npaths != 1)
        return swin_error_set(err, SWIN_ERR_ARG, "%d %s files: one volume at a time (several channels go in one file, %s)",
                              npaths, k->name, k->channels_how);
    const char *outs[2] = {out, p->probabilities_path};
    const char *what[2] = {"label map", "probabilities"};
    for (int i = 0; i < 2; i++) {
        if (!outs[i]) continue;
        if (!named(outs[i], k->out_ext))
            return swin_error_set(err, SWIN_ERR_ARG, "%s: from %s input the %s is written as %s", outs[i], k->name,
                                  what[i], k->out_ext);
        swin_status st = swin_atomic_file_check_dir(outs[i], what[i], err);
        if (st) return st;
    }
    return SWIN_OK;
}

swin_status swin_raw_format_read(const struct swin_raw_kind *k, const char *const *paths, int npaths,
                                 struct swin_format_input *in, swin_error *err)
{
    struct raw_state *s = calloc(1, sizeof *s);
    if (!s) return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
    s->kind = k;
    struct swin_raw_header h;
    swin_status st = k->read_header(paths[0], &h, err);
    if (!st) st = swin_raw_read(paths[0], &h, &s->img, err);
    const size_t np = st ? 0 : (size_t)(h.dim[0] * h.dim[1]);
    if (!st && s->img.narrow && !(s->plane = malloc(np * sizeof *s->plane)))
        st = swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for a plane of %s", paths[0]);
    if (st) {
        swin_raw_image_free(&s->img);
        free(s);
        return st;
    }
    const struct swin_raw_image *img = &s->img;
    *in = (struct swin_format_input){.name = paths[0], .channels = img->channels, .hu = img->data, .state = s};
    memcpy(in->dim, img->h.dim, sizeof in->dim);
    const swin_mat4 a = swin_raw_affine(&img->h);
    memcpy(in->affine, a.m, sizeof in->affine);
    in->read_peak = img->read_peak;
    in->hu_kept = !img->narrow;
    in->kept_bytes = img->narrow ? swin_raw_narrow_bytes(img) + np * sizeof *s->plane
                                 : (size_t)(in->dim[0] * in->dim[1] * in->dim[2]) * (size_t)img->channels * sizeof(float);
    return SWIN_OK;
}

void swin_raw_format_release(struct swin_format_input *in)
{
    struct raw_state *s = in->state;
    swin_raw_image_drop_data(&s->img); /* where the file's values stay */
    if (!s->img.data) in->hu = NULL;
}

swin_status swin_raw_format_hu_plane(struct swin_format_input *in, int64_t k, const float **plane, swin_error *err)
{
    struct raw_state *s = in->state;
    if (s->img.data) {
        *plane = s->img.data + (size_t)k * (size_t)(in->dim[0] * in->dim[1]);
    } else {
        swin_raw_image_plane(&s->img, k, s->plane);
        *plane = s->plane;
    }
    return SWIN_OK;
}

static swin_status raw_write(void *w, const void *data, size_t bytes, swin_error *err)
{
    return swin_raw_writer_write(w, data, bytes, err);
}
static swin_status raw_finish(void *w, swin_error *err)
{
    return swin_raw_writer_finish(w, err);
}
static swin_status raw_publish(void *w, swin_error *err)
{
    return swin_raw_writer_publish(w, err);
}
static void raw_abort(void *w)
{
    swin_raw_writer_abort(w);
}
static const struct swin_voxel_writer_ops raw_writer_ops = {raw_write, raw_finish, raw_publish, raw_abort};

swin_status swin_raw_format_open_outputs(struct swin_format_input *in, const char *out, const swin_segment_params *p,
                                         int classes, int threads, void **outputs, swin_error *err)
{
    const struct raw_state *s = in->state;
    const struct swin_raw_kind *k = s->kind;
    struct swin_label_outputs *o;
    swin_status st = swin_label_outputs_new(&o, &raw_writer_ops, in->dim, p, classes, err);
    if (st) return st;
    struct swin_raw_writer *labels = NULL, *probs = NULL;
    st = swin_raw_writer_open(&labels, out, k->write_header, k->gzip, &s->img.h,
                              o->wide ? SWIN_RAW_UINT16 : SWIN_RAW_UINT8, o->masks ? o->masks : 1, err);
    o->labels = labels;
    if (!st && p->probabilities_path)
        st = swin_raw_writer_open(&probs, p->probabilities_path, k->write_header, k->gzip, &s->img.h, SWIN_RAW_FLOAT32,
                                  classes, err);
    o->probs = probs;
    if (st) {
        swin_label_outputs_discard(o);
        return st;
    }
    *outputs = o;
    return SWIN_OK;
}

void swin_raw_format_close(struct swin_format_input *in)
{
    struct raw_state *s = in->state;
    if (!s) return;
    swin_raw_image_free(&s->img);
    free(s->plane);
    free(s);
    in->state = NULL;
    in->hu = NULL;
}
