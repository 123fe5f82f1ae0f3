/* gzip members compressed by threads, written in order (gzip_members.h).
 *
 * Chunks go through a ring of slots in sequence: the caller fills the slot of sequence number
 * `filling` (slot filling % nslots) and hands it to the workers (QUEUED); before it reuses a
 * slot it writes that slot's member out, waiting for it to be compressed (DONE) if need be.
 * The workers take the oldest QUEUED slot. So members leave in the order their chunks came
 * in, and at most nslots chunks are held at once. Without workers the caller compresses each
 * chunk as it hands it over. */
#include "formats/gzip_members.h"

#include <errno.h>
#include <libdeflate.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum slot_state { SLOT_FREE, SLOT_QUEUED, SLOT_BUSY, SLOT_DONE };

struct slot {
    unsigned char *in, *out;
    size_t in_n, out_n; /* out_n 0 after compressing: no room in out (libdeflate's bound broken) */
    enum slot_state state;
};

struct worker {
    struct swin_gz_members *g;
    struct libdeflate_compressor *comp;
    pthread_t th;
};

struct swin_gz_members {
    struct swin_atomic_file *af;
    int nslots;
    int ncomp, nworkers; /* compressors made; threads started (0: the caller compresses) */
    size_t out_cap;      /* libdeflate's bound of a whole chunk's member */
    struct slot *slots;
    int64_t filling;     /* the sequence number of the chunk being filled */
    int64_t written;     /* members written; chunks [written, filling) are in flight */
    struct worker *workers;
    bool sync;           /* mu, queued and done made */
    pthread_mutex_t mu;  /* guards the slots' states, filling, written and stop */
    pthread_cond_t queued, done;
    bool stop;
};

/* libdeflate 1.14's compressor holds 0.2-0.7 MB at levels 1-9, 9 MB at 10-12 (mallinfo2). */
static size_t compressor_bytes(int level)
{
    return level >= 10 ? (size_t)10 << 20 : (size_t)1 << 20;
}

static int workers_for(int threads)
{
    return threads > 1 ? threads : 0;
}

static int slots_for(int nworkers)
{
    return 2 * (nworkers > 0 ? nworkers : 1) + 1;
}

/* For the plan: above libdeflate's bound (libdeflate_gzip_compress_bound, which sizes the
 * members' buffers): its blocks' 5-byte headers, one per 5000 bytes at most, and the gzip
 * wrapper. */
static size_t member_bound(size_t n)
{
    return n + n / 500 + 4096;
}

size_t swin_gz_members_bytes(int level, int threads)
{
    int workers = workers_for(threads);
    size_t slot = SWIN_GZ_CHUNK + member_bound(SWIN_GZ_CHUNK);
    return (size_t)slots_for(workers) * slot + (size_t)(workers > 0 ? workers : 1) * compressor_bytes(level);
}

static void compress_slot(const struct swin_gz_members *g, struct libdeflate_compressor *c, struct slot *s)
{
    s->out_n = libdeflate_gzip_compress(c, s->in, s->in_n, s->out, g->out_cap);
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct swin_gz_members *g = w->g;
    pthread_mutex_lock(&g->mu);
    for (;;) {
        struct slot *s = NULL;
        for (int64_t q = g->written; q < g->filling && !s; q++)
            if (g->slots[q % g->nslots].state == SLOT_QUEUED) s = &g->slots[q % g->nslots];
        if (!s && g->stop) break;
        if (!s) {
            pthread_cond_wait(&g->queued, &g->mu);
            continue;
        }
        s->state = SLOT_BUSY;
        pthread_mutex_unlock(&g->mu);
        compress_slot(g, w->comp, s);
        pthread_mutex_lock(&g->mu);
        s->state = SLOT_DONE;
        pthread_cond_broadcast(&g->done);
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

/* Writes the members of chunks [written, upto), each once compressed. */
static swin_status write_members(struct swin_gz_members *g, int64_t upto, swin_error *err)
{
    while (g->written < upto) {
        struct slot *s = &g->slots[g->written % g->nslots];
        pthread_mutex_lock(&g->mu);
        while (s->state != SLOT_DONE) pthread_cond_wait(&g->done, &g->mu);
        pthread_mutex_unlock(&g->mu);
        if (!s->out_n)
            return swin_error_set(err, SWIN_ERR_INTERNAL, "%s: libdeflate found no room for a compressed chunk",
                                  g->af->dest);
        if (fwrite(s->out, 1, s->out_n, g->af->f) != s->out_n) return swin_atomic_file_write_failed(g->af, errno, err);
        pthread_mutex_lock(&g->mu);
        s->state = SLOT_FREE;
        s->in_n = 0;
        g->written++;
        pthread_mutex_unlock(&g->mu);
    }
    return SWIN_OK;
}

/* Hands the chunk being filled to the workers, or compresses it here without them. */
static void submit(struct swin_gz_members *g)
{
    struct slot *s = &g->slots[g->filling % g->nslots];
    if (!g->nworkers) compress_slot(g, g->workers[0].comp, s);
    pthread_mutex_lock(&g->mu);
    s->state = g->nworkers ? SLOT_QUEUED : SLOT_DONE;
    g->filling++;
    pthread_cond_signal(&g->queued);
    pthread_mutex_unlock(&g->mu);
}

static bool slot_free(struct swin_gz_members *g, const struct slot *s)
{
    pthread_mutex_lock(&g->mu);
    bool free_ = s->state == SLOT_FREE;
    pthread_mutex_unlock(&g->mu);
    return free_;
}

swin_status swin_gz_members_open(struct swin_gz_members **out, struct swin_atomic_file *af, int level, int threads,
                                 swin_error *err)
{
    *out = NULL;
    struct swin_gz_members *g = calloc(1, sizeof *g);
    if (!g) return swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of host memory for the compressor", af->dest);
    g->af = af;
    const int workers = workers_for(threads), ncomp = workers > 0 ? workers : 1;
    g->nslots = slots_for(workers);
    g->slots = calloc((size_t)g->nslots, sizeof *g->slots);
    g->workers = calloc((size_t)ncomp, sizeof *g->workers);
    bool ok = g->slots && g->workers;
    while (ok && g->ncomp < ncomp) {
        g->workers[g->ncomp] = (struct worker){.g = g, .comp = libdeflate_alloc_compressor(level)};
        if ((ok = g->workers[g->ncomp].comp != NULL)) g->ncomp++;
    }
    if (ok) g->out_cap = libdeflate_gzip_compress_bound(g->workers[0].comp, SWIN_GZ_CHUNK);
    for (int i = 0; ok && i < g->nslots; i++)
        ok = (g->slots[i].in = malloc(SWIN_GZ_CHUNK)) && (g->slots[i].out = malloc(g->out_cap));
    /* (glibc's inits with default attributes cannot fail) */
    g->sync = ok && pthread_mutex_init(&g->mu, NULL) == 0 && pthread_cond_init(&g->queued, NULL) == 0 &&
              pthread_cond_init(&g->done, NULL) == 0;
    if (!ok || !g->sync) {
        swin_gz_members_free(g);
        return swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of host memory for the compressor", af->dest);
    }
    /* threads that do not start leave their share to those that did (to the caller, if none) */
    while (g->nworkers < workers &&
           pthread_create(&g->workers[g->nworkers].th, NULL, worker_main, &g->workers[g->nworkers]) == 0)
        g->nworkers++;
    *out = g;
    return SWIN_OK;
}

swin_status swin_gz_members_write(struct swin_gz_members *g, const void *data, size_t bytes, swin_error *err)
{
    const unsigned char *p = data;
    while (bytes) {
        struct slot *s = &g->slots[g->filling % g->nslots];
        if (!slot_free(g, s)) { /* the slot still holds chunk filling - nslots */
            swin_status st = write_members(g, g->filling - g->nslots + 1, err);
            if (st) return st;
        }
        size_t n = SWIN_GZ_CHUNK - s->in_n < bytes ? SWIN_GZ_CHUNK - s->in_n : bytes;
        memcpy(s->in + s->in_n, p, n);
        s->in_n += n;
        p += n;
        bytes -= n;
        if (s->in_n == SWIN_GZ_CHUNK) submit(g);
    }
    return SWIN_OK;
}

swin_status swin_gz_members_finish(struct swin_gz_members *g, swin_error *err)
{
    struct slot *s = &g->slots[g->filling % g->nslots];
    if (slot_free(g, s) && (s->in_n || !g->filling)) submit(g); /* an empty stream is one empty member */
    return write_members(g, g->filling, err);
}

void swin_gz_members_free(struct swin_gz_members *g)
{
    if (!g) return;
    if (g->nworkers) {
        pthread_mutex_lock(&g->mu);
        g->stop = true;
        pthread_cond_broadcast(&g->queued);
        pthread_mutex_unlock(&g->mu);
        for (int w = 0; w < g->nworkers; w++) pthread_join(g->workers[w].th, NULL);
    }
    if (g->sync) {
        pthread_mutex_destroy(&g->mu);
        pthread_cond_destroy(&g->queued);
        pthread_cond_destroy(&g->done);
    }
    for (int i = 0; g->slots && i < g->nslots; i++) {
        free(g->slots[i].in);
        free(g->slots[i].out);
    }
    for (int w = 0; w < g->ncomp; w++) libdeflate_free_compressor(g->workers[w].comp);
    free(g->slots);
    free(g->workers);
    free(g);
}
