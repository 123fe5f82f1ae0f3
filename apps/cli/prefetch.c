/* A batch's next volume prepared on a thread (prefetch.h). */
#include "apps/cli/prefetch.h"

#include <stdio.h>
#include <string.h>

static void *prepare(void *user)
{
    struct cli_prefetch *pf = user;
    pf->st = swin_segment_file_prepare(pf->ctx, pf->in, pf->out, &pf->params, &pf->prepared, &pf->rep, &pf->err);
    return NULL;
}

void cli_prefetch_start(struct cli_prefetch *pf, swin_context_t *ctx, const swin_segment_params *sp, const char *in,
                        const char *out, const char *probs, const char *preview)
{
    pf->ctx = ctx;
    pf->in = in;
    pf->params = *sp;
    pf->params.progress = NULL;
    snprintf(pf->out, sizeof pf->out, "%s", out);
    snprintf(pf->probs, sizeof pf->probs, "%s", probs ? probs : "");
    snprintf(pf->preview, sizeof pf->preview, "%s", preview ? preview : "");
    pf->params.probabilities_path = probs ? pf->probs : NULL;
    pf->params.preview_path = preview ? pf->preview : NULL;
    pf->prepared = NULL;
    memset(&pf->err, 0, sizeof pf->err);
    pf->running = pthread_create(&pf->thread, NULL, prepare, pf) == 0;
    if (!pf->running) prepare(pf);
}

void cli_prefetch_wait(struct cli_prefetch *pf)
{
    if (pf->running) pthread_join(pf->thread, NULL);
    pf->running = false;
}
