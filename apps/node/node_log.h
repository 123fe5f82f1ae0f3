/* The node's event log: one JSON object per line, each written with one write(2) to a file
 * opened O_APPEND (or stderr), so that lines of concurrent threads never interleave. No
 * patient identifier goes in: studies are named by their key (spool.h: SHA-256 of the
 * StudyInstanceUID), and messages that may quote UIDs pass through node_log_scrub. */
#ifndef SWIN_NODE_LOG_H
#define SWIN_NODE_LOG_H

#ifdef __cplusplus
extern "C" { /* core/status.h declares C functions without saying so */
#endif

#include <stddef.h>

#include "core/status.h"

/* path "-": stderr. */
swin_status node_log_open(const char *path, swin_error *err);
void node_log_close(void);

/* One line: {"time": "...Z", "event": EVENT, "study": STUDY (omitted when NULL), then fields}.
 * fields: NULL, or the rest of a JSON object's members, printf-formatted, e.g.
 * "\"instances\": %d". Strings placed in fields go through node_log_str. */
void node_log_event(const char *event, const char *study, const char *fields, ...)
    __attribute__((format(printf, 3, 4)));

/* s as a JSON string literal (quotes, escapes) in buf, cut to fit; returns buf. */
const char *node_log_str(const char *s, char *buf, size_t size);

/* s with every DICOM UID (a run of 10 or more digits and dots holding 3 dots or more) replaced
 * by "uid:" and the first 12 hex digits of its SHA-256; returns buf. */
const char *node_log_scrub(const char *s, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif
