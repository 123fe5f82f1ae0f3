/* The node's folder, which is also its journal: where a study is says what has been done with
 * it, and every move between these folders is one durable rename (durable.h).
 *
 *   tmp/                 an instance being written; never acknowledged; emptied at start
 *   incoming/KEY/UID.dcm the acknowledged instances of a study still arriving
 *   queue/JOB/           a complete study (no instance for stable_age_s), to be segmented
 *   outbox/.JOB.tmp/     outputs being written; removed at start
 *   outbox/JOB/          outputs to deliver (seg.dcm, rtstruct.dcm, report.json) and one
 *                        sent-DEST marker per destination that acknowledged every file
 *   done/JOB.json        delivered (or nothing to deliver): the record
 *   dead/JOB/            could not be segmented or delivered: what there was and reason.txt
 *   status.json          the node's counts (status.h)
 *
 * KEY is the first 32 hex digits of SHA-256 of the StudyInstanceUID (of the SeriesInstanceUID
 * when the study's is blank): no identifier appears in a name. JOB is 16 hex digits of a
 * sequence (the wall clock in ns at completion, increasing) then '-' and KEY, so that jobs
 * sort in arrival order. Everything is mode 0700 / 0600. */
#ifndef SWIN_NODE_SPOOL_H
#define SWIN_NODE_SPOOL_H

#ifdef __cplusplus
extern "C" { /* core/status.h declares C functions without saying so */
#endif

#include <limits.h>
#include <pthread.h>
#include <stdint.h>

#include "apps/node/node_config.h"
#include "core/status.h"

#define SPOOL_KEY_LEN 32
#define SPOOL_JOB_LEN (16 + 1 + SPOOL_KEY_LEN)

struct spool_study { /* a study still arriving */
    char key[SPOOL_KEY_LEN + 1];
    double first, last; /* swin_clock_seconds of its first and last instance (here: since start) */
    int instances;
};

struct node_spool {
    char root[PATH_MAX];
    const struct node_config *cfg;
    pthread_mutex_t lock; /* the incoming table, the counters, and every move out of incoming/ */
    struct spool_study *studies;
    int nstudies, cap;
    int queued;    /* folders in queue/ */
    uint64_t used; /* bytes under root at the last rescan, plus those received since */
    uint64_t last_seq;
    unsigned long tmp_counter;
};

/* Creates the folders (0700), finishes or undoes what a crash interrupted (see above), reads
 * the studies still arriving (their stable age counts from now) and the bytes used. */
swin_status spool_open(struct node_spool *s, const struct node_config *cfg, swin_error *err);
void spool_close(struct node_spool *s);

/* root/rel into out; false when it does not fit. */
int spool_path(const struct node_spool *s, char *out, size_t size, const char *rel);

/* The study's KEY (see above). */
void spool_key(const char *study_uid, const char *series_uid, char key[SPOOL_KEY_LEN + 1]);

/* Receiving. NULL when an instance of `bytes` for the study may be kept; else why not (the
 * C-STORE is then answered Out of Resources): instances per study, studies queued, the
 * spool's quota, the disk's free space. */
const char *spool_admit(struct node_spool *s, const char *key, uint64_t bytes, char *why, size_t size);
/* A new name in tmp/ for an instance being written. */
void spool_tmp_name(struct node_spool *s, char *out, size_t size);
/* The written and fsynced tmp file becomes incoming/KEY/SOP.dcm (replacing an instance sent
 * again); durable when this returns SWIN_OK. */
swin_status spool_commit(struct node_spool *s, const char *key, const char *tmp, const char *sop_uid, uint64_t bytes,
                         swin_error *err);

/* Each study with nothing new for stable_age_s moves to queue/JOB; done(user, study, job) for
 * each (the lock is not held then). */
void spool_promote(struct node_spool *s, double now,
                   void (*done)(void *user, const struct spool_study *st, const char *job), void *user);
/* The bytes used, counted again. */
void spool_rescan(struct node_spool *s);

#ifdef __cplusplus
}
#endif

#endif
