/* One convolution as forward() runs it: the op with a workspace taken from the plan for
 * the call and given back after it. Shared by the CNN blocks (forward_cnn.c), the in-place
 * width changes (inplace.c) and forward() itself. */
#ifndef SWIN_CONV_CALL_H
#define SWIN_CONV_CALL_H

#include "runtime/exec.h"

/* out = conv3d(in) with a planned workspace; stats != NULL: the buffer that receives the
 * statistics of out for the instance norm that follows (kernels/ops.h, conv3d). */
void swin_fwd_conv(struct swin_exec *e, struct swin_vol out, const struct swin_workspace *stats, struct swin_vol in,
                   const float *w, const float *bias, int k, int stride, int pad);

#endif
