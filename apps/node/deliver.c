/* The delivery thread (deliver.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "apps/node/deliver.h"
#include "apps/node/durable.h"
#include "apps/node/jobs.h"
#include "apps/node/node_log.h"
#include "apps/node/scu.h"
#include "apps/node/stow.h"
#include "core/clock.h"

static struct delivery_try *find(struct node_deliver *d, const char *job)
{
    for (int i = 0; i < d->ntries; i++)
        if (!strcmp(d->tries[i].job, job)) return &d->tries[i];
    return NULL;
}

/* A new entry for job's tries, or NULL where memory ran out (the job is then given up after
 * this try, as after its last). */
static struct delivery_try *add_try(struct node_deliver *d, const char *job)
{
    if (d->ntries == d->cap) {
        int cap = d->cap ? 2 * d->cap : 16;
        struct delivery_try *p = realloc(d->tries, (size_t)cap * sizeof *p);
        if (!p) return NULL;
        d->tries = p, d->cap = cap;
    }
    struct delivery_try fresh = {0};
    snprintf(fresh.job, sizeof fresh.job, "%s", job);
    d->tries[d->ntries] = fresh;
    return &d->tries[d->ntries++];
}

static void forget(struct node_deliver *d, const char *job)
{
    struct delivery_try *t = find(d, job);
    if (t) *t = d->tries[--d->ntries];
}

/* A job with no try due: each destination it has failed and not given up waits for its next
 * (the others were sent to or given up in the pass that made the entry). */
static int waiting(void *user, const char *job)
{
    struct node_deliver *d = user;
    const struct delivery_try *t = find(d, job);
    if (!t) return 0;
    const double now = swin_clock_seconds();
    for (int i = 0; i < d->cfg->ndests; i++)
        if (t->tries[i] && !t->sent[i] && !t->gave_up[i] && t->next[i] <= now) return 0;
    return 1;
}

static void log_attempt(const char *job, const char *dest, int tries, const struct node_config *cfg, const char *why)
{
    char s[800], w[1000];
    node_log_event("delivery_failed", job + 17,
                   "\"job\": \"%s\", \"destination\": \"%s\", \"try\": %d, "
                   "\"tries\": %d, \"reason\": %s",
                   job, dest, tries, cfg->attempts, node_log_str(node_log_scrub(why, s, sizeof s), w, sizeof w));
}

/* The job's wall-clock age: its name starts with the ns it was queued at. */
static double seconds_since_queued(const char *job)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9 - (double)strtoull(job, NULL, 16) * 1e-9;
}

/* Moves the job to the dead letters: its reason the given-up destinations' last failures. */
static void give_up(struct node_deliver *d, const char *job, const struct delivery_try *t)
{
    const struct node_config *cfg = d->cfg;
    char reason[NODE_MAX_DESTS * (DELIVERY_REASON_MAX + 80)] = "", names[NODE_MAX_DESTS * 34] = "";
    size_t r = 0, k = 0;
    for (int i = 0; i < cfg->ndests; i++) {
        if (!t->gave_up[i]) continue;
        r += (size_t)snprintf(reason + r, sizeof reason - r, "%s%s: not delivered after %d tries: %s", r ? "\n" : "",
                              cfg->dests[i].name, t->tries[i], t->reason[i]);
        k += (size_t)snprintf(names + k, sizeof names - k, "%s%s", k ? ", " : "", cfg->dests[i].name);
        if (r >= sizeof reason || k >= sizeof names) break;
    }
    swin_error e2;
    if (jobs_dead(d->spool, "outbox", job, reason, &e2)) log_attempt(job, names, 0, cfg, e2.msg);
    else
        node_log_event("failed", job + 17, "\"job\": \"%s\", \"stage\": \"delivery\", \"destination\": \"%s\"", job,
                       names);
}

static void deliver_job(struct node_deliver *d, const char *job)
{
    const struct node_config *cfg = d->cfg;
    char paths[2][PATH_MAX];
    const char *files[2];
    int n = 0;
    static const char *const names[] = {"seg.dcm", "rtstruct.dcm"};
    for (int i = 0; i < 2; i++) {
        node_path(paths[n], sizeof paths[n], "%s/outbox/%s/%s", d->spool->root, job, names[i]);
        if (access(paths[n], F_OK) == 0) files[n] = paths[n], n++;
    }
    swin_error err = {0};
    bool pending = false, failed = false; /* a destination still to be tried; one given up */
    for (int i = 0; i < cfg->ndests; i++) {
        const struct node_dest *dest = &cfg->dests[i];
        if (jobs_was_sent(d->spool, job, dest->name)) continue;
        pthread_mutex_lock(&d->lock);
        struct delivery_try *t = find(d, job);
        const bool skip = t && (t->gave_up[i] || (t->tries[i] && t->next[i] > swin_clock_seconds()));
        if (t) failed |= t->gave_up[i], pending |= skip && !t->gave_up[i];
        pthread_mutex_unlock(&d->lock);
        if (skip) continue;
        double t0 = swin_clock_seconds();
        swin_status st = dest->kind == NODE_DEST_STOWRS ? node_stow(dest, cfg->timeout_s, files, n, &err)
                                                        : node_send(dest, cfg->ae, cfg->timeout_s, files, n, &err);
        if (!st && !(st = jobs_mark_sent(d->spool, job, dest->name, &err))) {
            node_log_event("delivered", job + 17,
                           "\"job\": \"%s\", \"destination\": \"%s\", \"files\": %d, \"seconds\": %.3f, "
                           "\"seconds_since_queued\": %.3f",
                           job, dest->name, n, swin_clock_seconds() - t0, seconds_since_queued(job));
            pthread_mutex_lock(&d->lock);
            if ((t = find(d, job))) t->sent[i] = true;
            pthread_mutex_unlock(&d->lock);
            continue;
        }
        pthread_mutex_lock(&d->lock);
        if (!(t = find(d, job))) t = add_try(d, job);
        int tries = t ? ++t->tries[i] : cfg->attempts;
        if (t) {
            t->next[i] = swin_clock_seconds() + fmin(cfg->first_delay_s * pow(2, tries - 1), cfg->max_delay_s);
            if (tries >= cfg->attempts) {
                t->gave_up[i] = true;
                snprintf(t->reason[i], sizeof t->reason[i], "%s", err.msg);
            }
        }
        pthread_mutex_unlock(&d->lock);
        log_attempt(job, dest->name, tries, cfg, err.msg);
        if (!t) { /* no memory to count its tries: given up now, as after its last */
            struct delivery_try alone = {0};
            alone.tries[i] = 1, alone.gave_up[i] = true;
            snprintf(alone.reason[i], sizeof alone.reason[i], "%s", err.msg);
            give_up(d, job, &alone);
            return;
        }
        failed |= tries >= cfg->attempts, pending |= tries < cfg->attempts;
    }
    if (pending) return;
    if (failed) {
        pthread_mutex_lock(&d->lock);
        struct delivery_try copy = *find(d, job);
        forget(d, job);
        pthread_mutex_unlock(&d->lock);
        give_up(d, job, &copy);
        return;
    }
    char record[256];
    snprintf(record, sizeof record, "{\"job\": \"%s\", \"delivered_to\": %d, \"files\": %d}\n", job, cfg->ndests, n);
    if (jobs_done(d->spool, "outbox", job, record, &err)) log_attempt(job, "-", 0, cfg, err.msg);
    else
        node_log_event("done", job + 17, "\"job\": \"%s\", \"seconds_since_queued\": %.3f", job,
                       seconds_since_queued(job));
    pthread_mutex_lock(&d->lock);
    forget(d, job);
    pthread_mutex_unlock(&d->lock);
}

static void *run(void *arg)
{
    struct node_deliver *d = arg;
    pthread_mutex_lock(&d->lock);
    while (!d->stopping) {
        char job[SPOOL_JOB_LEN + 1];
        if (jobs_next(d->spool, "outbox", job, waiting, d)) {
            pthread_mutex_unlock(&d->lock);
            deliver_job(d, job);
            pthread_mutex_lock(&d->lock);
            continue;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 200000000;
        if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
        pthread_cond_timedwait(&d->wake, &d->lock, &ts);
    }
    pthread_mutex_unlock(&d->lock);
    return NULL;
}

swin_status node_deliver_start(struct node_deliver *d, const struct node_config *cfg, struct node_spool *spool,
                               swin_error *err)
{
    memset(d, 0, sizeof *d);
    d->cfg = cfg, d->spool = spool;
    pthread_mutex_init(&d->lock, NULL);
    pthread_cond_init(&d->wake, NULL);
    int e = pthread_create(&d->thread, NULL, run, d);
    if (e) return swin_error_set(err, SWIN_ERR_IO, "cannot start the delivery thread: %s", strerror(e));
    d->started = true;
    return SWIN_OK;
}

void node_deliver_wake(void *arg)
{
    struct node_deliver *d = arg;
    pthread_mutex_lock(&d->lock);
    pthread_cond_broadcast(&d->wake);
    pthread_mutex_unlock(&d->lock);
}

void node_deliver_stop(struct node_deliver *d)
{
    if (!d->started) return;
    pthread_mutex_lock(&d->lock);
    d->stopping = true;
    pthread_cond_broadcast(&d->wake);
    pthread_mutex_unlock(&d->lock);
    pthread_join(d->thread, NULL);
    free(d->tries);
    pthread_mutex_destroy(&d->lock);
    pthread_cond_destroy(&d->wake);
    d->started = false;
}
