/* The CNN pieces of forward(): convolutions with planned workspaces and MONAI's
 * UnetResBlock (docs/forward.md §2). */
#ifndef SWIN_FORWARD_CNN_H
#define SWIN_FORWARD_CNN_H

#include "core/model.h"
#include "runtime/exec.h"

/* UnetResBlock(in -> w->cout) at in's resolution.
 * in_id: the planner id of `in` when the block may release it after its last read (the
 *        caller gives up the input), or -1 to leave it alive; a whole input given up that
 *        is wider than the output and has conv3 (a decoder's concat) is overwritten in place
 *        by the residual, so its bytes must not be read afterwards;
 * dest != NULL: the block's last two ops write the result straight into *dest (e.g. one half
 *               of a decoder concat; no copy) and the returned tensor has id -1 and dest's
 *               view;
 * dest == NULL: the result is a new tensor the caller releases. */
struct swin_activation swin_fwd_resblock(struct swin_exec *e, struct swin_vol in, int in_id, const struct swin_resblock_w *w,
                           const struct swin_vol *dest, const char *name);

/* The model's last residual block followed by its 1x1x1 output conv (head_w (1,1,1,w->cout,
 * head_cout) as conv3d's, head_b NULL or head_cout floats): the logits, a new tensor the caller
 * releases (id -1 after a failure, recorded in e). in and in_id as swin_fwd_resblock's. Where
 * the backend has instnorm_act_conv1x1 and the block takes the decoders' order (its concat
 * given up), the block's last norm and the conv run as that one op and the block's output map
 * is never normalised in place nor read again; otherwise swin_fwd_resblock, then conv3d k 1. */
struct swin_activation swin_fwd_resblock_head(struct swin_exec *e, struct swin_vol in, int in_id,
                                              const struct swin_resblock_w *w, const float *head_w,
                                              const float *head_b, int head_cout, const char *name);

#endif
