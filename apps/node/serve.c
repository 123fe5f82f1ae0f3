/* swinrun serve: the node's threads and its life: checked start, listening, draining on
 * SIGTERM. Threads: the main one listens (scp.h); a signal thread; a scheduler that moves
 * complete studies to the queue and writes the status every second; the workers
 * (process.h); the delivery thread (deliver.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "apps/node/deliver.h"
#include "apps/node/node_config.h"
#include "apps/node/node_log.h"
#include "apps/node/process.h"
#include "apps/node/scp.h"
#include "apps/node/secret.h"
#include "apps/node/serve.h"
#include "apps/node/spool.h"
#include "apps/node/status.h"
#include "apps/node/stow.h"
#include "apps/node/tls.h"
#include "apps/node/tls_trust.h"
#include "core/settings.h"
#include "core/clock.h"
#include "pipeline/swinrun.h"

static void usage(FILE *f)
{
    fprintf(f, "Usage:\n"
               "swinrun serve CONFIG.json [--check | --status]\n"
               "    a DICOM node: a Storage SCP that takes CT studies by C-STORE from the callers CONFIG\n"
               "    allows, segments each study once nothing new arrived for stable_age_s, and sends the\n"
               "    DICOM SEG and RT Structure Set to its destinations by C-STORE. Every instance is on disk\n"
               "    before its C-STORE is answered; after a crash or kill -9 the node resumes where it was.\n"
               "    SIGTERM (or SIGINT): no new association, the running segmentations and deliveries\n"
               "    finish, then exit 0; a second one stops the segmentations (they stay queued).\n"
               "    CONFIG is one JSON file (docs/node.md lists its keys).\n"
               "\nOptions:\n"
               "  --check                 read CONFIG, load the model and plan every worker's context\n"
               "                          (limits included), say what the model is, then exit: 0 when\n"
               "                          the node would start\n"
               "  --status                print the running node's status (SPOOL/status.json) and exit\n"
               "  --help, -h              this text\n"
               "\nExit status: 0 stopped cleanly (or checked), 1 a failure while running, 2 a bad\n"
               "configuration, model or port.\n");
}

struct node {
    struct node_config cfg;
    struct node_spool spool;
    struct node_proc proc;
    struct node_deliver deliver;
    pthread_mutex_t lock;
    pthread_cond_t tick;
    const char *state;
    int signals;
};

static void queued(void *user, const struct spool_study *st, const char *job)
{
    struct node *n = user;
    node_log_event("received", st->key, "\"instances\": %d, \"seconds_arriving\": %.3f", st->instances,
                   st->last - st->first);
    node_log_event("queued", st->key, "\"job\": \"%s\", \"queued\": %d", job, n->spool.queued);
    node_proc_wake(&n->proc);
}

static void counts(struct node *n, struct node_counts *c)
{
    pthread_mutex_lock(&n->lock);
    c->state = n->state;
    pthread_mutex_unlock(&n->lock);
    c->associations = node_scp_associations();
    c->in_flight = node_proc_in_flight(&n->proc);
}

/* Every 200 ms: studies complete to the queue; every second: the status; every 10 s the
 * spool's bytes counted again. */
static void *scheduler(void *arg)
{
    struct node *n = arg;
    double last_status = 0, last_scan = swin_clock_seconds();
    pthread_mutex_lock(&n->lock);
    while (strcmp(n->state, "stopped")) {
        bool running = !strcmp(n->state, "running");
        pthread_mutex_unlock(&n->lock);
        double now = swin_clock_seconds();
        if (running) spool_promote(&n->spool, now, queued, n);
        if (now - last_scan >= 10) spool_rescan(&n->spool), last_scan = now;
        if (now - last_status >= 1) {
            struct node_counts c;
            counts(n, &c);
            node_status_write(&n->spool, &c);
            last_status = now;
        }
        pthread_mutex_lock(&n->lock);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 200000000;
        if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
        pthread_cond_timedwait(&n->tick, &n->lock, &ts);
    }
    pthread_mutex_unlock(&n->lock);
    return NULL;
}

/* SIGTERM / SIGINT through a pipe (a handler, not a signal mask: libraries such as OpenBLAS
 * start threads of their own before main, with every signal open): the first drains, the
 * second cancels the segmentations running. */
static int signal_pipe[2] = {-1, -1};

static void on_signal(int sig)
{
    unsigned char b = (unsigned char)sig;
    ssize_t w = write(signal_pipe[1], &b, 1); /* async-signal-safe */
    (void)w;
}

static void *signals(void *arg)
{
    struct node *n = arg;
    for (;;) {
        unsigned char sig;
        ssize_t r = read(signal_pipe[0], &sig, 1);
        if (r < 0 && errno == EINTR) continue;
        if (r != 1) return NULL;
        pthread_mutex_lock(&n->lock);
        int count = ++n->signals;
        if (!strcmp(n->state, "running")) n->state = "draining";
        pthread_mutex_unlock(&n->lock);
        node_log_event(count == 1 ? "draining" : "cancelling", NULL, "\"signal\": \"%s\"",
                       sig == SIGTERM ? "SIGTERM" : "SIGINT");
        node_scp_stop();
        if (count > 1) node_proc_cancel();
    }
}

/* --check and the start share this: config, spool, model, contexts. */
static int open_node(struct node *n, const char *config, swin_error *err)
{
    swin_status st = node_config_load(config, &n->cfg, err);
    if (!st) st = node_dcmtk_init(err);
    if (!st && n->cfg.tls.on) st = node_tls_check(&n->cfg.tls, true, config, "tls", err);
    bool stow = false;
    for (int i = 0; i < n->cfg.ndests; i++) stow |= n->cfg.dests[i].kind == NODE_DEST_STOWRS;
    if (!st && stow) st = node_stow_init(err);
    for (int i = 0; !st && i < n->cfg.ndests; i++) {
        const struct node_dest *d = &n->cfg.dests[i];
        char key[40];
        snprintf(key, sizeof key, "destinations[%d].tls", i);
        if (d->tls.on) st = node_tls_check(&d->tls, false, config, key, err);
        const char *secret_file = d->token_file[0]   ? d->token_file
                                  : d->oauth.on       ? d->oauth.client_secret_file
                                                      : d->password_file;
        if (!st && secret_file[0]) {
            char what[4200], secret[NODE_SECRET_MAX];
            snprintf(what, sizeof what, "%s: destinations[%d].%s", config, i,
                     d->token_file[0] ? "token_file" : d->oauth.on ? "oauth.client_secret_file" : "password_file");
            st = node_secret_read(secret_file, what, secret, sizeof secret, err);
            node_secret_wipe(secret, sizeof secret);
        }
    }
    if (!st) st = node_log_open(n->cfg.log, err);
    if (!st) st = spool_open(&n->spool, &n->cfg, err);
    if (st) return st;
    if ((st = node_proc_open(&n->proc, &n->cfg, &n->spool, err))) spool_close(&n->spool);
    return st;
}

int node_serve_main(int argc, char **argv)
{
    swin_set_vocabulary(SWIN_VOCAB_NODE);
    const char *config = NULL;
    bool check = false, status = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--check")) check = true;
        else if (!strcmp(argv[i], "--status")) status = true;
        else if (argv[i][0] == '-' || config) {
            fprintf(stderr, "swinrun serve: unexpected argument '%s' (try swinrun serve --help)\n", argv[i]);
            return 2;
        } else config = argv[i];
    }
    if (!config) {
        fprintf(stderr, "swinrun serve: expected CONFIG.json (try swinrun serve --help)\n");
        return 2;
    }
    static struct node n;
    swin_error err = {0};
    if (status) {
        if (node_config_load(config, &n.cfg, &err)) {
            fprintf(stderr, "swinrun serve: %s\n", err.msg);
            return 2;
        }
        return node_status_print(n.cfg.spool, stdout);
    }
    signal(SIGPIPE, SIG_IGN); /* a peer gone mid-write is an error of that association only */
    umask(077);               /* what the node writes is the service user's alone */
    if (open_node(&n, config, &err)) {
        fprintf(stderr, "swinrun serve: %s\n", err.msg);
        return 2;
    }
    if (check) {
        swin_model_info mi;
        swin_model_get_info(n.proc.model, &mi);
        char norm[32];
        if (mi.norm_groups) snprintf(norm, sizeof norm, "group norm (%d groups)", mi.norm_groups);
        else snprintf(norm, sizeof norm, "%s", mi.batch_norm ? "batch norm" : "instance norm");
        printf("swinrun serve: %s: ready (AE %s, port %d, %d worker(s), %d destination(s))\n", config, n.cfg.ae,
               n.cfg.port, n.cfg.workers, n.cfg.ndests);
        printf("model: %d -> %d channels, feature size %d, %s, %s, normalize %s\n", mi.in_channels, mi.out_channels,
               mi.feature_size, norm, mi.downsample, mi.normalize ? "true" : "false");
        char crl[200];
        node_tls_crl_describe(&n.cfg.tls, crl, sizeof crl);
        if (crl[0]) printf("tls.crl: %s\n", crl);
        for (int i = 0; i < n.cfg.ndests; i++) {
            node_tls_crl_describe(&n.cfg.dests[i].tls, crl, sizeof crl);
            if (crl[0]) printf("destinations[%d].tls.crl: %s\n", i, crl);
        }
        node_proc_stop(&n.proc);
        spool_close(&n.spool);
        return 0;
    }
    pthread_mutex_init(&n.lock, NULL);
    pthread_cond_init(&n.tick, NULL);
    struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    if (pipe2(signal_pipe, O_CLOEXEC) != 0) {
        fprintf(stderr, "swinrun serve: cannot make a pipe: %s\n", strerror(errno));
        return 1;
    }
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    n.state = "running";
    n.proc.segmented = node_deliver_wake;
    n.proc.user = &n.deliver;
    pthread_t sig_thread, sched_thread;
    swin_status st = node_deliver_start(&n.deliver, &n.cfg, &n.spool, &err);
    if (!st) st = node_proc_start(&n.proc, &err);
    if (!st && (errno = pthread_create(&sig_thread, NULL, signals, &n)))
        st = swin_error_set(&err, SWIN_ERR_IO, "cannot start a thread: %s", strerror(errno));
    if (!st && (errno = pthread_create(&sched_thread, NULL, scheduler, &n)))
        st = swin_error_set(&err, SWIN_ERR_IO, "cannot start a thread: %s", strerror(errno));
    if (!st) {
        node_log_event("started", NULL, "\"ae_title\": \"%s\", \"port\": %d, \"workers\": %d, \"queued\": %d", n.cfg.ae,
                       n.cfg.port, n.cfg.workers, n.spool.queued);
        st = node_scp_run(&n.cfg, &n.spool, &err);
    }
    int rc = 0;
    if (st) {
        fprintf(stderr, "swinrun serve: %s\n", err.msg);
        char m[600];
        node_log_event("error", NULL, "\"message\": %s", node_log_str(err.msg, m, sizeof m));
        rc = st == SWIN_ERR_IO ? 2 : 1;
    }
    /* drained: no association; the running jobs finish, nothing new starts */
    pthread_mutex_lock(&n.lock);
    n.state = "draining";
    pthread_mutex_unlock(&n.lock);
    node_proc_stop(&n.proc);
    node_deliver_stop(&n.deliver);
    pthread_mutex_lock(&n.lock);
    n.state = "stopped";
    pthread_cond_broadcast(&n.tick);
    pthread_mutex_unlock(&n.lock);
    if (!st) pthread_join(sched_thread, NULL);
    struct node_counts c = {.state = "stopped"};
    node_status_write(&n.spool, &c);
    node_log_event("stopped", NULL, "\"exit\": %d", rc);
    spool_close(&n.spool);
    node_log_close();
    return rc;
}
