/* The node's status file (status.h). */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "apps/node/durable.h"
#include "apps/node/jobs.h"
#include "apps/node/node_log.h"
#include "apps/node/status.h"

void node_status_write(struct node_spool *s, const struct node_counts *c)
{
    pthread_mutex_lock(&s->lock);
    int studies = s->nstudies, instances = 0;
    for (int i = 0; i < s->nstudies; i++) instances += s->studies[i].instances;
    unsigned long long used = (unsigned long long)s->used;
    int queued = s->queued;
    pthread_mutex_unlock(&s->lock);
    struct statvfs fs;
    unsigned long long free_bytes = statvfs(s->root, &fs) == 0 ? (unsigned long long)fs.f_bavail * fs.f_frsize : 0;
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    char text[1024];
    int n = snprintf(text, sizeof text,
                     "{\"pid\": %ld, \"state\": \"%s\", \"updated\": \"%s\", \"ae_title\": %s, \"port\": %d,\n"
                     " \"associations\": %d, \"arriving_studies\": %d, \"arriving_instances\": %d, \"queued\": %d,\n"
                     " \"in_flight\": %d, \"outbox\": %d, \"delivered\": %d, \"failed\": %d,\n"
                     " \"spool_bytes\": %llu, \"spool_quota_bytes\": %zu, \"disk_free_bytes\": %llu}\n",
                     (long)getpid(), c->state, when, node_log_str(s->cfg->ae, (char[40]){0}, 40), s->cfg->port,
                     c->associations, studies, instances, queued, c->in_flight, jobs_count(s, "outbox"),
                     jobs_count(s, "done"), jobs_count(s, "dead"), used, s->cfg->spool_bytes, free_bytes);
    char path[PATH_MAX];
    swin_error err;
    spool_path(s, path, sizeof path, "status.json");
    if (durable_write(path, text, (size_t)n, &err)) {
        char m[600];
        node_log_event("error", NULL, "\"message\": %s", node_log_str(err.msg, m, sizeof m));
    }
}

int node_status_print(const char *spool_dir, FILE *out)
{
    char path[PATH_MAX];
    node_path(path, sizeof path, "%s/status.json", spool_dir);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "swinrun serve: %s: %s (has the node run?)\n", path, strerror(errno));
        return 1;
    }
    char text[2048];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    const char *pid = strstr(text, "\"pid\": ");
    long p = pid ? strtol(pid + 7, NULL, 10) : 0;
    int alive = p > 0 && (kill((pid_t)p, 0) == 0 || errno == EPERM);
    fputs(text, out);
    fprintf(out, "process %ld: %s\n", p, alive ? "running" : "not running");
    return 0;
}
