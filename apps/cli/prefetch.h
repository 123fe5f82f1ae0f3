/* The next volume of a batch read and preprocessed on a thread of its own
 * (swin_segment_file_prepare) while the context runs the cubes of this one: with CUDA the
 * host has nothing else to do then. */
#ifndef SWIN_CLI_PREFETCH_H
#define SWIN_CLI_PREFETCH_H

#include <pthread.h>
#include <stdbool.h>

#include "pipeline/swinrun.h"

struct cli_prefetch {
    pthread_t thread;
    bool running;
    swin_context_t *ctx;
    swin_segment_params params; /* the batch's, without the progress callback, paths below */
    const char *in;
    char out[4096], probs[4096], preview[4096];
    /* the result */
    swin_segment_prepared *prepared;
    swin_segment_report rep;
    swin_error err;
    swin_status st;
};

/* Prepares `in` (outputs out, and probs / preview when not NULL) with sp on a new thread, or
 * on the caller's when none can start; wait collects it. */
void cli_prefetch_start(struct cli_prefetch *pf, swin_context_t *ctx, const swin_segment_params *sp, const char *in,
                        const char *out, const char *probs, const char *preview);
void cli_prefetch_wait(struct cli_prefetch *pf);

#endif
