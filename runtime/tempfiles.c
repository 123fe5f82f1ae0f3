#include "runtime/tempfiles.h"

#include <signal.h>
#include <stddef.h>
#include <unistd.h>

#define SLOTS 32
static const char *volatile slots[SLOTS];

int swin_tempfile_remember(const char *path)
{
    for (int i = 0; i < SLOTS; i++)
        if (!slots[i]) {
            slots[i] = path;
            return 1;
        }
    return 0;
}

void swin_tempfile_forget(const char *path)
{
    for (int i = 0; i < SLOTS; i++)
        if (slots[i] == path) slots[i] = NULL;
}

void swin_tempfile_remove_all(void)
{
    for (int i = 0; i < SLOTS; i++) {
        const char *p = slots[i];
        if (p) unlink(p);
    }
}
