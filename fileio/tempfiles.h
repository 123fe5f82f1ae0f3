/* The temporary output files that exist right now, so that a signal handler can remove
 * them (SIGINT/SIGTERM during a run must leave no partial output behind). atomic_file.h
 * registers each of its temporary files here. */
#ifndef SWIN_TEMPFILES_H
#define SWIN_TEMPFILES_H

/* path must stay valid until swin_tempfile_forget; false when every slot is taken. */
int swin_tempfile_remember(const char *path);
void swin_tempfile_forget(const char *path);
/* Unlinks every remembered file; async-signal-safe (only unlink() and lock-free atomics).
 * Remember and forget may be called from several threads at once. */
void swin_tempfile_remove_all(void);

#endif
