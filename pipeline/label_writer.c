/* The label map on the input grid into a format's outputs (label_writer.h). */
#include "pipeline/label_writer.h"

#include <pthread.h>
#include <stdlib.h>

#include "core/clock.h"
#include "pipeline/label_stats.h"

/* A plane's buffers and the statistics so far. */
struct plane_bufs {
    uint8_t *plane8;  /* the nearest sample of uint8 grid labels */
    uint16_t *plane;  /* the plane handed to the format */
    struct swin_stats_acc acc;
};

static void bufs_free(struct plane_bufs *b)
{
    free(b->plane8);
    free(b->plane);
    swin_stats_free(&b->acc);
    *b = (struct plane_bufs){0};
}

static swin_status bufs_init(const struct swin_label_planes *lp, struct plane_bufs *b, swin_error *err)
{
    const size_t np = (size_t)(lp->in->dim[0] * lp->in->dim[1]);
    const bool linear = lp->grid_labels == NULL;
    const bool sample8 = !linear && lp->lb == 1, widen = !linear || lp->lb == 1; /* planes to fill */
    *b = (struct plane_bufs){.plane8 = sample8 ? malloc(np) : NULL, .plane = widen ? malloc(np * sizeof *b->plane) : NULL};
    if ((widen && !b->plane) || (sample8 && !b->plane8)) {
        bufs_free(b);
        return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for a plane of the label map");
    }
    swin_status st = swin_stats_begin(&b->acc, lp->classes, err);
    if (st) bufs_free(b);
    return st;
}

/* Plane k: its labels, their statistics, into the format. */
static swin_status write_plane(const struct swin_label_planes *lp, struct plane_bufs *b, int64_t k, swin_error *err)
{
    struct swin_format_input *in = lp->in;
    const int64_t nx = in->dim[0], ny = in->dim[1];
    const size_t np = (size_t)(nx * ny);
    const uint16_t *out = b->plane;
    if (!lp->grid_labels && lp->lb == 1) {
        const uint8_t *src = (const uint8_t *)lp->in_labels + (size_t)k * np;
        for (size_t i = 0; i < np; i++) b->plane[i] = src[i];
    } else if (!lp->grid_labels) {
        out = (const uint16_t *)lp->in_labels + (size_t)k * np;
    } else if (lp->lb == 1) {
        swin_plane_nearest_u8(lp->inv, lp->grid_labels, nx, ny, k, b->plane8);
        for (size_t i = 0; i < np; i++) b->plane[i] = b->plane8[i];
    } else {
        swin_plane_nearest_u16(lp->inv, lp->grid_labels, nx, ny, k, b->plane);
    }
    const float *hu;
    swin_status st = lp->f->hu_plane(in, k, &hu, err);
    if (st) return st;
    swin_stats_add(&b->acc, SWIN_VOXELS_F32, hu, out, np);
    return lp->f->put_labels(lp->outs, k, out, err);
}

static void stats_end(const struct swin_label_planes *lp, struct plane_bufs *b, swin_segment_report *rep)
{
    if (lp->masks) swin_stats_fold_masks(&b->acc, lp->masks);
    swin_stats_end(&b->acc, swin_voxel_mm3((const double(*)[4])lp->in->affine), rep);
}

swin_status swin_label_planes_write(const struct swin_label_planes *lp, swin_segment_report *rep, swin_error *err)
{
    struct plane_bufs b;
    swin_status st = bufs_init(lp, &b, err);
    for (int64_t k = 0; k < lp->in->dim[2] && !st; k++) st = write_plane(lp, &b, k, err);
    if (!st) stats_end(lp, &b, rep);
    bufs_free(&b);
    return st;
}

/* ---- streamed while the cubes run ---------------------------------------------------- */

/* The RAS (and grid) axis the input's third axis runs along. */
static int third_axis(const struct swin_inverse *inv)
{
    int a = 0;
    for (int r = 1; r < 3; r++)
        if (inv->in_to_ras.m[r][2] != 0) a = r;
    return a;
}

bool swin_label_stream_possible(const struct swin_inverse *inv, bool linear, int slab_axis)
{
    if (linear || !inv->nearest[2] || third_axis(inv) != slab_axis) return false;
    for (int64_t k = 1; k < inv->ras_dim[slab_axis]; k++)
        if (inv->nearest[2][k] < inv->nearest[2][k - 1]) return false;
    return true;
}

struct swin_label_stream {
    struct swin_label_planes lp;
    struct plane_bufs b;
    int64_t *need;       /* per input plane k: the slab planes that must be finished first */
    pthread_t th;
    pthread_mutex_t mu;  /* guards done, stop, st and msg */
    pthread_cond_t more;
    int64_t done;        /* slab planes finished */
    bool stop;
    swin_status st;      /* the thread's failure */
    swin_error err;
    double seconds;      /* the thread's, writing planes */
};

static void *stream_main(void *arg)
{
    struct swin_label_stream *s = arg;
    swin_error err = {SWIN_OK, ""};
    for (int64_t k = 0; k < s->lp.in->dim[2]; k++) {
        pthread_mutex_lock(&s->mu);
        while (!s->stop && s->done < s->need[k]) pthread_cond_wait(&s->more, &s->mu);
        const bool stop = s->stop;
        pthread_mutex_unlock(&s->mu);
        if (stop) break;
        const double t0 = swin_clock_seconds();
        swin_status st = write_plane(&s->lp, &s->b, k, &err);
        s->seconds += swin_clock_seconds() - t0;
        if (st) {
            pthread_mutex_lock(&s->mu);
            s->st = st;
            s->err = err;
            pthread_mutex_unlock(&s->mu);
            break;
        }
    }
    return NULL;
}

static void stream_free(struct swin_label_stream *s)
{
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->more);
    bufs_free(&s->b);
    free(s->need);
    free(s);
}

swin_status swin_label_stream_start(struct swin_label_stream **out, const struct swin_label_planes *lp, int slab_axis,
                                    swin_error *err)
{
    *out = NULL;
    const int64_t nz = lp->in->dim[2], *d = lp->inv->grid_dim;
    const int64_t stride = slab_axis == 0 ? d[1] * d[2] : slab_axis == 1 ? d[2] : 1;
    struct swin_label_stream *s = calloc(1, sizeof *s);
    if (!s || !(s->need = malloc((size_t)nz * sizeof *s->need))) {
        free(s);
        return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for the label writer");
    }
    s->lp = *lp;
    for (int64_t k = 0; k < nz; k++) s->need[k] = lp->inv->nearest[2][k] / stride + 1;
    swin_status st = bufs_init(lp, &s->b, err);
    if (st) {
        free(s->need);
        free(s);
        return st;
    }
    /* (glibc's inits with default attributes cannot fail) */
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->more, NULL);
    if (pthread_create(&s->th, NULL, stream_main, s) != 0) {
        stream_free(s); /* no thread: the caller writes after the cubes */
        return SWIN_OK;
    }
    *out = s;
    return SWIN_OK;
}

void swin_label_stream_planes_done(struct swin_label_stream *s, int64_t upto)
{
    pthread_mutex_lock(&s->mu);
    s->done = upto;
    pthread_cond_signal(&s->more);
    pthread_mutex_unlock(&s->mu);
}

swin_status swin_label_stream_poll(struct swin_label_stream *s, swin_error *err)
{
    pthread_mutex_lock(&s->mu);
    swin_status st = s->st;
    if (st && err) *err = s->err;
    pthread_mutex_unlock(&s->mu);
    return st;
}

swin_status swin_label_stream_finish(struct swin_label_stream *s, swin_segment_report *rep, swin_error *err)
{
    swin_label_stream_planes_done(s, INT64_MAX); /* all of them, whatever was announced */
    pthread_join(s->th, NULL);
    swin_status st = s->st;
    if (st && err) *err = s->err;
    if (!st) stats_end(&s->lp, &s->b, rep);
    rep->seconds_write_overlapped = s->seconds;
    stream_free(s);
    return st;
}

void swin_label_stream_abort(struct swin_label_stream *s)
{
    if (!s) return;
    pthread_mutex_lock(&s->mu);
    s->stop = true;
    pthread_cond_signal(&s->more);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->th, NULL);
    stream_free(s);
}
