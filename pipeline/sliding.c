#include "pipeline/sliding.h"

#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "pipeline/parallel.h"

int swin_sliding_axis(const struct swin_cubes *w)
{
    return swin_ring_slab_axis(w->size, w->roi);
}

/* Voxels in one ring buffer: the volume with the slab axis cut to min(roi, size). */
static int64_t ring_voxels(const struct swin_cubes *w, int ax, int64_t ext[3])
{
    for (int k = 0; k < 3; k++) ext[k] = w->size[k];
    ext[ax] = w->roi[ax] < w->size[ax] ? w->roi[ax] : w->size[ax];
    return ext[0] * ext[1] * ext[2];
}

/* Voxels of a run along the slab axis averaged together when that axis is the last. */
enum { FINAL_TILE = 64 };

size_t swin_sliding_bytes(const struct swin_cubes *w, int in_channels, int out_channels, int threads)
{
    int64_t ext[3];
    size_t ring = (size_t)ring_voxels(w, swin_sliding_axis(w), ext);
    size_t win = (size_t)w->roi[0] * w->roi[1] * w->roi[2];
    return ((size_t)out_channels + 1) * ring * sizeof(float) +
           ((size_t)in_channels + (size_t)out_channels) * win * sizeof(float) +
           (size_t)swin_parallel_threads(threads) * FINAL_TILE * (size_t)out_channels * sizeof(float);
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

/* What the threads of one gather share: the window at padded start p into in, channel by
 * channel (vol: channels volumes of the layout's size; in: channels windows). */
struct gather_job {
    const struct swin_cubes *w;
    const float *vol;
    const int64_t *p;
    float *in;
    int channels;
};

/* Window planes a in [a0, a1): each row the volume's span it overlaps (a copy), zeros
 * outside the volume. */
static void gather_rows(void *user, int tid, int64_t a0, int64_t a1)
{
    (void)tid;
    const struct gather_job *g = user;
    const struct swin_cubes *w = g->w;
    const int64_t *sz = w->size, *p = g->p;
    const int64_t r2 = w->roi[2], c_lo = w->pad_lo[2] - p[2] > 0 ? w->pad_lo[2] - p[2] : 0;
    const int64_t c_hi = sz[2] - p[2] + w->pad_lo[2] < r2 ? sz[2] - p[2] + w->pad_lo[2] : r2;
    const int64_t vol_n = sz[0] * sz[1] * sz[2], win_n = (int64_t)w->roi[0] * w->roi[1] * r2;
    for (int ch = 0; ch < g->channels; ch++) {
        for (int64_t a = a0; a < a1; a++)
            for (int b = 0; b < w->roi[1]; b++) {
                float *row = g->in + ch * win_n + (a * w->roi[1] + b) * r2;
                const int64_t x0 = p[0] + a - w->pad_lo[0], x1 = p[1] + b - w->pad_lo[1];
                if (x0 < 0 || x0 >= sz[0] || x1 < 0 || x1 >= sz[1] || c_hi <= c_lo) {
                    memset(row, 0, (size_t)r2 * sizeof *row);
                    continue;
                }
                const float *src = g->vol + ch * vol_n + (x0 * sz[1] + x1) * sz[2] + p[2] - w->pad_lo[2];
                memset(row, 0, (size_t)c_lo * sizeof *row);
                memcpy(row + c_lo, src + c_lo, (size_t)(c_hi - c_lo) * sizeof *row);
                memset(row + c_hi, 0, (size_t)(r2 - c_hi) * sizeof *row);
            }
    }
}

static void gather(const struct swin_cubes *w, const float *vol, int channels, const int64_t p[3], float *in,
                   int threads)
{
    struct gather_job g = {.w = w, .vol = vol, .p = p, .in = in, .channels = channels};
    swin_parallel_for(threads, w->roi[0], gather_rows, &g);
}

/* What the threads of one accumulate or finalise call share. */
struct blend_job {
    const struct swin_sliding *s;
    struct ring *r;
    const int64_t *p;   /* accumulate: the window's padded start */
    const float *out;   /* accumulate: its logits */
    int64_t plane;      /* finalise: the plane along the slab axis (the first of a run) */
    int64_t plane_hi;   /* finalise_runs: one past the last */
    float *avg;         /* finalise: FINAL_TILE x out_channels floats per thread */
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

/* Voxels [ri, ri + len) of the ring, contiguous there and at v, v + 1, ... in the volume
 * (len <= FINAL_TILE): a class at a time over the run (each class's sums contiguous), their
 * averages into tile (voxel-major: out_channels values a voxel) and their sums and weights
 * cleared; then each voxel's averages to the sink. */
static void finish_run(const struct swin_sliding *s, struct ring *r, int64_t ri, int64_t len, int64_t v, float *tile)
{
    const int co = s->out_channels;
    const float *ws = r->wsum + ri;
    for (int k = 0; k < co; k++) {
        float *acc = r->acc + k * r->n + ri;
        for (int64_t i = 0; i < len; i++) tile[i * co + k] = acc[i] / ws[i];
        memset(acc, 0, (size_t)len * sizeof *acc);
    }
    memset(r->wsum + ri, 0, (size_t)len * sizeof *r->wsum);
    for (int64_t i = 0; i < len; i++) s->sink(s->sink_user, v + i, tile + i * co);
}

/* Rows [u0, u1) of the first other axis of plane j->plane: average, sink, clear. With the slab
 * axis first or second a row runs along the last axis, contiguous in the ring and in the
 * volume: runs of up to FINAL_TILE voxels; with it last (the linear way back, which needs the
 * planes in order) a voxel at a time. */
static void finalise_rows(void *user, int tid, int64_t u0, int64_t u1)
{
    const struct blend_job *j = user;
    const struct swin_sliding *s = j->s;
    const struct swin_cubes *w = s->layout;
    struct ring *r = j->r;
    const int co = s->out_channels, ax = r->ax, o1 = ax == 0 ? 1 : 0, o2 = ax == 2 ? 1 : 2;
    float *tile = j->avg + (size_t)co * FINAL_TILE * (size_t)tid;
    int64_t x[3];
    x[ax] = j->plane;
    for (x[o1] = u0; x[o1] < u1; x[o1]++)
        for (x[o2] = 0; x[o2] < w->size[o2];) {
            const int64_t left = w->size[o2] - x[o2], len = ax == 2 ? 1 : left < FINAL_TILE ? left : FINAL_TILE;
            finish_run(s, r, ring_index(r, x[0], x[1], x[2]), len, (x[0] * w->size[1] + x[1]) * w->size[2] + x[2],
                       tile);
            x[o2] += len;
        }
}

/* Rows x0 in [a0, a1) of planes [j->plane, j->plane_hi) when the slab axis is the last, the
 * fastest in the ring and in the volume (an axial CT's): runs along it, cut where the ring
 * wraps. */
static void finalise_runs(void *user, int tid, int64_t a0, int64_t a1)
{
    const struct blend_job *j = user;
    const struct swin_sliding *s = j->s;
    const struct swin_cubes *w = s->layout;
    struct ring *r = j->r;
    float *tile = j->avg + (size_t)s->out_channels * FINAL_TILE * (size_t)tid;
    for (int64_t x0 = a0; x0 < a1; x0++)
        for (int64_t x1 = 0; x1 < w->size[1]; x1++)
            for (int64_t x2 = j->plane; x2 < j->plane_hi;) {
                int64_t len = j->plane_hi - x2;
                const int64_t to_wrap = r->ext[2] - x2 % r->ext[2];
                if (to_wrap < len) len = to_wrap;
                if (len > FINAL_TILE) len = FINAL_TILE;
                finish_run(s, r, ring_index(r, x0, x1, x2), len, (x0 * w->size[1] + x1) * w->size[2] + x2, tile);
                x2 += len;
            }
}

/* Planes [lo, hi) of the slab axis (volume coordinates) are final. The slab axis last and the
 * sink not bound to plane order: runs along it, rows x0 shared among the threads, then each
 * plane announced in order; else one plane after the other, its rows shared among the threads. */
static void finalise(const struct swin_sliding *s, struct ring *r, int64_t lo, int64_t hi, float *avg, int threads)
{
    const int ax = r->ax, o1 = ax == 0 ? 1 : 0;
    struct blend_job j = {.s = s, .r = r, .avg = avg};
    if (ax == 2 && !s->planes_in_order) {
        j.plane = lo;
        j.plane_hi = hi;
        swin_parallel_for(threads, s->layout->size[0], finalise_runs, &j);
        for (int64_t p = lo; p < hi && s->plane_done; p++) s->plane_done(s->sink_user, p);
        return;
    }
    for (int64_t p = lo; p < hi; p++) {
        j.plane = p;
        swin_parallel_for(threads, s->layout->size[o1], finalise_rows, &j);
        if (s->plane_done) s->plane_done(s->sink_user, p);
    }
}

/* What a path does with each cube, cut out into `in` at padded start p; with the rows
 * [row_lo, row_hi) along o1 of the planes [lo, hi) along the slab axis once no later cube
 * reaches them (may be NULL); and with the planes [lo, hi) once no later cube reaches them. */
struct path {
    void *ctx;
    swin_status (*cube)(void *ctx, const float *in, const int64_t p[3], struct swin_sliding_times *tm,
                        swin_error *err);
    swin_status (*rows)(void *ctx, int64_t lo, int64_t hi, int64_t row_lo, int64_t row_hi, swin_error *err);
    swin_status (*planes)(void *ctx, int64_t lo, int64_t hi, swin_error *err);
};

/* Along axis k, volume coordinates: no cube after start index i reaches below the next start. */
static int64_t final_below(const struct swin_cubes *w, int k, int i)
{
    int64_t upto = i + 1 < w->n[k] ? w->starts[k][i + 1] - w->pad_lo[k] : w->size[k];
    return upto < 0 ? 0 : upto > w->size[k] ? w->size[k] : upto;
}

/* The most planes that become final after one slab row. */
static int64_t planes_final_together(const struct swin_cubes *w, int ax)
{
    int64_t most = 0, finished = 0;
    for (int i = 0; i < w->n[ax]; i++) {
        const int64_t upto = final_below(w, ax, i);
        if (upto - finished > most) most = upto - finished;
        if (upto > finished) finished = upto;
    }
    return most;
}

/* The order of both paths: the cubes along the slab axis ax, then o1, then o2; after each
 * sub-row along o1, the rows below its next start of the planes that slab row finishes are
 * final; after each slab row, the planes below the next row's start are. */
static swin_status drive(const struct swin_sliding *s, int ax, const float *vol, float *in, const struct path *pa,
                         struct swin_sliding_times *tm, swin_error *err)
{
    const struct swin_cubes *w = s->layout;
    const int o1 = ax == 0 ? 1 : 0, o2 = ax == 2 ? 1 : 2; /* the two other axes, in order */
    int64_t total = swin_cubes_count(w), done_n = 0, finished = 0; /* planes [0, finished) sunk */
    const int threads = swin_parallel_threads(s->threads);
    swin_status st;
    double t0;
    for (int i = 0; i < w->n[ax]; i++) {
        const int64_t upto = final_below(w, ax, i);
        int64_t rows_done = 0;
        for (int j = 0; j < w->n[o1]; j++) {
            for (int k = 0; k < w->n[o2]; k++) {
                int64_t p[3];
                p[ax] = w->starts[ax][i];
                p[o1] = w->starts[o1][j];
                p[o2] = w->starts[o2][k];
                t0 = swin_clock_seconds();
                gather(w, vol, s->in_channels, p, in, threads);
                tm->gather += swin_clock_seconds() - t0;
                if ((st = pa->cube(pa->ctx, in, p, tm, err))) return st;
                if (s->progress) s->progress(s->progress_user, ++done_n, total);
            }
            const int64_t rows_upto = final_below(w, o1, j);
            if (pa->rows && upto > finished && rows_upto > rows_done) {
                t0 = swin_clock_seconds();
                st = pa->rows(pa->ctx, finished, upto, rows_done, rows_upto, err);
                tm->finalise += swin_clock_seconds() - t0;
                if (st) return st;
                rows_done = rows_upto;
            }
        }
        if (upto > finished) {
            t0 = swin_clock_seconds();
            st = pa->planes(pa->ctx, finished, upto, err);
            tm->finalise += swin_clock_seconds() - t0;
            if (st) return st;
            finished = upto;
        }
    }
    return SWIN_OK;
}

/* ---- the host path ------------------------------------------------------------------- */

struct host_run {
    const struct swin_sliding *s;
    struct ring r;
    float *out;  /* one window's logits */
    float *avg;  /* FINAL_TILE x out_channels floats per thread */
    int threads;
};

static swin_status host_cube(void *ctx, const float *in, const int64_t p[3], struct swin_sliding_times *tm,
                             swin_error *err)
{
    struct host_run *h = ctx;
    double t0 = swin_clock_seconds();
    swin_status st = h->s->predict(h->s->predict_user, in, h->out, err);
    tm->predict += swin_clock_seconds() - t0;
    if (st) return st;
    t0 = swin_clock_seconds();
    struct blend_job bj = {.s = h->s, .r = &h->r, .p = p, .out = h->out};
    swin_parallel_for(h->threads, h->s->layout->roi[0], accumulate_rows, &bj);
    tm->blend += swin_clock_seconds() - t0;
    return SWIN_OK;
}

static swin_status host_planes(void *ctx, int64_t lo, int64_t hi, swin_error *err)
{
    struct host_run *h = ctx;
    finalise(h->s, &h->r, lo, hi, h->avg, h->threads);
    return SWIN_OK;
}

/* Chunks [c0, c1) of ZERO_CHUNK bytes of a buffer set to zero (the last one cut at its end). */
enum { ZERO_CHUNK = 2 << 20 };
struct zero_job {
    char *p;
    size_t bytes;
};

static void zero_chunks(void *user, int tid, int64_t c0, int64_t c1)
{
    (void)tid;
    const struct zero_job *z = user;
    const size_t lo = (size_t)c0 * ZERO_CHUNK;
    const size_t hi = (size_t)c1 * ZERO_CHUNK < z->bytes ? (size_t)c1 * ZERO_CHUNK : z->bytes;
    memset(z->p + lo, 0, hi - lo);
}

/* A buffer of `bytes` zeros, written by the threads now. calloc's untouched pages read as the
 * shared zero page: the ring's first += on each would fault twice, and the second fault
 * flushes the other threads' TLBs, an interprocessor interrupt per 4 KiB page
 * (bench/results/pipeline_host.md, section 4). */
static float *zeroed(size_t bytes, int threads)
{
    float *p = malloc(bytes);
    if (p) swin_parallel_for(threads, (int64_t)((bytes + ZERO_CHUNK - 1) / ZERO_CHUNK), zero_chunks,
                             &(struct zero_job){(char *)p, bytes});
    return p;
}

static swin_status run_host(const struct swin_sliding *s, const float *vol, struct swin_sliding_times *tm,
                            swin_error *err)
{
    const struct swin_cubes *w = s->layout;
    int co = s->out_channels;
    struct host_run h = {.s = s, .r = {.ax = swin_sliding_axis(w)}, .threads = swin_parallel_threads(s->threads)};
    h.r.n = ring_voxels(w, h.r.ax, h.r.ext);
    size_t win = (size_t)w->roi[0] * w->roi[1] * w->roi[2];
    h.r.acc = zeroed((size_t)co * (size_t)h.r.n * sizeof *h.r.acc, h.threads);
    h.r.wsum = zeroed((size_t)h.r.n * sizeof *h.r.wsum, h.threads);
    float *in = malloc((size_t)s->in_channels * win * sizeof *in);
    h.out = malloc((size_t)co * win * sizeof *h.out);
    h.avg = malloc((size_t)h.threads * FINAL_TILE * (size_t)co * sizeof *h.avg);
    swin_status st;
    if (!h.r.acc || !h.r.wsum || !in || !h.out || !h.avg)
        st = swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for the sliding-window buffers (%zu bytes)",
                            swin_sliding_bytes(w, s->in_channels, co, s->threads));
    else
        st = drive(s, h.r.ax, vol, in, &(struct path){.ctx = &h, .cube = host_cube, .planes = host_planes}, tm, err);
    free(h.r.acc);
    free(h.r.wsum);
    free(in);
    free(h.out);
    free(h.avg);
    return st;
}

/* ---- the device path ----------------------------------------------------------------- */

struct device_run {
    const struct swin_sliding *s;
    int64_t plane, d2;  /* voxels of a plane, of a row */
    void *labels;       /* the planes a slab row finishes, from its first: labels, or NULL */
    float *probs;       /* and probabilities, or NULL */
};

static swin_status device_cube(void *ctx, const float *in, const int64_t p[3], struct swin_sliding_times *tm,
                               swin_error *err)
{
    const struct device_run *d = ctx;
    double t0 = swin_clock_seconds();
    swin_status st = d->s->device->predict_blend(d->s->device->user, in, p, err);
    tm->predict += swin_clock_seconds() - t0;
    return st;
}

static swin_status device_rows(void *ctx, int64_t lo, int64_t hi, int64_t row_lo, int64_t row_hi, swin_error *err)
{
    const struct device_run *d = ctx;
    const struct swin_sliding *s = d->s;
    for (int64_t p = lo; p < hi; p++) {
        const size_t at = (size_t)((p - lo) * d->plane + row_lo * d->d2);
        swin_status st = s->device->finish_rows(
            s->device->user, p, row_lo, row_hi, d->labels ? (char *)d->labels + at * (size_t)s->label_bytes : NULL,
            d->probs ? d->probs + at * (size_t)s->out_channels : NULL, err);
        if (st) return st;
    }
    return SWIN_OK;
}

static swin_status device_planes(void *ctx, int64_t lo, int64_t hi, swin_error *err)
{
    const struct device_run *d = ctx;
    const struct swin_sliding *s = d->s;
    for (int64_t p = lo; p < hi; p++) {
        const size_t at = (size_t)((p - lo) * d->plane);
        s->plane_result(s->sink_user, p, d->labels ? (char *)d->labels + at * (size_t)s->label_bytes : NULL,
                        d->probs ? d->probs + at * (size_t)s->out_channels : NULL);
        if (s->plane_done) s->plane_done(s->sink_user, p);
    }
    return SWIN_OK;
}

size_t swin_sliding_device_bytes(const struct swin_cubes *w, int in_channels, int out_channels, int label_bytes,
                                 bool probs)
{
    const int ax = swin_sliding_axis(w), o1 = ax == 0 ? 1 : 0, o2 = ax == 2 ? 1 : 2;
    const size_t planes = (size_t)planes_final_together(w, ax) * (size_t)w->size[o1] * (size_t)w->size[o2];
    return (size_t)in_channels * w->roi[0] * w->roi[1] * w->roi[2] * sizeof(float) + planes * (size_t)label_bytes +
           (probs ? planes * (size_t)out_channels * sizeof(float) : 0);
}

/* After the device's begin took the volume: the cubes blended there, the rows back. */
static swin_status run_device(const struct swin_sliding *s, const float *vol, struct swin_sliding_times *tm,
                              swin_error *err)
{
    const struct swin_cubes *w = s->layout;
    const int ax = swin_sliding_axis(w), o1 = ax == 0 ? 1 : 0, o2 = ax == 2 ? 1 : 2;
    struct device_run d = {.s = s, .plane = w->size[o1] * w->size[o2], .d2 = w->size[o2]};
    const size_t planes = (size_t)planes_final_together(w, ax) * (size_t)d.plane;
    float *in = malloc((size_t)s->in_channels * w->roi[0] * w->roi[1] * w->roi[2] * sizeof *in);
    if (s->want_labels) d.labels = malloc(planes * (size_t)s->label_bytes);
    if (s->want_probs) d.probs = malloc(planes * (size_t)s->out_channels * sizeof *d.probs);
    swin_status st;
    if (!in || (s->want_labels && !d.labels) || (s->want_probs && !d.probs))
        st = swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for a cube and the planes of a slab (%zu bytes)",
                            swin_sliding_device_bytes(w, s->in_channels, s->out_channels, s->label_bytes,
                                                      s->want_probs));
    else
        st = drive(s, ax, vol, in,
                   &(struct path){.ctx = &d, .cube = device_cube, .rows = device_rows, .planes = device_planes}, tm,
                   err);
    s->device->end(s->device->user);
    free(in);
    free(d.labels);
    free(d.probs);
    return st;
}

swin_status swin_sliding_run(const struct swin_sliding *s, const float *vol, swin_error *err)
{
    struct swin_sliding_times tm = {0};
    struct swin_blend_info info = {0};
    if (s->in_channels < 1)
        return swin_error_set(err, SWIN_ERR_ARG, "a volume of %d channels: at least one", s->in_channels);
    swin_status st = SWIN_OK;
    if (s->device)
        st = s->device->begin(s->device->user, s->layout, swin_sliding_axis(s->layout), s->label_bytes,
                              s->want_probs, &info, err);
    if (!st) st = info.on_device ? run_device(s, vol, &tm, err) : run_host(s, vol, &tm, err);
    if (s->times) *s->times = tm;
    if (s->blend) *s->blend = info;
    return st;
}
