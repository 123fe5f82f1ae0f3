#include "runtime/forward_cnn.h"

#include "runtime/conv_call.h"
#include "runtime/inplace.h"

/* norm1 folded into conv2's reads (ops.h conv3d_normed_input): what conv1 kept for its output
 * and the norm's affine. */
struct norm_fold {
    const void *in_stats;
    const float *gamma, *beta;
};

/* out = conv3x3x3(in), or with fold conv3x3x3(LReLU(IN(in) * gamma + beta)), followed by the
 * instance norm of out when normalize: then, where the backend keeps the norm's statistics in
 * the conv (conv3d_stats_bytes > 0), they go into *stats, a planned buffer for the norm that the
 * caller releases after it; otherwise stats->data is NULL and stats->id -1. */
static void conv3_then_norm(struct swin_exec *e, struct swin_workspace *stats, struct swin_vol out,
                            struct swin_vol in, const float *w, const float *bias, bool normalize,
                            const struct norm_fold *fold)
{
    *stats = (struct swin_workspace){.data = NULL, .id = -1};
    const size_t bytes = normalize ? e->ops->conv3d_stats_bytes(e->be, out) : 0;
    if (bytes && !swin_exec_workspace(e, stats, bytes, "instance-norm statistics")) return;
    if (!fold) {
        swin_fwd_conv(e, out, bytes ? stats : NULL, in, w, bias, 3, 1, 1);
        return;
    }
    struct swin_workspace ws;
    if (!swin_exec_workspace(e, &ws, e->ops->conv3d_ws(e->be, out, in, w, 3, 1, 1, bytes > 0), "conv3d workspace"))
        return;
    EXEC_OP(e, conv3d_normed_input, out, stats->data, in, fold->in_stats, fold->gamma, fold->beta, w, bias, ws.data,
            ws.bytes);
    swin_exec_release(e, ws.id);
}

/* x = LReLU(norm(x) * gamma + beta (+ res)) for one of the block's norms: group norm where
 * the block has one (ops.h groupnorm_act), else instnorm_act (no norm with bn_folded). */
static void block_norm_act(struct swin_exec *e, struct swin_vol x, const void *stats, const struct swin_resblock_w *w,
                           const float *gamma, const float *beta, const struct swin_residual *res)
{
    if (w->norm_groups)
        EXEC_OP(e, groupnorm_act, x, stats, w->norm_groups, gamma, beta, res, true);
    else
        EXEC_OP(e, instnorm_act, x, stats, !w->bn_folded, gamma, beta, res, true);
}

/* Whether the backend folds norm1 + LReLU into conv2's reads (ops.h conv3d_normed_input). */
static bool norm1_folded(const struct swin_exec *e, const struct swin_resblock_w *w)
{
    return e->ops->conv3d_normed_input && !w->bn_folded && !w->norm_groups;
}

/* b = conv2(a), followed by its norm as conv3_then_norm: where norm1_folded, a is conv1's raw
 * output and the op normalises it as it reads (a_stats: what conv1 kept for it, released
 * here); otherwise instnorm_act has already made a = LReLU(IN(conv1(x))). */
static void conv2_then_norm(struct swin_exec *e, struct swin_workspace *stats, struct swin_vol b, struct swin_vol a,
                            struct swin_workspace *a_stats, const struct swin_resblock_w *w)
{
    const struct norm_fold fold = {.in_stats = a_stats->data, .gamma = w->norm1_w, .beta = w->norm1_b};
    const bool folded = norm1_folded(e, w);
    conv3_then_norm(e, stats, b, a, w->conv2_w, w->conv2_b, !w->bn_folded, folded ? &fold : NULL);
    if (folded) swin_exec_release(e, a_stats->id);
}

/* a   = LReLU(IN(conv1(x)))      (with norm1_folded, inside conv2's reads)
 * b   = IN(conv2(a))
 * res = IN(conv3(x)) if cin != cout, else x
 * out = LReLU(b + res)
 * (bn_folded: each IN(conv(.)) is conv(.) + the folded batch norm's bias.) The norm of res
 * runs inside the last instnorm_act (struct swin_residual), not as a pass of its own. */

/* The residual of out = LReLU(b + res): conv3's output r with its instance norm, or x. */
static struct swin_residual shortcut_residual(struct swin_vol r, const struct swin_resblock_w *w)
{
    const bool norm = w->conv3_w && !w->bn_folded;
    return (struct swin_residual){.v = r, .normalize = norm, .gamma = norm ? w->norm3_w : NULL,
                                  .beta = norm ? w->norm3_b : NULL};
}

/* A 1x1x1 conv after a block (the output head): w (1,1,1,block cout,cout), bias NULL or cout. */
struct head_conv {
    const float *w, *bias;
    int cout;
};

/* The decoders' order, for an input the block owns that is wider than its output (the
 * concat, 2 cout): conv1 reads x, then conv3 overwrites x with res in place, so at most
 * three cout-channel maps are live (x = two of them, a; then res, a, b). With head, the last
 * norm and the head run as one op (ops.h instnorm_act_conv1x1) into a new tensor of head->cout
 * channels, which is returned; b is then only conv2's raw output. */
static struct swin_activation resblock_narrowing(struct swin_exec *e, struct swin_activation x,
                                                 const struct swin_resblock_w *w, const struct head_conv *head,
                                                 const char *name)
{
    struct swin_activation a, b = {.id = -1};
    struct swin_workspace stats, a_stats;
    if (!swin_exec_activation(e, &a, x.v.d, x.v.h, x.v.w, w->cout, name)) return b;
    conv3_then_norm(e, &a_stats, a.v, x.v, w->conv1_w, w->conv1_b, !w->bn_folded, NULL);
    if (!norm1_folded(e, w)) {
        block_norm_act(e, a.v, a_stats.data, w, w->norm1_w, w->norm1_b, NULL);
        swin_exec_release(e, a_stats.id);
    }
    swin_inplace_conv1x1_narrow(e, &x, w->conv3_w, w->conv3_b, w->cout);
    if (!swin_exec_activation(e, &b, x.v.d, x.v.h, x.v.w, w->cout, name)) return b;
    conv2_then_norm(e, &stats, b.v, a.v, &a_stats, w);
    swin_exec_release(e, a.id);
    const struct swin_residual res = shortcut_residual(x.v, w);
    if (head) {
        struct swin_activation out = {.id = -1};
        if (!swin_exec_activation(e, &out, x.v.d, x.v.h, x.v.w, head->cout, "logits")) return out;
        EXEC_OP(e, instnorm_act_conv1x1, out.v, b.v, stats.data, !w->bn_folded, w->norm2_w, w->norm2_b, &res, true,
                head->w, head->bias);
        swin_exec_release(e, stats.id);
        swin_exec_release(e, x.id);
        swin_exec_release(e, b.id);
        return out;
    }
    block_norm_act(e, b.v, stats.data, w, w->norm2_w, w->norm2_b, &res);
    swin_exec_release(e, stats.id);
    swin_exec_release(e, x.id);
    return b;
}

/* res = conv3(in) (its norm follows in the last instnorm_act), a new tensor. */
static bool shortcut(struct swin_exec *e, struct swin_activation *res, struct swin_vol in,
                     const struct swin_resblock_w *w, const char *name)
{
    if (!swin_exec_activation(e, res, in.d, in.h, in.w, w->cout, name)) return false;
    swin_fwd_conv(e, res->v, NULL, in, w->conv3_w, w->conv3_b, 1, 1, 0);
    return true;
}

/* Whether the block's last norm takes the shortcut from in itself (ops.h
 * instnorm_act_narrow_shortcut: encoder1's image channels), so that res is never stored. */
static bool narrow_shortcut(const struct swin_exec *e, struct swin_vol in, const struct swin_resblock_w *w)
{
    return e->ops->instnorm_act_narrow_shortcut && w->conv3_w && !w->bn_folded && !w->norm_groups &&
           in.c <= SWIN_NARROW_SHORTCUT_MAX_CIN && in.c <= w->cout;
}

/* Whether the block runs resblock_narrowing's order. */
static bool narrowing(struct swin_vol in, int in_id, const struct swin_resblock_w *w, const struct swin_vol *dest)
{
    return w->conv3_w && !dest && in_id >= 0 && in.pitch == in.c && in.c > w->cout;
}

/* Order otherwise: at most three cout-channel maps live: a, b and res; b is the destination
 * when there is one (conv2 writes it and the last instnorm_act finishes it there). With conv3,
 * the wider of in and res is the one that dies before b exists: res first and in released
 * after conv1, or, when in is no wider than res (encoder1's image channels), conv3 after
 * conv2 so that in stays instead; where narrow_shortcut, the last norm reads in in res's
 * place. */
struct swin_activation swin_fwd_resblock(struct swin_exec *e, struct swin_vol in, int in_id, const struct swin_resblock_w *w,
                           const struct swin_vol *dest, const char *name)
{
    if (narrowing(in, in_id, w, dest))
        return resblock_narrowing(e, (struct swin_activation){.v = in, .id = in_id}, w, NULL, name);
    const bool res_late = w->conv3_w && in.c <= w->cout;
    struct swin_activation res = {.v = in, .id = -1}, a, b = {.id = -1};
    struct swin_workspace stats, a_stats;
    if (w->conv3_w && !res_late && !shortcut(e, &res, in, w, name)) return b;
    if (!swin_exec_activation(e, &a, in.d, in.h, in.w, w->cout, name)) return b;
    conv3_then_norm(e, &a_stats, a.v, in, w->conv1_w, w->conv1_b, !w->bn_folded, NULL);
    if (w->conv3_w && !res_late) swin_exec_release(e, in_id);  /* in is no longer read: res holds conv3(in) */
    if (!norm1_folded(e, w)) {
        block_norm_act(e, a.v, a_stats.data, w, w->norm1_w, w->norm1_b, NULL);
        swin_exec_release(e, a_stats.id);
    }
    if (dest) b.v = *dest;
    else if (!swin_exec_activation(e, &b, in.d, in.h, in.w, w->cout, name)) return b;
    conv2_then_norm(e, &stats, b.v, a.v, &a_stats, w);
    swin_exec_release(e, a.id);
    if (res_late && narrow_shortcut(e, in, w)) {
        EXEC_OP(e, instnorm_act_narrow_shortcut, b.v, stats.data, w->norm2_w, w->norm2_b, in, w->conv3_w, w->norm3_w,
                w->norm3_b);
        swin_exec_release(e, stats.id);
        swin_exec_release(e, in_id);
        return b;
    }
    if (res_late) {
        if (!shortcut(e, &res, in, w, name)) return b;
        swin_exec_release(e, in_id);
    }
    const struct swin_residual r = shortcut_residual(res.v, w);
    block_norm_act(e, b.v, stats.data, w, w->norm2_w, w->norm2_b, &r);
    swin_exec_release(e, stats.id);
    if (!w->conv3_w) swin_exec_release(e, in_id);  /* in was the residual */
    swin_exec_release(e, res.id);
    return b;
}

struct swin_activation swin_fwd_resblock_head(struct swin_exec *e, struct swin_vol in, int in_id,
                                              const struct swin_resblock_w *w, const float *head_w,
                                              const float *head_b, int head_cout, const char *name)
{
    if (narrowing(in, in_id, w, NULL) && e->ops->instnorm_act_conv1x1 && !w->norm_groups &&
        w->cout <= SWIN_NORM_CONV1X1_MAX_CIN &&
        head_cout <= SWIN_NORM_CONV1X1_MAX_COUT) {
        const struct head_conv head = {.w = head_w, .bias = head_b, .cout = head_cout};
        return resblock_narrowing(e, (struct swin_activation){.v = in, .id = in_id}, w, &head, name);
    }
    struct swin_activation out = swin_fwd_resblock(e, in, in_id, w, NULL, name), logits = {.id = -1};
    if (!EXEC_OK(e) || !swin_exec_activation(e, &logits, in.d, in.h, in.w, head_cout, "logits")) return logits;
    swin_fwd_conv(e, logits.v, NULL, out.v, head_w, head_b, 1, 1, 0);
    swin_exec_release(e, out.id);
    return logits;
}
