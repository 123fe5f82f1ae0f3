/* The op boundary: every op of a backend's table (kernels/ops.h), called through a check of
 * its arguments that is written once for every backend.
 *
 * swin_op_X(ops, be, args...) validates what the contract of X in kernels/ops.h promises
 * (volumes present, of the backend's act_dtype, positive dims, pitch >= c; the shape
 * relations between outputs and inputs; required weights; kernel, stride, padding and
 * window geometry in range; a workspace of at least what X_ws asks for), records the
 * first violation with ops->set_error (so that ops->last_error names it) and returns its
 * status; otherwise it returns what ops->X returns. The table entries themselves assume
 * valid arguments and only compute; what only one backend can know (a weight outside the
 * uploaded model, a device error) it still reports itself. */
#ifndef SWIN_OP_CHECK_H
#define SWIN_OP_CHECK_H

#include "core/status.h"
#include "kernels/ops.h"

int swin_op_pack_input(const struct swin_ops *o, void *be, struct swin_vol out, const float *host_cdhw);
int swin_op_unpack_output(const struct swin_ops *o, void *be, float *host_cdhw, struct swin_vol in);
int swin_op_copy(const struct swin_ops *o, void *be, struct swin_vol out, struct swin_vol in);
int swin_op_conv3d(const struct swin_ops *o, void *be, struct swin_vol out, void *stats, struct swin_vol in,
                   const float *w, const float *bias, int k, int stride, int pad, void *ws, size_t ws_bytes);
int swin_op_conv3d_normed_input(const struct swin_ops *o, void *be, struct swin_vol out, void *stats,
                                struct swin_vol in, const void *in_stats, const float *gamma, const float *beta,
                                const float *w, const float *bias, void *ws, size_t ws_bytes);
int swin_op_conv_transpose2(const struct swin_ops *o, void *be, struct swin_vol out, struct swin_vol in,
                            const float *w);
int swin_op_instnorm_act(const struct swin_ops *o, void *be, struct swin_vol x, const void *stats, bool normalize,
                         const float *gamma, const float *beta, const struct swin_residual *residual, bool lrelu);
int swin_op_groupnorm_act(const struct swin_ops *o, void *be, struct swin_vol x, const void *stats, int groups,
                          const float *gamma, const float *beta, const struct swin_residual *residual, bool lrelu);
int swin_op_instnorm_act_narrow_shortcut(const struct swin_ops *o, void *be, struct swin_vol x, const void *stats,
                                        const float *gamma, const float *beta, struct swin_vol src, const float *w,
                                        const float *res_gamma, const float *res_beta);
int swin_op_instnorm_act_conv1x1(const struct swin_ops *o, void *be, struct swin_vol out, struct swin_vol x,
                                 const void *stats, bool normalize, const float *gamma, const float *beta,
                                 const struct swin_residual *residual, bool lrelu, const float *w, const float *bias);
int swin_op_layernorm(const struct swin_ops *o, void *be, struct swin_vol out, struct swin_vol in,
                      const float *gamma, const float *beta);
int swin_op_swin_attention(const struct swin_ops *o, void *be, struct swin_vol x, const struct swin_block_w *blk,
                           const struct swin_window_geom *g, void *ws, size_t ws_bytes);
int swin_op_swin_mlp(const struct swin_ops *o, void *be, struct swin_vol x, const struct swin_block_w *blk,
                     int hidden, void *ws, size_t ws_bytes);
int swin_op_patch_merge(const struct swin_ops *o, void *be, struct swin_vol out, struct swin_vol in,
                        const swin_merge_order order, const float *norm_w, const float *norm_b,
                        const float *red_w, void *ws, size_t ws_bytes);
/* The ring ops also refuse a backend without them (the CPU's: it blends on the host). */
int swin_op_ring_start(const struct swin_ops *o, void *be, void *ring, const struct swin_ring_geom *g,
                       const float *importance);
int swin_op_ring_add(const struct swin_ops *o, void *be, void *ring, const struct swin_ring_geom *g,
                     struct swin_vol logits, const int64_t start[3]);
int swin_op_ring_finish(const struct swin_ops *o, void *be, void *ring, const struct swin_ring_geom *g,
                        int64_t plane, int64_t row_lo, int64_t row_hi, void *labels, float *probs,
                        long long *nonfinite);

#endif
