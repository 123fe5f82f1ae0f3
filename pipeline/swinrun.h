/* swinrun: run a MONAI Swin UNETR ONNX export in a fixed, known memory footprint.
 *
 * The one header a program includes (installed as <swinrun.h>). The declarations live with the
 * layer that defines them: runtime/api.h (models, plans, contexts, the forward pass),
 * pipeline/segment_params.h and pipeline/segment_api.h (segmenting a volume, a NIfTI file or a
 * DICOM series), and core/ the statuses and the types they share.
 *
 * Basic usage:
 *
 *     swin_error err;
 *     swin_model_t *model;
 *     if (swin_model_load("model.onnx", &model, &err)) { report(err.msg); return; }
 *     swin_context_params p = swin_context_default_params();   // auto backend, export cube
 *     swin_context_t *ctx;
 *     if (swin_context_create(model, &p, &ctx, &err)) { ... }  // plans, allocates once
 *     swin_plan_info plan;
 *     swin_context_plan(ctx, &plan);                              // exact bytes in use
 *     swin_context_run(ctx, input, logits, &err);                 // (Ci,D,H,W) -> (Co,D,H,W)
 *     swin_context_free(ctx);
 *     swin_model_free(model);
 *
 * Every function returns SWIN_OK (0) or a status, with a message in *err that says what
 * was wrong and what to do; nothing here prints, exits or aborts.
 * Thread safety: a model is immutable after loading and may be shared by contexts in
 * several threads; a context is used by one thread at a time.
 */
#ifndef SWINRUN_H
#define SWINRUN_H

#include "core/status.h"
#include "core/settings.h"
#include "core/version.h"
#include "runtime/api.h"
#include "pipeline/segment_params.h"
#include "pipeline/segment_api.h"

#endif
