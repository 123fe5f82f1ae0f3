/* Delivery: one thread sends each job of the outbox (jobs.h), oldest first, to every
 * destination that has not yet acknowledged it (scu.h, stow.h), marking each as it succeeds.
 * The destinations of a job are independent: a failed one is tried again after first_delay_s,
 * doubled each time up to max_delay_s, and given up after `attempts` tries, while the others
 * are sent to; once every destination has acknowledged the job it is done, and once each has
 * acknowledged or been given up (one at least) it goes to the dead letters with each given-up
 * destination's last reason. The tries are counted in memory: after a restart every job of the
 * outbox is tried again from the first, at the destinations that have not acknowledged it. */
#ifndef SWIN_NODE_DELIVER_H
#define SWIN_NODE_DELIVER_H

#include <pthread.h>
#include <stdbool.h>

#include "apps/node/node_config.h"
#include "apps/node/spool.h"

#define DELIVERY_REASON_MAX 600

/* A job some destination has failed: per destination (the configuration's order). */
struct delivery_try {
    char job[SPOOL_JOB_LEN + 1];
    int tries[NODE_MAX_DESTS];   /* failed tries so far */
    double next[NODE_MAX_DESTS]; /* swin_clock_seconds of the next one */
    bool sent[NODE_MAX_DESTS], gave_up[NODE_MAX_DESTS];
    char reason[NODE_MAX_DESTS][DELIVERY_REASON_MAX]; /* a given-up destination's last failure */
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
