#include "pipeline/sliding.h"

#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "pipeline/parallel.h"

int swin_sliding_axis(const struct swin_cubes *w)
{
    int best = 0;
    for (int k = 1; k < 3; k++) /* maximise size / roi: the slab is roi * (volume / size) */
        if ((double)w->size[k] / w->roi[k] > (double)w->size[best] / w->roi[best]) best = k;
    return best;
}

/* Voxels in one ring buffer: the volume with the slab axis cut to min(roi, size). */
static int64_t ring_voxels(const struct swin_cubes *w, int ax, int64_t ext[3])
{
    for (int k = 0; k < 3; k++) ext[k] = w->size[k];
    ext[ax] = w->roi[ax] < w->size[ax] ? w->roi[ax] : w->size[ax];
    return ext[0] * ext[1] * ext[2];
}

size_t swin_sliding_bytes(const struct swin_cubes *w, int out_channels, int threads)
{
    int64_t ext[3];
    size_t ring = (size_t)ring_voxels(w, swin_sliding_axis(w), ext);
    size_t win = (size_t)w->roi[0] * w->roi[1] * w->roi[2];
    return ((size_t)out_channels + 1) * ring * sizeof(float) + (1 + (size_t)out_channels) * win * sizeof(float) +
           (size_t)swin_parallel_threads(threads) * (size_t)out_channels * sizeof(float);
}

struct ring {
    int ax;
    int64_t ext[3], n;
    float *acc;  /* out_channels planes of n */
    float *wsum; /* n */
};

static inline int64_t ring_index(const struct ring *r, int64_t x0, int64_t x1, int64_t x2)
{
    int64_t x[3] = {x0, x1, x2};
    x[r->ax] %= r->ext[r->ax];
    return (x[0] * r->ext[1] + x[1]) * r->ext[2] + x[2];
}

/* in = the window at padded start p, zeros outside the volume */
static void gather(const struct swin_cubes *w, const float *vol, const int64_t p[3], float *in)
{
    const int64_t *sz = w->size;
    for (int a = 0; a < w->roi[0]; a++)
        for (int b = 0; b < w->roi[1]; b++) {
            float *row = in + ((int64_t)a * w->roi[1] + b) * w->roi[2];
            int64_t x0 = p[0] + a - w->pad_lo[0], x1 = p[1] + b - w->pad_lo[1];
            if (x0 < 0 || x0 >= sz[0] || x1 < 0 || x1 >= sz[1]) {
                memset(row, 0, (size_t)w->roi[2] * sizeof *row);
                continue;
            }
            const float *src = vol + (x0 * sz[1] + x1) * sz[2];
            for (int c = 0; c < w->roi[2]; c++) {
                int64_t x2 = p[2] + c - w->pad_lo[2];
                row[c] = x2 >= 0 && x2 < sz[2] ? src[x2] : 0.0f;
            }
        }
}

/* What the threads of one accumulate or finalise call share. */
struct blend_job {
    const struct swin_sliding *s;
    struct ring *r;
    const int64_t *p;   /* accumulate: the window's padded start */
    const float *out;   /* accumulate: its logits */
    int64_t plane;      /* finalise: the plane along the slab axis */
    float *avg;         /* finalise: out_channels floats per thread */
};

/* Window rows a in [a0, a1): each voxel inside the volume adds its logits times the
 * importance to the ring and the importance to the weights. Along the last axis a row is
 * contiguous in the window and, between wraps of the ring, in the ring. */
static void accumulate_rows(void *user, int tid, int64_t a0, int64_t a1)
{
    (void)tid;
    const struct blend_job *j = user;
    const struct swin_cubes *w = j->s->layout;
    const struct ring *r = j->r;
    const int co = j->s->out_channels;
    const int64_t *p = j->p, win = (int64_t)w->roi[0] * w->roi[1] * w->roi[2];
    const int64_t c_lo = w->pad_lo[2] - p[2] > 0 ? w->pad_lo[2] - p[2] : 0;
    const int64_t c_hi = w->size[2] - p[2] + w->pad_lo[2] < w->roi[2] ? w->size[2] - p[2] + w->pad_lo[2] : w->roi[2];
    for (int64_t a = a0; a < a1; a++) {
        int64_t x0 = p[0] + a - w->pad_lo[0];
        if (x0 < 0 || x0 >= w->size[0]) continue; /* MONAI crops the padding away */
        for (int b = 0; b < w->roi[1]; b++) {
            int64_t x1 = p[1] + b - w->pad_lo[1];
            if (x1 < 0 || x1 >= w->size[1]) continue;
            const int64_t wrow = (a * w->roi[1] + b) * w->roi[2];
            for (int64_t c = c_lo; c < c_hi;) {
                const int64_t x2 = p[2] + c - w->pad_lo[2];
                int64_t len = c_hi - c;
                if (r->ax == 2 && r->ext[2] - x2 % r->ext[2] < len) len = r->ext[2] - x2 % r->ext[2];
                const int64_t ri = ring_index(r, x0, x1, x2), wi = wrow + c;
                const float *imp = w->importance + wi;
                for (int k = 0; k < co; k++) {
                    float *acc = r->acc + k * r->n + ri;
                    const float *o = j->out + k * win + wi;
                    for (int64_t i = 0; i < len; i++) acc[i] += o[i] * imp[i];
                }
                for (int64_t i = 0; i < len; i++) r->wsum[ri + i] += imp[i];
                c += len;
            }
        }
    }
}

/* Rows [u0, u1) of the first other axis of plane j->plane: average, sink, clear. */
static void finalise_rows(void *user, int tid, int64_t u0, int64_t u1)
{
    const struct blend_job *j = user;
    const struct swin_sliding *s = j->s;
    const struct swin_cubes *w = s->layout;
    struct ring *r = j->r;
    const int co = s->out_channels, ax = r->ax, o1 = ax == 0 ? 1 : 0, o2 = ax == 2 ? 1 : 2;
    float *avg = j->avg + (size_t)co * (size_t)tid;
    int64_t x[3];
    x[ax] = j->plane;
    for (x[o1] = u0; x[o1] < u1; x[o1]++)
        for (x[o2] = 0; x[o2] < w->size[o2]; x[o2]++) {
            int64_t ri = ring_index(r, x[0], x[1], x[2]);
            float ws = r->wsum[ri];
            for (int k = 0; k < co; k++) {
                avg[k] = r->acc[k * r->n + ri] / ws;
                r->acc[k * r->n + ri] = 0;
            }
            r->wsum[ri] = 0;
            s->sink(s->sink_user, (x[0] * w->size[1] + x[1]) * w->size[2] + x[2], avg);
        }
}

/* Planes [lo, hi) of the slab axis (volume coordinates) are final: one plane after the
 * other, its rows shared among the threads. */
static void finalise(const struct swin_sliding *s, struct ring *r, int64_t lo, int64_t hi, float *avg, int threads)
{
    const int ax = r->ax, o1 = ax == 0 ? 1 : 0;
    struct blend_job j = {.s = s, .r = r, .avg = avg};
    for (int64_t p = lo; p < hi; p++) {
        j.plane = p;
        swin_parallel_for(threads, s->layout->size[o1], finalise_rows, &j);
        if (s->plane_done) s->plane_done(s->sink_user, p);
    }
}

swin_status swin_sliding_run(const struct swin_sliding *s, const float *vol, swin_error *err)
{
    const struct swin_cubes *w = s->layout;
    int co = s->out_channels;
    struct ring r = {.ax = swin_sliding_axis(w)};
    r.n = ring_voxels(w, r.ax, r.ext);
    size_t win = (size_t)w->roi[0] * w->roi[1] * w->roi[2];
    r.acc = calloc((size_t)co * (size_t)r.n, sizeof *r.acc);
    r.wsum = calloc((size_t)r.n, sizeof *r.wsum);
    float *in = malloc(win * sizeof *in), *out = malloc((size_t)co * win * sizeof *out);
    const int threads = swin_parallel_threads(s->threads);
    float *avg = malloc((size_t)threads * (size_t)co * sizeof *avg);
    struct swin_sliding_times tm = {0};
    double t0;
    swin_status st = SWIN_OK;
    if (!r.acc || !r.wsum || !in || !out || !avg) {
        st = swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for the sliding-window buffers (%zu bytes)",
                            swin_sliding_bytes(w, co, s->threads));
        goto done;
    }
    int ax = r.ax, o1 = ax == 0 ? 1 : 0, o2 = ax == 2 ? 1 : 2; /* the two other axes, in order */
    int64_t total = swin_cubes_count(w), done_n = 0, finished = 0; /* planes [0, finished) sunk */
    for (int i = 0; i < w->n[ax]; i++) {
        for (int j = 0; j < w->n[o1]; j++)
            for (int k = 0; k < w->n[o2]; k++) {
                int64_t p[3];
                p[ax] = w->starts[ax][i];
                p[o1] = w->starts[o1][j];
                p[o2] = w->starts[o2][k];
                t0 = swin_clock_seconds();
                gather(w, vol, p, in);
                tm.gather += swin_clock_seconds() - t0;
                t0 = swin_clock_seconds();
                if ((st = s->predict(s->predict_user, in, out, err))) goto done;
                tm.predict += swin_clock_seconds() - t0;
                t0 = swin_clock_seconds();
                struct blend_job bj = {.s = s, .r = &r, .p = p, .out = out};
                swin_parallel_for(threads, w->roi[0], accumulate_rows, &bj);
                tm.blend += swin_clock_seconds() - t0;
                if (s->progress) s->progress(s->progress_user, ++done_n, total);
            }
        /* no later window reaches below the next start */
        int64_t upto = i + 1 < w->n[ax] ? w->starts[ax][i + 1] - w->pad_lo[ax] : w->size[ax];
        if (upto > w->size[ax]) upto = w->size[ax];
        if (upto > finished) {
            t0 = swin_clock_seconds();
            finalise(s, &r, finished, upto, avg, threads);
            tm.finalise += swin_clock_seconds() - t0;
            finished = upto;
        }
    }
done:
    if (s->times) *s->times = tm;
    free(r.acc);
    free(r.wsum);
    free(in);
    free(out);
    free(avg);
    return st;
}
