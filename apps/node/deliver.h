/* Delivery: one thread sends each job of the outbox (jobs.h), oldest first, to every
 * destination that has not yet acknowledged it (scu.h), marking each as it succeeds; a failed
 * destination is tried again after first_delay_s, doubled each time up to max_delay_s, and
 * after `attempts` tries the job goes to the dead letters with the last reason. The tries are
 * counted in memory: after a restart every job of the outbox is tried again from the first. */
#ifndef SWIN_NODE_DELIVER_H
#define SWIN_NODE_DELIVER_H

#include <pthread.h>
#include <stdbool.h>

#include "apps/node/node_config.h"
#include "apps/node/spool.h"

struct delivery_try {
    char job[SPOOL_JOB_LEN + 1];
    int tries;   /* failed tries so far */
    double next; /* swin_clock_seconds of the next one */
};

struct node_deliver {
    const struct node_config *cfg;
    struct node_spool *spool;
    pthread_t thread;
    bool started, stopping;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    struct delivery_try *tries;
    int ntries, cap;
};

swin_status node_deliver_start(struct node_deliver *d, const struct node_config *cfg, struct node_spool *spool,
                               swin_error *err);
/* A job reached the outbox. */
void node_deliver_wake(void *d);
/* Ends after the job being sent; what is left stays in the outbox. */
void node_deliver_stop(struct node_deliver *d);

#endif
