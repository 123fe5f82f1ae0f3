#include "runtime/conv_call.h"

void swin_fwd_conv(struct swin_exec *e, struct swin_vol out, const struct swin_workspace *stats, struct swin_vol in,
                   const float *w, const float *bias, int k, int stride, int pad)
{
    struct swin_workspace ws;
    if (!swin_exec_workspace(e, &ws, e->ops->conv3d_ws(e->be, out, in, w, k, stride, pad, stats != NULL), "conv3d workspace"))
        return;
    EXEC_OP(e, conv3d, out, stats ? stats->data : NULL, in, w, bias, k, stride, pad, ws.data, ws.bytes);
    swin_exec_release(e, ws.id);
}
