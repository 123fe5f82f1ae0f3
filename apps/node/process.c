/* The node's workers (process.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apps/node/durable.h"
#include "apps/node/jobs.h"
#include "apps/node/node_log.h"
#include "apps/node/process.h"
#include "core/clock.h"
#include "core/sha256.h"

static volatile sig_atomic_t cancel_all; /* node_proc_cancel: polled between cubes */

static bool cancelled(void *user)
{
    return cancel_all;
}

/* The digest of a file, or of every regular file of a folder (names and contents, in name
 * order, recursively): what identifies the model in the outputs' UIDs. */
static void digest_path(struct swin_sha256 *h, const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0) return;
    if (S_ISREG(sb.st_mode)) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        static char buf[1 << 16];
        for (ssize_t n; fd >= 0 && (n = read(fd, buf, sizeof buf)) > 0;) swin_sha256_update(h, buf, (size_t)n);
        if (fd >= 0) close(fd);
        return;
    }
    struct dirent **names;
    int n = S_ISDIR(sb.st_mode) ? scandir(path, &names, NULL, alphasort) : -1;
    for (int i = 0; i < n; i++) {
        if (names[i]->d_name[0] != '.') {
            char p[PATH_MAX];
            node_path(p, sizeof p, "%s/%s", path, names[i]->d_name);
            swin_sha256_update(h, names[i]->d_name, strlen(names[i]->d_name) + 1);
            digest_path(h, p);
        }
        free(names[i]);
    }
    if (n >= 0) free(names);
}

/* The model's digest, and the load options when any is not the default (they change the
 * outputs, so they must change the outputs' UIDs). */
static void model_seed(const char *path, const swin_model_load_params *load, char *out, size_t size)
{
    struct swin_sha256 h;
    unsigned char d[32];
    swin_sha256_init(&h);
    digest_path(&h, path);
    if (load->merge_order || load->no_normalize || load->norm_groups) {
        char opts[96];
        int n = snprintf(opts, sizeof opts, "merge_order %d normalize %d norm_groups %d", (int)load->merge_order,
                         !load->no_normalize, load->norm_groups);
        swin_sha256_update(&h, opts, (size_t)n + 1);
    }
    swin_sha256_final(&h, d);
    int n = snprintf(out, size, "swinrun-node model ");
    for (int i = 0; i < 16 && n + 2 < (int)size; i++) n += snprintf(out + n, size - (size_t)n, "%02x", d[i]);
}

swin_status node_proc_open(struct node_proc *p, const struct node_config *cfg, struct node_spool *spool,
                           swin_error *err)
{
    memset(p, 0, sizeof *p);
    p->cfg = cfg, p->spool = spool;
    swin_status st = swin_model_load_ex(cfg->model, &cfg->load, &p->model, err);
    if (st) return st;
    swin_model_info mi;
    swin_model_get_info(p->model, &mi);
    if (!cfg->cube[0] && !mi.cube[0]) {
        swin_model_free(p->model);
        p->model = NULL;
        return swin_error_set(err, SWIN_ERR_ARG,
                              "%s: the model does not say which cube it runs on (a checkpoint, or an export with "
                              "dynamic axes): set \"cube\": [D, H, W] in the configuration (multiples of 32; "
                              "MONAI's Swin UNETR recipes use [96, 96, 96])",
                              cfg->model);
    }
    swin_context_params cp = swin_context_default_params();
    static const swin_backend backends[] = {SWIN_BACKEND_AUTO, SWIN_BACKEND_CPU, SWIN_BACKEND_CUDA};
    static const swin_precision precisions[] = {SWIN_PRECISION_FP32, SWIN_PRECISION_FP16, SWIN_PRECISION_BF16};
    cp.backend = backends[cfg->backend];
    cp.precision = precisions[cfg->precision];
    cp.threads = cfg->threads;
    memcpy(cp.cube, cfg->cube, sizeof cp.cube);
    cp.mem_limit = cfg->mem_limit / (size_t)cfg->workers; /* every context's plan within its share */
    for (int i = 0; i < cfg->workers && !st; i++) st = swin_context_create(p->model, &cp, &p->ctx[i], err);
    swin_plan_info plan;
    swin_error plan_err;
    cp.mem_limit = 0;
    if (st == SWIN_ERR_MEM_LIMIT && !swin_model_plan(p->model, &cp, &plan, &plan_err)) /* in the node's own terms */
        swin_error_set(err, SWIN_ERR_MEM_LIMIT,
                       "mem_limit %.1f MiB gives each of the %d worker(s) %.1f MiB, and a context at cube %dx%dx%d "
                       "needs %.1f MiB (weights %.1f + arena %.1f + scratch %.1f): raise mem_limit to at least %.1f "
                       "MiB, or run fewer workers or a smaller cube",
                       cfg->mem_limit / 1048576.0, cfg->workers, cfg->mem_limit / (double)cfg->workers / 1048576.0,
                       plan.cube[0], plan.cube[1], plan.cube[2], plan.total_bytes / 1048576.0,
                       plan.weight_bytes / 1048576.0, plan.arena_bytes / 1048576.0, plan.context_bytes / 1048576.0,
                       plan.total_bytes * (double)cfg->workers / 1048576.0);
    if (st) {
        for (int i = 0; i < cfg->workers; i++) swin_context_free(p->ctx[i]);
        swin_model_free(p->model);
        p->model = NULL;
        return st;
    }
    p->base = swin_model_segment_params(p->model);
    if (cfg->seg == NODE_SEG_LABELMAP && swin_mask_channels(p->base.activation, mi.out_channels)) {
        for (int i = 0; i < cfg->workers; i++) swin_context_free(p->ctx[i]);
        swin_model_free(p->model);
        p->model = NULL;
        return swin_error_set(err, SWIN_ERR_ARG,
                              "%s: a multi-label model (its masks overlap), and outputs.seg \"labelmap\" holds one "
                              "segment per pixel: set outputs.seg to \"binary\"",
                              cfg->model);
    }
    model_seed(cfg->model, &cfg->load, p->seed, sizeof p->seed);
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    return SWIN_OK;
}

/* {"job": ..., "result": ..., the report's numbers} */
static void report_json(const char *job, const swin_segment_report *r, double seconds, char *out, size_t size)
{
    int n = snprintf(out, size,
                     "{\"job\": \"%s\", \"labels_present\": %d, \"dicom_written\": %s, \"seconds\": %.3f,\n"
                     " \"input_dim\": [%lld, %lld, %lld], \"slices\": %d, \"planes_filled\": %d, "
                     "\"tilt_degrees\": %.4g, \"series_found\": %d, \"skipped\": %d, \"statistics\": [",
                     job, r->labels_present, r->dicom_written ? "true" : "false", seconds, r->input_dim[0],
                     r->input_dim[1], r->input_dim[2], r->dicom_slices, r->dicom_planes_filled, r->dicom_tilt_deg,
                     r->dicom_series_found, r->dicom_skipped);
    for (int i = 0; i < r->nstats && n < (int)size - 160; i++) {
        const swin_label_stats *x = &r->stats[i];
        n += snprintf(
            out + n, size - (size_t)n,
            "%s\n  {\"label\": %d, \"voxels\": %lld, \"volume_ml\": %.6g, \"hu_mean\": %.6g, \"hu_std\": %.6g}",
            i ? "," : "", x->label, x->voxels, x->volume_ml, x->hu_mean, x->hu_std);
    }
    snprintf(out + n, size - (size_t)n, "]}\n");
}

static void log_failed(const char *job, const char *stage, const char *reason)
{
    char scrub[1100], s[1300];
    node_log_event("failed", job + 17, "\"job\": \"%s\", \"stage\": \"%s\", \"reason\": %s", job, stage,
                   node_log_str(node_log_scrub(reason, scrub, sizeof scrub), s, sizeof s));
}

/* A job's folder names its study by KEY only: the series is hashed in the log too. */
static void hashed(const char *uid, char out[17])
{
    char hex[65];
    swin_sha256_hex(uid, strlen(uid), hex);
    memcpy(out, hex, 16);
    out[16] = 0;
}

static void run_job(struct node_proc *p, int w, const char *job)
{
    const struct node_config *cfg = p->cfg;
    char in[PATH_MAX], dir[PATH_MAX], seg[PATH_MAX + 16], rt[PATH_MAX + 16], rep_path[PATH_MAX + 16];
    swin_error err = {0};
    node_path(in, sizeof in, "%s/queue/%s", p->spool->root, job);
    swin_status st = jobs_outputs_dir(p->spool, job, dir, sizeof dir, &err);
    node_path(seg, sizeof seg, "%s/%s", dir, cfg->seg == NODE_SEG_NONE ? "labels.nii.gz" : "seg.dcm");
    node_path(rt, sizeof rt, "%s/rtstruct.dcm", dir);
    node_path(rep_path, sizeof rep_path, "%s/report.json", dir);
    swin_segment_params sp = p->base;
    sp.rtstruct_path = cfg->rtstruct ? rt : NULL;
    sp.seg_type = cfg->seg == NODE_SEG_LABELMAP ? SWIN_SEG_LABELMAP : SWIN_SEG_BINARY;
    sp.dicom_uid_seed = p->seed;
    sp.cancel = cancelled;
    swin_segment_report rep;
    memset(&rep, 0, sizeof rep);
    double t0 = swin_clock_seconds();
    const char *input = in;
    if (!st) st = swin_segment_dicom(p->ctx[w], &input, 1, seg, &sp, &rep, &err);
    double seconds = swin_clock_seconds() - t0;
    if (st == SWIN_ERR_CANCELLED) return; /* stays queued */
    if (st) {
        swin_error e2;
        if (jobs_dead(p->spool, "queue", job, err.msg, &e2)) log_failed(job, "dead-letter", e2.msg);
        log_failed(job, "segmentation", err.msg);
        return;
    }
    char report[16384], series[17];
    report_json(job, &rep, seconds, report, sizeof report);
    hashed(rep.dicom_series_uid, series);
    if (cfg->report && (st = durable_write(rep_path, report, strlen(report), &err))) {
        log_failed(job, "report", err.msg);
        return; /* segmented again after a restart, or when the disk has room */
    }
    node_log_event("segmented", job + 17,
                   "\"job\": \"%s\", \"series\": \"%s\", \"slices\": %lld, \"labels_present\": %d, \"seconds\": %.3f",
                   job, series, (long long)rep.dicom_slices, rep.labels_present, seconds);
    if (rep.dicom_written) st = jobs_segmented(p->spool, job, &err);
    else {
        /* no organ on the slices: no SEG, no RT Structure Set, nothing to deliver */
        st = durable_remove_tree(dir, &err);
        if (!st) st = jobs_done(p->spool, "queue", job, report, &err);
        if (!st)
            node_log_event("done", job + 17, "\"job\": \"%s\", \"result\": \"%s: nothing to send\"", job,
                           rep.labels_present ? "organs only on planes interpolated between the slices"
                                              : "no organ found");
    }
    if (st) log_failed(job, "outbox", err.msg);
    else if (rep.dicom_written && p->segmented) p->segmented(p->user);
}

static int taken(void *user, const char *job)
{
    struct node_proc *p = user;
    for (int i = 0; i < p->cfg->workers; i++)
        if (!strcmp(p->busy[i], job)) return 1;
    return 0;
}

struct worker_arg {
    struct node_proc *p;
    int w;
};

static void *worker(void *arg)
{
    struct node_proc *p = ((struct worker_arg *)arg)->p;
    int w = ((struct worker_arg *)arg)->w;
    free(arg);
    pthread_mutex_lock(&p->lock);
    while (!p->stopping) {
        char job[SPOOL_JOB_LEN + 1];
        if (jobs_next(p->spool, "queue", job, taken, p)) {
            snprintf(p->busy[w], sizeof p->busy[w], "%s", job);
            pthread_mutex_unlock(&p->lock);
            run_job(p, w, job);
            pthread_mutex_lock(&p->lock);
            p->busy[w][0] = 0;
            continue;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        pthread_cond_timedwait(&p->wake, &p->lock, &ts);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

swin_status node_proc_start(struct node_proc *p, swin_error *err)
{
    for (int i = 0; i < p->cfg->workers; i++) {
        struct worker_arg *a = malloc(sizeof *a);
        if (!a) return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
        *a = (struct worker_arg){p, i};
        int e = pthread_create(&p->threads[i], NULL, worker, a);
        if (e) {
            free(a);
            return swin_error_set(err, SWIN_ERR_IO, "cannot start a worker thread: %s", strerror(e));
        }
        p->started++;
    }
    return SWIN_OK;
}

void node_proc_wake(struct node_proc *p)
{
    pthread_mutex_lock(&p->lock);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
}

int node_proc_in_flight(struct node_proc *p)
{
    int n = 0;
    pthread_mutex_lock(&p->lock);
    for (int i = 0; i < p->cfg->workers; i++) n += p->busy[i][0] != 0;
    pthread_mutex_unlock(&p->lock);
    return n;
}

void node_proc_cancel(void)
{
    cancel_all = 1;
}

void node_proc_stop(struct node_proc *p)
{
    if (!p->model) return;
    pthread_mutex_lock(&p->lock);
    p->stopping = true;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->started; i++) pthread_join(p->threads[i], NULL);
    for (int i = 0; i < p->cfg->workers; i++) swin_context_free(p->ctx[i]);
    swin_model_free(p->model);
    p->model = NULL;
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->wake);
}
