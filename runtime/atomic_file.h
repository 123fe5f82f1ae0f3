/* Output files written whole or not at all: data goes to a temporary file in the same
 * directory, which is renamed over the destination only after every byte was written. */
#ifndef SWIN_ATOMIC_FILE_H
#define SWIN_ATOMIC_FILE_H

#include <stdio.h>

#include "runtime/status.h"

struct atomic_file {
    FILE *f;
    char tmp[4096];
    char dest[4096];
};

swin_status atomic_file_open(struct atomic_file *af, const char *path, swin_error *err);
/* Flushes, checks every write succeeded, fsyncs and renames; on any failure removes the
 * temporary file. */
swin_status atomic_file_commit(struct atomic_file *af, swin_error *err);
/* Checks, before any work is done, that the directory of `path` exists and is writable;
 * `what` names the output in the message (e.g. "label map"). */
swin_status atomic_file_check_dir(const char *path, const char *what, swin_error *err);
/* Removes the temporary file without touching the destination. */
void atomic_file_abort(struct atomic_file *af);

#endif
