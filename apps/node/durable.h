/* What makes a step of the node survive a power cut or kill -9 at any instant: a file or a
 * folder appears under its final name only whole (written under another name, fsynced,
 * renamed), and a rename counts only once the folders it touched are fsynced too (POSIX makes
 * rename atomic, not durable). */
#ifndef SWIN_NODE_DURABLE_H
#define SWIN_NODE_DURABLE_H

#ifdef __cplusplus
extern "C" { /* core/status.h declares C functions without saying so */
#endif

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

/* A path from fmt into out (size bytes): 0, or -1 when it does not fit (out is then cut). */
int node_path(char *out, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* fsync of a folder: the names in it made durable. */
swin_status durable_sync_dir(const char *dir, swin_error *err);
/* fsync of a file's contents. */
swin_status durable_sync_file(const char *path, swin_error *err);
/* rename(from, to), then fsync of both parent folders (one when they are the same). */
swin_status durable_rename(const char *from, const char *to, swin_error *err);
/* A folder (mode 0700) and its parent's fsync; an existing one is only made 0700. */
swin_status durable_mkdir(const char *dir, swin_error *err);
/* len bytes as the whole file at path: written to path.tmp, fsynced, renamed, the folder
 * fsynced. Mode 0600. */
swin_status durable_write(const char *path, const void *data, size_t len, swin_error *err);
/* Removes a folder and everything in it (no links followed), then fsyncs its parent. */
swin_status durable_remove_tree(const char *dir, swin_error *err);
/* Bytes of the regular files under dir, recursively (0 when it does not exist). */
uint64_t durable_tree_bytes(const char *dir);
/* Regular files directly in dir whose names do not start with '.'. */
int durable_count_files(const char *dir);

#ifdef __cplusplus
}
#endif

#endif
