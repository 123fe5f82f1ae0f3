/* forward(): one Swin UNETR window, written once against the op table (docs/forward.md §1).
 * Runs in plan mode (declares every activation and workspace to the planner) or in run
 * mode (computes) depending on `e`; see runtime/exec.h. */
#ifndef SWIN_FORWARD_H
#define SWIN_FORWARD_H

#include "runtime/exec.h"
#include "core/model.h"

/* host_in: float32 (Ci, D, H, W); host_out: float32 (Co, D, H, W), or NULL when e->ring
 * takes the logits; cube = (D, H, W), each a multiple of 32. Both host pointers may be NULL
 * in plan mode. */
swin_status swin_forward(struct swin_exec *e, const struct swin_model *m, const int cube[3],
                         const float *host_in, float *host_out);

/* The effective window, shift and padded grid of block `block` of stage `stage` on a stage
 * grid L (docs/forward.md §3.1: an axis with L <= window uses window L and no shift). */
void swin_block_geometry(const struct swin_config *c, int stage, int block, const int L[3],
                         struct swin_window_geom *g);

#endif
