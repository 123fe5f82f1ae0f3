#include "fileio/tempfiles.h"

#include <stdatomic.h>
#include <stddef.h>
#include <unistd.h>

/* Lock-free, so that threads writing outputs at the same time and the signal handler
 * reading the slots need no lock. */
#define SLOTS 32
static _Atomic(const char *) slots[SLOTS];

int swin_tempfile_remember(const char *path)
{
    for (int i = 0; i < SLOTS; i++) {
        const char *empty = NULL;
        if (atomic_compare_exchange_strong(&slots[i], &empty, path)) return 1;
    }
    return 0;
}

void swin_tempfile_forget(const char *path)
{
    for (int i = 0; i < SLOTS; i++) {
        const char *mine = path;
        atomic_compare_exchange_strong(&slots[i], &mine, NULL);
    }
}

void swin_tempfile_remove_all(void)
{
    for (int i = 0; i < SLOTS; i++) {
        const char *p = atomic_load(&slots[i]);
        if (p) unlink(p);
    }
}
