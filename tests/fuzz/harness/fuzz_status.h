/* What every harness checks of a failure the library reports: its status in the error
 * record with a message naming the problem, on one line. */
#ifndef SWIN_FUZZ_STATUS_H
#define SWIN_FUZZ_STATUS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"

static inline void fuzz_check_error(swin_status st, const swin_error *err)
{
    if (st == SWIN_OK) return;
    if (err->status != st || !err->msg[0] || strchr(err->msg, '\n')) {
        fprintf(stderr, "fuzz harness: status %s came with the error record %s: '%s'\n", swin_status_name(st),
                swin_status_name(err->status), err->msg);
        abort();
    }
}

#endif
