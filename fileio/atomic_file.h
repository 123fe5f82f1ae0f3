/* Output files written whole or not at all: data goes to a temporary file in the same
 * directory, which is renamed over the destination only after every byte was written.
 * The temporary file is registered with tempfiles.h from open until it is renamed or
 * removed, so a struct swin_atomic_file must not move in memory meanwhile.
 *
 * Several outputs that belong together are finished one by one (swin_atomic_file_finish) and
 * published together at the end (swin_atomic_file_publish), so that a failure on the last
 * leaves none of them. */
#ifndef SWIN_ATOMIC_FILE_H
#define SWIN_ATOMIC_FILE_H

#include <stdio.h>

#include "core/status.h"

struct swin_atomic_file {
    FILE *f;            /* open for writing until finished */
    char tmp[4096];     /* "" once renamed or removed */
    char dest[4096];
    int remembered;     /* tmp is registered with tempfiles.h */
};

swin_status swin_atomic_file_open(struct swin_atomic_file *af, const char *path, swin_error *err);
/* Flushes, checks every write succeeded, fsyncs and closes; the file keeps its temporary
 * name. On failure removes it. */
swin_status swin_atomic_file_finish(struct swin_atomic_file *af, swin_error *err);
/* Renames a finished file over the destination; on failure removes it. */
swin_status swin_atomic_file_publish(struct swin_atomic_file *af, swin_error *err);
/* swin_atomic_file_finish, then swin_atomic_file_publish. */
swin_status swin_atomic_file_commit(struct swin_atomic_file *af, swin_error *err);
/* SWIN_ERR_IO with the message for a write to af that failed with errno e (a full disk
 * or a file size limit says so); removes nothing. */
swin_status swin_atomic_file_write_failed(const struct swin_atomic_file *af, int e, swin_error *err);
/* Removes the temporary file (finished or not) without touching the destination. */
void swin_atomic_file_abort(struct swin_atomic_file *af);
/* Checks, before any work is done, that the directory of `path` exists and is writable;
 * `what` names the output in the message (e.g. "label map"). */
swin_status swin_atomic_file_check_dir(const char *path, const char *what, swin_error *err);

#endif
