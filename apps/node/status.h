/* SPOOL/status.json, rewritten whole every second while the node runs (and once as it
 * stops): its state, associations, the studies arriving, queued, being segmented, waiting for
 * delivery, delivered (records in done/) and failed (dead letters), the spool's bytes and the
 * disk's free bytes. `swinrun serve CONFIG --status` prints it. */
#ifndef SWIN_NODE_STATUS_H
#define SWIN_NODE_STATUS_H

#include <stdio.h>

#include "apps/node/spool.h"

struct node_counts {
    const char *state; /* "running", "draining", "stopped" */
    int associations, in_flight;
};

void node_status_write(struct node_spool *s, const struct node_counts *c);
/* Prints the status file of the node whose spool is spool_dir; adds whether its process is
 * alive. Returns the exit code: 0, or 1 when there is no status file. */
int node_status_print(const char *spool_dir, FILE *out);

#endif
