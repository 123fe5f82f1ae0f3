/* HTTP(S) downloads for swinrun fetch, through libcurl: redirects followed (at most
 * FETCH_HTTP_MAX_REDIRECTS), TLS peer and host verified, HTTP errors refused with their
 * status, a connection timeout and a stall timeout, cancellation from a signal handler. */
#ifndef SWIN_CLI_FETCH_HTTP_H
#define SWIN_CLI_FETCH_HTTP_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/status.h"

#define FETCH_HTTP_MAX_REDIRECTS 8

struct fetch_http {
    long timeout_s;                /* connecting, and the longest stall of a transfer */
    bool allow_http;               /* plain http:// too (a --from server); else https only */
    volatile sig_atomic_t *cancel; /* nonzero: stop the transfer (SWIN_ERR_CANCELLED) */
};

/* Starts and ends libcurl's global state (once per process). */
swin_status fetch_http_init(swin_error *err);
void fetch_http_cleanup(void);

/* GETs url into a malloc'ed buffer (*data, *len; NUL-terminated), refusing more than max bytes.
 * *status (when not NULL): the last HTTP status, 0 when none came. */
swin_status fetch_http_get(const struct fetch_http *h, const char *url, size_t max, char **data, size_t *len,
                           long *status, swin_error *err);

/* GETs url into the file part_path, resuming from its current size with a Range request
 * (a server that answers the whole file instead restarts it from byte 0; one that answers
 * 416 gets the file again from byte 0). Progress on stderr under `label`. The file is kept
 * on failure, for the next try to resume. */
swin_status fetch_http_get_resumable(const struct fetch_http *h, const char *url, const char *part_path,
                                     const char *label, swin_error *err);

#endif
