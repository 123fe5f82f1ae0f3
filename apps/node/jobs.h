/* A complete study's way through the journal (spool.h) after it is queued, each step one
 * durable rename or file so that a crash leaves it either before or after the step:
 *
 *   queue/JOB --segmented--> outbox/JOB --sent to each destination--> done/JOB.json
 *       |                        |
 *       +-- nothing to send -----+--> done/JOB.json
 *       +-- refused -------------+--> dead/JOB (with reason.txt)
 *
 * The outputs' UIDs are derived from the study's series and the model
 * (swin_segment_params.dicom_uid_seed), so a step done twice after a crash (segmenting
 * again, or sending again before the sent-DEST marker was written) gives the receiver the
 * same instances again: it replaces, it does not add. */
#ifndef SWIN_NODE_JOBS_H
#define SWIN_NODE_JOBS_H

#include <stddef.h>

#include "apps/node/spool.h"

/* The oldest job in dir ("queue" or "outbox") for which skip(user, job) is false (skip may
 * be NULL); 0 when there is none. */
int jobs_next(struct node_spool *s, const char *dir, char job[SPOOL_JOB_LEN + 1],
              int (*skip)(void *user, const char *job), void *user);
/* Jobs (folders, not .tmp) in dir, and records in done/. */
int jobs_count(struct node_spool *s, const char *dir);

/* Where a job's outputs are written before jobs_segmented: outbox/.JOB.tmp (made empty). */
swin_status jobs_outputs_dir(struct node_spool *s, const char *job, char *out, size_t size, swin_error *err);
/* The outputs in outbox/.JOB.tmp made durable and renamed outbox/JOB; queue/JOB removed. */
swin_status jobs_segmented(struct node_spool *s, const char *job, swin_error *err);
/* from/JOB ("queue" or "outbox") is finished: done/JOB.json holds record (a JSON object), then
 * from/JOB is removed. */
swin_status jobs_done(struct node_spool *s, const char *from, const char *job, const char *record, swin_error *err);
/* from/JOB goes to dead/JOB with reason.txt (one line). */
swin_status jobs_dead(struct node_spool *s, const char *from, const char *job, const char *reason, swin_error *err);
/* outbox/JOB/sent-DEST: every output reached that destination. */
swin_status jobs_mark_sent(struct node_spool *s, const char *job, const char *dest, swin_error *err);
int jobs_was_sent(struct node_spool *s, const char *job, const char *dest);

#endif
