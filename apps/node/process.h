/* The node's segmentation: the model loaded once, one context per worker (the memory limit
 * shared between them and checked when they are made, before anything is received), each
 * worker taking the oldest queued study (jobs.h), segmenting it as `swinrun STUDY_DIR/ seg.dcm
 * --rtstruct rtstruct.dcm --json` would (the series chosen as dicom-ls says) into its outbox,
 * or moving it to the dead letters with the reason. */
#ifndef SWIN_NODE_PROCESS_H
#define SWIN_NODE_PROCESS_H

#include <pthread.h>
#include <stdbool.h>

#include "apps/node/node_config.h"
#include "apps/node/spool.h"
#include "pipeline/swinrun.h"

struct node_proc {
    const struct node_config *cfg;
    struct node_spool *spool;
    swin_model_t *model;
    swin_context_t *ctx[NODE_MAX_WORKERS];
    swin_segment_params base; /* the model's recipe */
    char seed[80];            /* the outputs' UID seed: the model's digest */
    pthread_t threads[NODE_MAX_WORKERS];
    int started;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    char busy[NODE_MAX_WORKERS][SPOOL_JOB_LEN + 1]; /* the job each worker runs, "" when idle */
    bool stopping;
    void (*segmented)(void *user); /* a job reached the outbox */
    void *user;
};

/* Loads the model and makes the contexts (errors: one line, nothing left to free); no thread
 * yet. */
swin_status node_proc_open(struct node_proc *p, const struct node_config *cfg, struct node_spool *spool,
                           swin_error *err);
/* Starts the workers. */
swin_status node_proc_start(struct node_proc *p, swin_error *err);
/* A study was queued. */
void node_proc_wake(struct node_proc *p);
/* Jobs being segmented. */
int node_proc_in_flight(struct node_proc *p);
/* From any thread: the jobs running stop between cubes and stay queued. */
void node_proc_cancel(void);
/* No new job; waits for the ones running, then frees everything. */
void node_proc_stop(struct node_proc *p);

#endif
