/* The op table: every op forward() needs, one implementation set per backend.
 *
 * Layout: every activation is a channels-last volume of one batch item,
 *   element (z, y, x, ch) at data[((z*h + y)*w + x)*pitch + ch],  ch in [0, c), pitch >= c.
 * A pitch larger than c makes a view of a channel slice of a wider tensor, which is how
 * producers write straight into one half of a decoder concat. Elements are stored as
 * `dtype` (float32 everywhere except the CUDA backend's half mode, which stores binary16
 * and accumulates in float32); the backend's `act_dtype` says which it expects.
 *
 * Callers go through the op boundary (kernels/op_check.h: swin_op_conv3d(ops, be, ...)),
 * which checks the arguments against the contracts below once for every backend; the
 * entries of a table assume arguments that pass those checks and only compute.
 *
 * Conventions for every op:
 *   - outputs first, then inputs, then weights, then parameters, then the workspace;
 *   - returns 0 on success, a nonzero swin status (core/status.h) otherwise; never
 *     prints, exits or allocates; the backend's context `be` holds threads and its
 *     last error message;
 *   - `ws`/`ws_bytes` is scratch from the planned arena, at least what the matching
 *     *_ws query returned for the same shapes (the query is a pure function of them and
 *     of settings fixed when `be` was created, e.g. the CUDA backend's chunk budget);
 *   - weights are in the layouts documented in core/model.h;
 *   - an op may run in place only where its contract says so.
 */
#ifndef SWIN_OPS_H
#define SWIN_OPS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/model.h"
#include "core/ring_geom.h"
#include "core/vol.h"
#include "core/window_geom.h"

/* What instnorm_act adds before its activation: v as it is, or with normalize IN(v) (per
 * channel over all of v's voxels, biased variance, eps 1e-5), then * gamma + beta when gamma
 * != NULL: a shortcut conv's own instance norm, applied in the same pass. */
struct swin_residual {
    struct swin_vol v;
    bool normalize;
    const float *gamma, *beta;
};

/* The widest input instnorm_act_narrow_shortcut takes (its covariance, src.c^2 / 2 sums). */
#define SWIN_NARROW_SHORTCUT_MAX_CIN 8
/* The widest x and out instnorm_act_conv1x1 takes (a voxel's normalised channels and its
 * outputs stay in registers and one stack row; wider heads run as instnorm_act + conv3d). */
#define SWIN_NORM_CONV1X1_MAX_CIN 128
#define SWIN_NORM_CONV1X1_MAX_COUT 32

struct swin_ops {
    const char *name;
    /* The storage type of every volume this backend's ops take (swin_exec_activation sizes and
     * types activations with it). Weights and host buffers are always float32 on the
     * API side; a half backend converts them itself. */
    enum swin_dtype act_dtype;

    /* The message of the last failed op on this backend context ("" if none). */
    const char *(*last_error)(void *be);
    /* Records msg as the last error (the op boundary, kernels/op_check.h, reports the
     * argument checks it makes for every backend through it). */
    void (*set_error)(void *be, const char *msg);

    /* Host float32 input (Ci, D, H, W), channels-first as the user holds it, into the
     * channels-last volume `out` (c == Ci). */
    int (*pack_input)(void *be, struct swin_vol out, const float *host_cdhw);
    /* Channels-last `in` into host float32 (C, D, H, W). */
    int (*unpack_output)(void *be, float *host_cdhw, struct swin_vol in);

    /* out = in, element by element (same dims and channels; pitches may differ). No overlap. */
    int (*copy)(void *be, struct swin_vol out, struct swin_vol in);

    /* out = conv3d(in, w) + bias. Kernel k^3 (k = 1, 2 or 3), stride 1 or 2, zero padding pad.
     * out.c = cout, in.c = cin; out dims = (in dims + 2 pad - k)/stride + 1. bias may be NULL.
     * out must not overlap in.
     * stats: NULL, or conv3d_stats_bytes(out) bytes that receive, in the backend's own
     * layout, the per-channel instance-norm statistics of out as stored, for an
     * instnorm_act of out that follows before out changes (which then need not read out
     * for them). */
    int (*conv3d)(void *be, struct swin_vol out, void *stats, struct swin_vol in, const float *w,
                  const float *bias, int k, int stride, int pad, void *ws, size_t ws_bytes);
    /* The workspace of the call with these arguments (w: the weights it will get, whose
     * precision may pick the kernel); stats: whether the call passes stats. */
    size_t (*conv3d_ws)(void *be, struct swin_vol out, struct swin_vol in, const float *w, int k, int stride, int pad,
                        bool stats);
    /* Bytes of conv3d's stats for out; 0 when the backend computes the statistics in
     * instnorm_act anyway (stats must then stay NULL). */
    size_t (*conv3d_stats_bytes)(void *be, struct swin_vol out);

    /* Optional (NULL: the caller runs instnorm_act on in, then conv3d): the first half of a
     * residual block's second conv with the norm before it folded into the conv's reads,
     *   out = conv3d(LeakyReLU_0.01(IN(in) * gamma + beta), w) + bias,   k 3, stride 1, pad 1,
     * IN as instnorm_act's (gamma NULL: no affine), in_stats what conv3d kept for in (NULL:
     * none kept). in is left undefined (the backend may normalise it in place). stats: as
     * conv3d's, for out. Workspace: conv3d_ws of the same conv. */
    int (*conv3d_normed_input)(void *be, struct swin_vol out, void *stats, struct swin_vol in, const void *in_stats,
                               const float *gamma, const float *beta, const float *w, const float *bias, void *ws,
                               size_t ws_bytes);

    /* ConvTranspose3d, kernel 2, stride 2, no bias: out(2i+a, 2j+b, 2k+g, o) =
     * sum_c in(i,j,k,c) w[a][b][g][c][o]. out dims = 2 * in dims. No overlap. */
    int (*conv_transpose2)(void *be, struct swin_vol out, struct swin_vol in, const float *w);

    /* In place: x = IN(x) (per channel over all voxels, biased variance, eps 1e-5) when
     * normalize, then * gamma + beta when gamma != NULL, then + the residual (struct
     * swin_residual: as it is or instance-normalised) when residual != NULL, then
     * LeakyReLU(0.01) when lrelu. residual->v has x's dims and channels and does not overlap
     * x. Without normalize it is the epilogue of a convolution whose batch norm the exporter
     * folded into its bias. stats: NULL, or what conv3d left for x (normalize must be set);
     * the statistics then come from it instead of a read of x. */
    int (*instnorm_act)(void *be, struct swin_vol x, const void *stats, bool normalize, const float *gamma,
                        const float *beta, const struct swin_residual *residual, bool lrelu);
    /* Optional (NULL: the backend does not run group norm, norm_name='group'): instnorm_act with
     * normalize, each channel's mean and variance those of its group, groups groups of x.c /
     * groups consecutive channels (torch.nn.GroupNorm; groups divides x.c; groups == x.c is
     * instance norm); a residual with normalize is group-normalised the same way. stats as
     * instnorm_act's. */
    int (*groupnorm_act)(void *be, struct swin_vol x, const void *stats, int groups, const float *gamma,
                         const float *beta, const struct swin_residual *residual, bool lrelu);
    /* Optional (NULL: the caller runs the shortcut conv3d, k 1, into a map of its own and passes
     * it to instnorm_act as a normalised residual): the end of a residual block whose shortcut is
     * a 1x1 conv from an input of at most SWIN_NARROW_SHORTCUT_MAX_CIN channels, in place on x:
     *   x = LeakyReLU_0.01(IN(x) * gamma + beta + IN(conv1x1(src, w)) * res_gamma + res_beta),
     * IN as instnorm_act's (gamma or res_gamma NULL: no affine), stats as instnorm_act's for x,
     * w (1,1,1,src.c,x.c) as conv3d's. The conv's bias cancels in its norm and is not taken.
     * The instance norm of a 1x1 conv is itself a 1x1 conv, whose weights follow from src's
     * channel means and covariance, so the x.c-channel shortcut map is never stored. src has
     * x's dims (its own c and pitch) and does not overlap x. */
    int (*instnorm_act_narrow_shortcut)(void *be, struct swin_vol x, const void *stats, const float *gamma,
                                        const float *beta, struct swin_vol src, const float *w,
                                        const float *res_gamma, const float *res_beta);

    /* Optional (NULL: the caller runs instnorm_act in place on x, then conv3d with k 1): the end of
     * a residual block followed by a 1x1x1 conv (the output head), without writing x back:
     *   out = conv1x1(y, w) + bias,  y = instnorm_act's result for the same arguments,
     * w (1,1,1,x.c,out.c) as conv3d's, bias NULL or out.c floats; x.c at most
     * SWIN_NORM_CONV1X1_MAX_CIN, out.c at most SWIN_NORM_CONV1X1_MAX_COUT. x and the residual
     * are read only; out has x's dims and overlaps neither. */
    int (*instnorm_act_conv1x1)(void *be, struct swin_vol out, struct swin_vol x, const void *stats, bool normalize,
                                const float *gamma, const float *beta, const struct swin_residual *residual, bool lrelu,
                                const float *w, const float *bias);

    /* out = LN(in) over channels (biased variance, eps 1e-5), * gamma + beta when gamma != NULL.
     * out may be in itself (same data and pitch); otherwise no overlap. */
    int (*layernorm)(void *be, struct swin_vol out, struct swin_vol in, const float *gamma,
                     const float *beta);

    /* In place on the residual stream x (L1, L2, L3, C):
     * x += proj(WindowAttention(LN1(x))) with zero padding after LN1, cyclic shift, the
     * relative-position bias from the table and the shifted-window mask (forward spec
     * 3.4.1-3.4.4; padded tokens take part as keys). */
    int (*swin_attention)(void *be, struct swin_vol x, const struct swin_block_w *blk,
                          const struct swin_window_geom *g, void *ws, size_t ws_bytes);
    size_t (*swin_attention_ws)(void *be, struct swin_vol x, const struct swin_window_geom *g);

    /* In place: x += fc2(GELU_erf(fc1(LN2(x)))), hidden width `hidden`. */
    int (*swin_mlp)(void *be, struct swin_vol x, const struct swin_block_w *blk, int hidden,
                    void *ws, size_t ws_bytes);
    size_t (*swin_mlp_ws)(void *be, struct swin_vol x, int hidden);

    /* Patch merging: out(i,j,k, :) = LN_8C(concat_m in(2i+o_m) ) . red_w, o_m = order[m]
     * (D, H, W offsets). in dims are even; out = (in/2, 2C). */
    int (*patch_merge)(void *be, struct swin_vol out, struct swin_vol in,
                       const swin_merge_order order, const float *norm_w, const float *norm_b,
                       const float *red_w, void *ws, size_t ws_bytes);
    size_t (*patch_merge_ws)(void *be, struct swin_vol out, struct swin_vol in);

    /* Blending of the sliding cubes in the backend's own memory (the device path of
     * pipeline/sliding.h, geometry in core/ring_geom.h). Optional: NULL on a backend whose
     * logits come back to the host, where the pipeline blends them (the CPU's).
     * A ring is ring_bytes(be, g) bytes of the memory the backend's arena comes from,
     * 256-byte aligned, laid out as the backend likes (the open rows where
     * swin_ring_layout_of says); ring_bytes is a pure function of g.
     * The arithmetic is the host ring's (pipeline/sliding.c) to the bit: float32, each
     * voxel adding its cubes in their run order, products and sums rounded one by one (no
     * fused multiply-add), the average a float32 division, the label the first maximum. */
    size_t (*ring_bytes)(void *be, const struct swin_ring_geom *g);
    /* Before a volume's first cube: the ring takes `importance` (host float32, roi[0] x
     * roi[1] x roi[2], roi[2] fastest: the weight of each voxel of a cube) and zero sums. */
    int (*ring_start)(void *be, void *ring, const struct swin_ring_geom *g, const float *importance);
    /* The cube whose padded start is start[3], logits (roi dims, c == classes): each of
     * its voxels inside the volume adds logit * importance per class, and its importance
     * to the voxel's weight (kept implicitly: the weights are a function of g). Counts the
     * logits of the whole cube that are not finite. */
    int (*ring_add)(void *be, void *ring, const struct swin_ring_geom *g, struct swin_vol logits,
                    const int64_t start[3]);
    /* Rows [row_lo, row_hi) along o1 of plane `plane`, final (every cube reaching them has
     * been added): the average (sum / weight) of each voxel reduced to its label into host
     * `labels` (NULL: none; (row_hi - row_lo) x d_o2, o2 fastest, label_bytes each) and, when
     * g->probs, its softmax (in double, as float32) into host `probs` (NULL: none; the same
     * voxels x classes, classes fastest); the rows' places are cleared for the rows that take
     * them next. Waits for the results. *nonfinite: the logits counted by ring_add since
     * ring_start. */
    int (*ring_finish)(void *be, void *ring, const struct swin_ring_geom *g, int64_t plane, int64_t row_lo,
                       int64_t row_hi, void *labels, float *probs, long long *nonfinite);

    /* Optional (NULL on a backend that runs on the host): the seconds the device had nothing
     * queued between its pieces of work (a cube from its input to its logits, a ring's
     * finish) since the last call, and the gaps it could not time; waits for the device,
     * then starts counting afresh. */
    int (*device_idle)(void *be, double *seconds, long long *missed);
};

#endif
