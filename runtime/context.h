/* A context on a backend the caller opened: swin_context_create is swin_backend_open
 * (runtime/backend.h) and this; a test opens a backend of its own by name
 * (swin_backend_open_named) and makes a context on it the same way. */
#ifndef SWIN_CONTEXT_H
#define SWIN_CONTEXT_H

#include "runtime/backend.h"
#include "runtime/api.h"

/* swin_context_create for the cube `cube` (valid for m) on b, opened plan-only for m and p:
 * plans once, checks p->mem_limit, and only then starts b and allocates the arena. Takes b
 * over (closed on failure; *b is left closed either way). */
swin_status swin_context_create_on(const swin_model_t *m, const swin_context_params *p, const int cube[3],
                                   struct swin_backend_ctx *b, swin_context_t **out, swin_error *err);

#endif
