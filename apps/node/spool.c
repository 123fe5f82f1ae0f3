/* The node's folder and journal (spool.h): layout, recovery at start, the receiving side. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "apps/node/durable.h"
#include "apps/node/node_log.h"
#include "apps/node/spool.h"
#include "core/clock.h"
#include "core/sha256.h"

static const char *const folders[] = {"tmp", "incoming", "queue", "outbox", "done", "dead"};

int spool_path(const struct node_spool *s, char *out, size_t size, const char *rel)
{
    return node_path(out, size, "%s/%s", s->root, rel) == 0;
}

void spool_key(const char *study_uid, const char *series_uid, char key[SPOOL_KEY_LEN + 1])
{
    char hex[65], buf[160];
    if (study_uid[0]) snprintf(buf, sizeof buf, "study:%s", study_uid);
    else snprintf(buf, sizeof buf, "series:%s", series_uid);
    swin_sha256_hex(buf, strlen(buf), hex);
    memcpy(key, hex, SPOOL_KEY_LEN);
    key[SPOOL_KEY_LEN] = 0;
}

static int exists(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0;
}

/* Removes every entry of root/dir for which drop(name) holds. */
static swin_status sweep(struct node_spool *s, const char *dir, int (*drop)(struct node_spool *, const char *),
                         swin_error *err)
{
    char path[PATH_MAX];
    spool_path(s, path, sizeof path, dir);
    DIR *d = opendir(path);
    if (!d) return swin_error_set(err, SWIN_ERR_IO, "%s: %s", path, strerror(errno));
    swin_status st = SWIN_OK;
    for (struct dirent *e; !st && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !drop(s, e->d_name)) continue;
        char p[PATH_MAX];
        node_path(p, sizeof p, "%s/%s", path, e->d_name);
        struct stat sb;
        if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode)) st = durable_remove_tree(p, err);
        else if (unlink(p) != 0 && errno != ENOENT)
            st = swin_error_set(err, SWIN_ERR_IO, "%s: cannot remove it: %s", p, strerror(errno));
    }
    closedir(d);
    return st;
}

static int any(struct node_spool *s, const char *name)
{
    return 1;
}

/* A queued study already segmented (its outputs, record or dead letter exist): the crash came
 * between writing them and removing it. */
static int queued_done(struct node_spool *s, const char *job)
{
    char a[PATH_MAX], b[PATH_MAX], c[PATH_MAX];
    node_path(a, sizeof a, "%s/outbox/%s", s->root, job);
    node_path(b, sizeof b, "%s/done/%s.json", s->root, job);
    node_path(c, sizeof c, "%s/dead/%s", s->root, job);
    return exists(a) || exists(b) || exists(c);
}

/* Outputs half written (.JOB.tmp), or delivered (their record exists). */
static int outbox_stale(struct node_spool *s, const char *name)
{
    if (name[0] == '.') return 1;
    char b[PATH_MAX];
    node_path(b, sizeof b, "%s/done/%s.json", s->root, name);
    return exists(b);
}

/* A record's temporary (done/JOB.json.tmp): the job is still in outbox/ or queue/. */
static int record_tmp(struct node_spool *s, const char *name)
{
    size_t n = strlen(name);
    return n > 4 && !strcmp(name + n - 4, ".tmp");
}

static swin_status add_study(struct node_spool *s, const char *key, double now)
{
    if (s->nstudies == s->cap) {
        int cap = s->cap ? 2 * s->cap : 64;
        struct spool_study *p = realloc(s->studies, (size_t)cap * sizeof *p);
        if (!p) return SWIN_ERR_NOMEM;
        s->studies = p, s->cap = cap;
    }
    struct spool_study *st = &s->studies[s->nstudies++];
    memset(st, 0, sizeof *st);
    snprintf(st->key, sizeof st->key, "%s", key);
    st->first = st->last = now;
    return SWIN_OK;
}

static struct spool_study *find_study(struct node_spool *s, const char *key)
{
    for (int i = 0; i < s->nstudies; i++)
        if (!strcmp(s->studies[i].key, key)) return &s->studies[i];
    return NULL;
}

/* The studies in incoming/ (their stable age starts now) and the jobs in queue/. */
static swin_status read_tables(struct node_spool *s, swin_error *err)
{
    char path[PATH_MAX];
    spool_path(s, path, sizeof path, "incoming");
    DIR *d = opendir(path);
    if (!d) return swin_error_set(err, SWIN_ERR_IO, "%s: %s", path, strerror(errno));
    double now = swin_clock_seconds();
    swin_status st = SWIN_OK;
    for (struct dirent *e; !st && (e = readdir(d));) {
        if (strlen(e->d_name) != SPOOL_KEY_LEN) continue;
        char p[PATH_MAX];
        node_path(p, sizeof p, "%s/%s", path, e->d_name);
        if ((st = add_study(s, e->d_name, now))) st = swin_error_set(err, st, "out of host memory");
        else s->studies[s->nstudies - 1].instances = durable_count_files(p);
    }
    closedir(d);
    d = NULL;
    spool_path(s, path, sizeof path, "queue");
    if (!st && !(d = opendir(path))) st = swin_error_set(err, SWIN_ERR_IO, "%s: %s", path, strerror(errno));
    for (struct dirent *e; !st && (e = readdir(d));) s->queued += e->d_name[0] != '.';
    if (d) closedir(d);
    return st;
}

swin_status spool_open(struct node_spool *s, const struct node_config *cfg, swin_error *err)
{
    memset(s, 0, sizeof *s);
    s->cfg = cfg;
    if (snprintf(s->root, sizeof s->root, "%s", cfg->spool) >= (int)sizeof s->root - 64)
        return swin_error_set(err, SWIN_ERR_ARG, "spool %s: path too long", cfg->spool);
    pthread_mutex_init(&s->lock, NULL);
    swin_status st = durable_mkdir(s->root, err);
    for (size_t i = 0; i < sizeof folders / sizeof *folders && !st; i++) {
        char p[PATH_MAX];
        spool_path(s, p, sizeof p, folders[i]);
        st = durable_mkdir(p, err);
    }
    /* the journal replayed: each step a crash interrupted is finished or undone */
    if (!st) st = sweep(s, "tmp", any, err);
    if (!st) st = sweep(s, "queue", queued_done, err);
    if (!st) st = sweep(s, "outbox", outbox_stale, err);
    if (!st) st = sweep(s, "done", record_tmp, err);
    if (!st) st = read_tables(s, err);
    if (!st) spool_rescan(s);
    if (st) spool_close(s);
    return st;
}

void spool_close(struct node_spool *s)
{
    free(s->studies);
    s->studies = NULL;
    s->nstudies = s->cap = 0;
    pthread_mutex_destroy(&s->lock);
}

void spool_rescan(struct node_spool *s)
{
    uint64_t b = durable_tree_bytes(s->root);
    pthread_mutex_lock(&s->lock);
    s->used = b;
    pthread_mutex_unlock(&s->lock);
}

const char *spool_admit(struct node_spool *s, const char *key, uint64_t bytes, char *why, size_t size)
{
    const struct node_config *c = s->cfg;
    why[0] = 0;
    pthread_mutex_lock(&s->lock);
    const struct spool_study *st = find_study(s, key);
    if (st && st->instances >= c->instances_per_study)
        snprintf(why, size, "the study has %d instances, the limit (limits.instances_per_study)", st->instances);
    else if (!st && s->queued + s->nstudies >= c->queued_studies)
        snprintf(why, size, "%d studies queued or arriving, the limit (limits.queued_studies)",
                 s->queued + s->nstudies);
    else if (c->spool_bytes && s->used + bytes > c->spool_bytes)
        snprintf(why, size, "the spool holds %llu bytes; %llu more would pass its quota of %zu (limits.spool_bytes)",
                 (unsigned long long)s->used, (unsigned long long)bytes, c->spool_bytes);
    pthread_mutex_unlock(&s->lock);
    struct statvfs fs;
    if (!why[0] && statvfs(s->root, &fs) == 0 && (uint64_t)fs.f_bavail * fs.f_frsize < 2 * bytes + (1u << 20))
        snprintf(why, size, "the disk holding the spool has %llu bytes free",
                 (unsigned long long)fs.f_bavail * fs.f_frsize);
    return why[0] ? why : NULL;
}

void spool_tmp_name(struct node_spool *s, char *out, size_t size)
{
    pthread_mutex_lock(&s->lock);
    unsigned long n = ++s->tmp_counter;
    pthread_mutex_unlock(&s->lock);
    node_path(out, size, "%s/tmp/%ld-%lu.dcm", s->root, (long)getpid(), n);
}

swin_status spool_commit(struct node_spool *s, const char *key, const char *tmp, const char *sop_uid, uint64_t bytes,
                         swin_error *err)
{
    char dir[PATH_MAX], dest[PATH_MAX];
    node_path(dir, sizeof dir, "%s/incoming/%s", s->root, key);
    if (node_path(dest, sizeof dest, "%s/%s.dcm", dir, sop_uid) >= (int)sizeof dest)
        return swin_error_set(err, SWIN_ERR_ARG, "SOP instance UID too long");
    pthread_mutex_lock(&s->lock);
    struct spool_study *st = find_study(s, key);
    swin_status r = SWIN_OK;
    if (!st) {
        r = durable_mkdir(dir, err);
        if (!r && (r = add_study(s, key, swin_clock_seconds()))) r = swin_error_set(err, r, "out of host memory");
        if (!r) st = &s->studies[s->nstudies - 1];
    }
    int again = st && exists(dest); /* the same instance sent again replaces the first */
    if (!r) r = durable_rename(tmp, dest, err);
    if (!r) {
        st->last = swin_clock_seconds();
        st->instances += !again;
        s->used += bytes;
    }
    pthread_mutex_unlock(&s->lock);
    return r;
}

/* Increasing and unique: the wall clock in ns, or one more than the last. */
static uint64_t next_seq(struct node_spool *s)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t v = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    s->last_seq = v > s->last_seq ? v : s->last_seq + 1;
    return s->last_seq;
}

void spool_promote(struct node_spool *s, double now,
                   void (*done)(void *user, const struct spool_study *st, const char *job), void *user)
{
    for (;;) {
        struct spool_study moved;
        char job[SPOOL_JOB_LEN + 1] = "";
        pthread_mutex_lock(&s->lock);
        for (int i = 0; i < s->nstudies && !job[0]; i++) {
            struct spool_study *st = &s->studies[i];
            if (now - st->last < s->cfg->stable_age_s) continue;
            snprintf(job, sizeof job, "%016llx-%s", (unsigned long long)next_seq(s), st->key);
            char from[PATH_MAX], to[PATH_MAX];
            node_path(from, sizeof from, "%s/incoming/%s", s->root, st->key);
            node_path(to, sizeof to, "%s/queue/%s", s->root, job);
            swin_error err;
            if (durable_rename(from, to, &err)) {
                char msg[600];
                node_log_event("error", st->key, "\"message\": %s", node_log_str(err.msg, msg, sizeof msg));
                job[0] = 0;
                st->last = now; /* tried again after stable_age_s */
                continue;
            }
            moved = *st;
            s->studies[i] = s->studies[--s->nstudies];
            s->queued++;
        }
        pthread_mutex_unlock(&s->lock);
        if (!job[0]) return;
        done(user, &moved, job);
    }
}
