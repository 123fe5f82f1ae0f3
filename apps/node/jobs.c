/* A queued study's steps through the journal (jobs.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apps/node/durable.h"
#include "apps/node/jobs.h"

static int is_job(const char *name)
{
    return strlen(name) == SPOOL_JOB_LEN && name[16] == '-';
}

int jobs_next(struct node_spool *s, const char *dir, char job[SPOOL_JOB_LEN + 1],
              int (*skip)(void *user, const char *job), void *user)
{
    char path[PATH_MAX];
    node_path(path, sizeof path, "%s/%s", s->root, dir);
    DIR *d = opendir(path);
    if (!d) return 0;
    job[0] = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (is_job(e->d_name) && (!job[0] || strcmp(e->d_name, job) < 0) && !(skip && skip(user, e->d_name)))
            snprintf(job, SPOOL_JOB_LEN + 1, "%s", e->d_name);
    closedir(d);
    return job[0] != 0;
}

int jobs_count(struct node_spool *s, const char *dir)
{
    char path[PATH_MAX];
    node_path(path, sizeof path, "%s/%s", s->root, dir);
    DIR *d = opendir(path);
    if (!d) return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        n += is_job(e->d_name) || (len == SPOOL_JOB_LEN + 5 && !strcmp(e->d_name + SPOOL_JOB_LEN, ".json"));
    }
    closedir(d);
    return n;
}

swin_status jobs_outputs_dir(struct node_spool *s, const char *job, char *out, size_t size, swin_error *err)
{
    node_path(out, size, "%s/outbox/.%s.tmp", s->root, job);
    swin_status st = durable_remove_tree(out, err);
    return st ? st : durable_mkdir(out, err);
}

static void left_queue(struct node_spool *s, const char *from)
{
    if (strcmp(from, "queue")) return;
    pthread_mutex_lock(&s->lock);
    s->queued--;
    pthread_mutex_unlock(&s->lock);
}

static swin_status remove_job(struct node_spool *s, const char *from, const char *job, swin_error *err)
{
    char path[PATH_MAX];
    node_path(path, sizeof path, "%s/%s/%s", s->root, from, job);
    swin_status st = durable_remove_tree(path, err);
    if (!st) left_queue(s, from);
    return st;
}

swin_status jobs_segmented(struct node_spool *s, const char *job, swin_error *err)
{
    char tmp[PATH_MAX], dest[PATH_MAX];
    node_path(tmp, sizeof tmp, "%s/outbox/.%s.tmp", s->root, job);
    node_path(dest, sizeof dest, "%s/outbox/%s", s->root, job);
    /* the outputs were fsynced when published; their names in the folder now */
    swin_status st = durable_sync_dir(tmp, err);
    if (!st) st = durable_rename(tmp, dest, err);
    if (!st) st = remove_job(s, "queue", job, err);
    return st;
}

swin_status jobs_done(struct node_spool *s, const char *from, const char *job, const char *record, swin_error *err)
{
    char path[PATH_MAX];
    node_path(path, sizeof path, "%s/done/%s.json", s->root, job);
    swin_status st = durable_write(path, record, strlen(record), err);
    return st ? st : remove_job(s, from, job, err);
}

swin_status jobs_dead(struct node_spool *s, const char *from, const char *job, const char *reason, swin_error *err)
{
    char path[PATH_MAX], line[4200], dest[PATH_MAX];
    node_path(path, sizeof path, "%s/%s/%s/reason.txt", s->root, from, job);
    int n = snprintf(line, sizeof line, "%s\n", reason);
    swin_status st = durable_write(path, line, (size_t)(n < (int)sizeof line ? n : (int)sizeof line - 1), err);
    node_path(path, sizeof path, "%s/%s/%s", s->root, from, job);
    node_path(dest, sizeof dest, "%s/dead/%s", s->root, job);
    if (!st) st = durable_rename(path, dest, err);
    if (!st) left_queue(s, from);
    return st;
}

swin_status jobs_mark_sent(struct node_spool *s, const char *job, const char *dest, swin_error *err)
{
    char path[PATH_MAX];
    node_path(path, sizeof path, "%s/outbox/%s/sent-%s", s->root, job, dest);
    return durable_write(path, "", 0, err);
}

int jobs_was_sent(struct node_spool *s, const char *job, const char *dest)
{
    char path[PATH_MAX];
    node_path(path, sizeof path, "%s/outbox/%s/sent-%s", s->root, job, dest);
    return access(path, F_OK) == 0;
}
