#include "kernels/op_check.h"

#include <stdarg.h>
#include <stdio.h>

static int fail(const struct swin_ops *o, void *be, swin_status status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(const struct swin_ops *o, void *be, swin_status status, const char *fmt, ...)
{
    char msg[SWIN_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    o->set_error(be, msg);
    return (int)status;
}

static const char *dtype_name(enum swin_dtype t) { return t == SWIN_F16 ? "float16" : "float32"; }

static int check_vol(const struct swin_ops *o, void *be, const char *op, const char *name, struct swin_vol v)
{
    if (!v.data) return fail(o, be, SWIN_ERR_ARG, "%s: %s.data is NULL", op, name);
    if (v.dtype != o->act_dtype)
        return fail(o, be, SWIN_ERR_ARG, "%s: %s is %s but the %s backend stores %s (its op table's act_dtype)", op,
                    name, dtype_name(v.dtype), o->name, dtype_name(o->act_dtype));
    if (v.d <= 0 || v.h <= 0 || v.w <= 0 || v.c <= 0 || v.pitch < v.c)
        return fail(o, be, SWIN_ERR_SHAPE, "%s: %s has dims %dx%dx%d, c %d, pitch %d (need positive dims and c, pitch >= c)",
                    op, name, v.d, v.h, v.w, v.c, v.pitch);
    return 0;
}

static int check_vols(const struct swin_ops *o, void *be, const char *op, struct swin_vol out, struct swin_vol in)
{
    int rc = check_vol(o, be, op, "out", out);
    return rc ? rc : check_vol(o, be, op, "in", in);
}

static int check_same_dims(const struct swin_ops *o, void *be, const char *op, const char *a_name, struct swin_vol a,
                           const char *b_name, struct swin_vol b)
{
    if (a.d == b.d && a.h == b.h && a.w == b.w && a.c == b.c) return 0;
    return fail(o, be, SWIN_ERR_SHAPE, "%s: %s %dx%dx%dx%d differs from %s %dx%dx%dx%d", op, a_name, a.d, a.h, a.w, a.c,
                b_name, b.d, b.h, b.w, b.c);
}

static int check_ws(const struct swin_ops *o, void *be, const char *op, size_t need, const void *ws, size_t ws_bytes)
{
    if (!need || (ws && ws_bytes >= need)) return 0;
    return fail(o, be, SWIN_ERR_ARG, "%s: workspace %zu bytes, need %zu (%s_ws)", op, ws ? ws_bytes : 0, need, op);
}

int swin_op_pack_input(const struct swin_ops *o, void *be, struct swin_vol out, const float *host_cdhw)
{
    int rc = check_vol(o, be, "pack_input", "out", out);
    if (rc) return rc;
    if (!host_cdhw) return fail(o, be, SWIN_ERR_ARG, "pack_input: host_cdhw is NULL");
    return o->pack_input(be, out, host_cdhw);
}

int swin_op_unpack_output(const struct swin_ops *o, void *be, float *host_cdhw, struct swin_vol in)
{
    int rc = check_vol(o, be, "unpack_output", "in", in);
    if (rc) return rc;
    if (!host_cdhw) return fail(o, be, SWIN_ERR_ARG, "unpack_output: host_cdhw is NULL");
    return o->unpack_output(be, host_cdhw, in);
}

int swin_op_copy(const struct swin_ops *o, void *be, struct swin_vol out, struct swin_vol in)
{
    int rc = check_vols(o, be, "copy", out, in);
    if (!rc) rc = check_same_dims(o, be, "copy", "out", out, "in", in);
    return rc ? rc : o->copy(be, out, in);
}

static int conv_out_dim(int n, int k, int stride, int pad)
{
    const int span = n + 2 * pad - k;
    return span < 0 ? -1 : span / stride + 1;
}

int swin_op_conv3d(const struct swin_ops *o, void *be, struct swin_vol out, void *stats, struct swin_vol in,
                   const float *w, const float *bias, int k, int stride, int pad, void *ws, size_t ws_bytes)
{
    int rc = check_vols(o, be, "conv3d", out, in);
    if (rc) return rc;
    if (!w) return fail(o, be, SWIN_ERR_ARG, "conv3d: w is NULL");
    if (k < 1 || k > 3 || stride < 1 || stride > 2 || pad < 0 || pad >= k)
        return fail(o, be, SWIN_ERR_ARG, "conv3d: k %d stride %d pad %d unsupported (k 1-3, stride 1-2, 0 <= pad < k)", k,
                    stride, pad);
    if (out.d != conv_out_dim(in.d, k, stride, pad) || out.h != conv_out_dim(in.h, k, stride, pad) ||
        out.w != conv_out_dim(in.w, k, stride, pad))
        return fail(o, be, SWIN_ERR_SHAPE, "conv3d: out %dx%dx%d does not match in %dx%dx%d with k %d stride %d pad %d",
                    out.d, out.h, out.w, in.d, in.h, in.w, k, stride, pad);
    if (stats && !o->conv3d_stats_bytes(be, out))
        return fail(o, be, SWIN_ERR_ARG, "conv3d: stats given, but backend %s keeps no statistics (conv3d_stats_bytes 0)",
                    o->name);
    rc = check_ws(o, be, "conv3d", o->conv3d_ws(be, out, in, w, k, stride, pad, stats != NULL), ws, ws_bytes);
    return rc ? rc : o->conv3d(be, out, stats, in, w, bias, k, stride, pad, ws, ws_bytes);
}

int swin_op_conv3d_normed_input(const struct swin_ops *o, void *be, struct swin_vol out, void *stats,
                                struct swin_vol in, const void *in_stats, const float *gamma, const float *beta,
                                const float *w, const float *bias, void *ws, size_t ws_bytes)
{
    if (!o->conv3d_normed_input)
        return fail(o, be, SWIN_ERR_ARG, "conv3d_normed_input: backend %s has no such op (run instnorm_act, then conv3d)",
                    o->name);
    int rc = check_vols(o, be, "conv3d_normed_input", out, in);
    if (rc) return rc;
    if (!w) return fail(o, be, SWIN_ERR_ARG, "conv3d_normed_input: w is NULL");
    if (gamma && !beta) return fail(o, be, SWIN_ERR_ARG, "conv3d_normed_input: gamma given without beta");
    if (out.d != in.d || out.h != in.h || out.w != in.w)
        return fail(o, be, SWIN_ERR_SHAPE, "conv3d_normed_input: out %dx%dx%d differs from in %dx%dx%d", out.d, out.h,
                    out.w, in.d, in.h, in.w);
    if (stats && !o->conv3d_stats_bytes(be, out))
        return fail(o, be, SWIN_ERR_ARG,
                    "conv3d_normed_input: stats given, but backend %s keeps no statistics (conv3d_stats_bytes 0)", o->name);
    if (in_stats && !o->conv3d_stats_bytes(be, in))
        return fail(o, be, SWIN_ERR_ARG,
                    "conv3d_normed_input: in_stats given, but backend %s keeps no statistics for in", o->name);
    rc = check_ws(o, be, "conv3d_normed_input", o->conv3d_ws(be, out, in, w, 3, 1, 1, stats != NULL), ws, ws_bytes);
    return rc ? rc : o->conv3d_normed_input(be, out, stats, in, in_stats, gamma, beta, w, bias, ws, ws_bytes);
}

int swin_op_conv_transpose2(const struct swin_ops *o, void *be, struct swin_vol out, struct swin_vol in,
                            const float *w)
{
    int rc = check_vols(o, be, "conv_transpose2", out, in);
    if (rc) return rc;
    if (!w) return fail(o, be, SWIN_ERR_ARG, "conv_transpose2: w is NULL");
    if (out.d != 2 * in.d || out.h != 2 * in.h || out.w != 2 * in.w)
        return fail(o, be, SWIN_ERR_SHAPE, "conv_transpose2: out %dx%dx%d is not 2 x in %dx%dx%d", out.d, out.h, out.w,
                    in.d, in.h, in.w);
    return o->conv_transpose2(be, out, in, w);
}

/* instnorm_act's argument checks, shared with instnorm_act_conv1x1 (op: the name in messages). */
static int check_instnorm(const struct swin_ops *o, void *be, const char *op, struct swin_vol x, const void *stats,
                          bool normalize, const float *gamma, const float *beta, const struct swin_residual *residual)
{
    int rc = check_vol(o, be, op, "x", x);
    if (!rc && residual) rc = check_vol(o, be, op, "residual", residual->v);
    if (!rc && residual) rc = check_same_dims(o, be, op, "residual", residual->v, "x", x);
    if (rc) return rc;
    if (gamma && !beta) return fail(o, be, SWIN_ERR_ARG, "%s: gamma given without beta", op);
    if (residual && residual->gamma && !(residual->beta && residual->normalize))
        return fail(o, be, SWIN_ERR_ARG, "%s: residual gamma given without its beta or normalize", op);
    if (stats && !normalize) return fail(o, be, SWIN_ERR_ARG, "%s: stats given without normalize", op);
    if (stats && !o->conv3d_stats_bytes(be, x))
        return fail(o, be, SWIN_ERR_ARG, "%s: stats given, but backend %s keeps no statistics", op, o->name);
    return 0;
}

int swin_op_instnorm_act(const struct swin_ops *o, void *be, struct swin_vol x, const void *stats, bool normalize,
                         const float *gamma, const float *beta, const struct swin_residual *residual, bool lrelu)
{
    const int rc = check_instnorm(o, be, "instnorm_act", x, stats, normalize, gamma, beta, residual);
    return rc ? rc : o->instnorm_act(be, x, stats, normalize, gamma, beta, residual, lrelu);
}

int swin_op_groupnorm_act(const struct swin_ops *o, void *be, struct swin_vol x, const void *stats, int groups,
                          const float *gamma, const float *beta, const struct swin_residual *residual, bool lrelu)
{
    if (!o->groupnorm_act)
        return fail(o, be, SWIN_ERR_ARG,
                    "groupnorm_act: the %s backend does not run group norm (a model built with norm_name='group'); "
                    "run it on the CPU backend",
                    o->name);
    const int rc = check_instnorm(o, be, "groupnorm_act", x, stats, true, gamma, beta, residual);
    if (rc) return rc;
    if (groups < 1 || x.c % groups)
        return fail(o, be, SWIN_ERR_ARG, "groupnorm_act: %d groups do not divide x's %d channels", groups, x.c);
    return o->groupnorm_act(be, x, stats, groups, gamma, beta, residual, lrelu);
}

/* The bytes from v's first element to the end of its last. */
static size_t vol_span(struct swin_vol v)
{
    return ((swin_vol_voxels(v) - 1) * (size_t)v.pitch + (size_t)v.c) * swin_dtype_bytes(v.dtype);
}

static bool vols_overlap(struct swin_vol a, struct swin_vol b)
{
    const char *pa = a.data, *pb = b.data;
    return pa < pb + vol_span(b) && pb < pa + vol_span(a);
}

int swin_op_instnorm_act_conv1x1(const struct swin_ops *o, void *be, struct swin_vol out, struct swin_vol x,
                                 const void *stats, bool normalize, const float *gamma, const float *beta,
                                 const struct swin_residual *residual, bool lrelu, const float *w, const float *bias)
{
    static const char op[] = "instnorm_act_conv1x1";
    if (!o->instnorm_act_conv1x1)
        return fail(o, be, SWIN_ERR_ARG, "%s: backend %s has no such op (run instnorm_act, then conv3d with k 1)", op,
                    o->name);
    int rc = check_instnorm(o, be, op, x, stats, normalize, gamma, beta, residual);
    if (!rc) rc = check_vol(o, be, op, "out", out);
    if (rc) return rc;
    if (out.d != x.d || out.h != x.h || out.w != x.w)
        return fail(o, be, SWIN_ERR_SHAPE, "%s: out %dx%dx%d differs from x %dx%dx%d", op, out.d, out.h, out.w, x.d, x.h,
                    x.w);
    if (x.c > SWIN_NORM_CONV1X1_MAX_CIN || out.c > SWIN_NORM_CONV1X1_MAX_COUT)
        return fail(o, be, SWIN_ERR_SHAPE, "%s: %d -> %d channels, at most %d -> %d (run instnorm_act, then conv3d)", op,
                    x.c, out.c, SWIN_NORM_CONV1X1_MAX_CIN, SWIN_NORM_CONV1X1_MAX_COUT);
    if (!w) return fail(o, be, SWIN_ERR_ARG, "%s: w is NULL", op);
    if (vols_overlap(out, x) || (residual && vols_overlap(out, residual->v)))
        return fail(o, be, SWIN_ERR_ARG, "%s: out overlaps x or the residual", op);
    return o->instnorm_act_conv1x1(be, out, x, stats, normalize, gamma, beta, residual, lrelu, w, bias);
}

int swin_op_instnorm_act_narrow_shortcut(const struct swin_ops *o, void *be, struct swin_vol x, const void *stats,
                                        const float *gamma, const float *beta, struct swin_vol src, const float *w,
                                        const float *res_gamma, const float *res_beta)
{
    static const char op[] = "instnorm_act_narrow_shortcut";
    if (!o->instnorm_act_narrow_shortcut)
        return fail(o, be, SWIN_ERR_ARG, "%s: backend %s has no such op (run the shortcut conv3d, then instnorm_act)", op,
                    o->name);
    int rc = check_vol(o, be, op, "x", x);
    if (!rc) rc = check_vol(o, be, op, "src", src);
    if (rc) return rc;
    if (src.d != x.d || src.h != x.h || src.w != x.w)
        return fail(o, be, SWIN_ERR_SHAPE, "%s: src %dx%dx%d differs from x %dx%dx%d", op, src.d, src.h, src.w, x.d, x.h,
                    x.w);
    if (src.c > SWIN_NARROW_SHORTCUT_MAX_CIN)
        return fail(o, be, SWIN_ERR_SHAPE, "%s: src has %d channels, at most %d (run the shortcut conv3d, then instnorm_act)",
                    op, src.c, SWIN_NARROW_SHORTCUT_MAX_CIN);
    if (!w) return fail(o, be, SWIN_ERR_ARG, "%s: w is NULL", op);
    if (gamma && !beta) return fail(o, be, SWIN_ERR_ARG, "%s: gamma given without beta", op);
    if (res_gamma && !res_beta) return fail(o, be, SWIN_ERR_ARG, "%s: res_gamma given without res_beta", op);
    if (stats && !o->conv3d_stats_bytes(be, x))
        return fail(o, be, SWIN_ERR_ARG, "%s: stats given, but backend %s keeps no statistics", op, o->name);
    return o->instnorm_act_narrow_shortcut(be, x, stats, gamma, beta, src, w, res_gamma, res_beta);
}

int swin_op_layernorm(const struct swin_ops *o, void *be, struct swin_vol out, struct swin_vol in,
                      const float *gamma, const float *beta)
{
    int rc = check_vols(o, be, "layernorm", out, in);
    if (!rc) rc = check_same_dims(o, be, "layernorm", "out", out, "in", in);
    if (rc) return rc;
    if (out.data == in.data && out.pitch != in.pitch)
        return fail(o, be, SWIN_ERR_ARG, "layernorm: in place needs equal pitches (out %d, in %d)", out.pitch, in.pitch);
    return o->layernorm(be, out, in, gamma, beta);
}

/* 0, or the status of the first inconsistency of g with x and its description in msg. */
static int check_geom(const struct swin_window_geom *g, struct swin_vol x, char *msg, size_t msg_size)
{
    if (g->L[0] != x.d || g->L[1] != x.h || g->L[2] != x.w) {
        snprintf(msg, msg_size, "geometry L %dx%dx%d differs from x %dx%dx%d", g->L[0], g->L[1], g->L[2], x.d, x.h, x.w);
        return SWIN_ERR_SHAPE;
    }
    for (int k = 0; k < 3; k++) {
        const int wk = g->win[k];
        if (wk < 1 || wk > g->L[k] || wk > g->cfg_window[k] || g->shift[k] < 0 || g->shift[k] >= wk ||
            g->padded[k] != (g->L[k] + wk - 1) / wk * wk) {
            snprintf(msg, msg_size,
                     "axis %d: L %d win %d shift %d padded %d cfg_window %d inconsistent "
                     "(need 1 <= win <= min(L, cfg_window), 0 <= shift < win, padded = ceil(L/win)*win)",
                     k, g->L[k], wk, g->shift[k], g->padded[k], g->cfg_window[k]);
            return SWIN_ERR_ARG;
        }
    }
    if (g->heads < 1 || x.c % g->heads) {
        snprintf(msg, msg_size, "C %d not divisible by heads %d", x.c, g->heads);
        return SWIN_ERR_ARG;
    }
    return 0;
}

int swin_op_swin_attention(const struct swin_ops *o, void *be, struct swin_vol x, const struct swin_block_w *blk,
                           const struct swin_window_geom *g, void *ws, size_t ws_bytes)
{
    int rc = check_vol(o, be, "swin_attention", "x", x);
    if (rc) return rc;
    if (!g) return fail(o, be, SWIN_ERR_ARG, "swin_attention: geometry is NULL");
    if (!blk || !blk->norm1_w || !blk->norm1_b || !blk->qkv_w || !blk->bias_table || !blk->proj_w || !blk->proj_b)
        return fail(o, be, SWIN_ERR_ARG, "swin_attention: block weights missing (norm1, qkv_w, bias_table, proj)");
    char msg[SWIN_ERROR_MSG_MAX - 32];
    rc = check_geom(g, x, msg, sizeof msg);
    if (rc) return fail(o, be, (swin_status)rc, "swin_attention: %s", msg);
    rc = check_ws(o, be, "swin_attention", o->swin_attention_ws(be, x, g), ws, ws_bytes);
    return rc ? rc : o->swin_attention(be, x, blk, g, ws, ws_bytes);
}

int swin_op_swin_mlp(const struct swin_ops *o, void *be, struct swin_vol x, const struct swin_block_w *blk,
                     int hidden, void *ws, size_t ws_bytes)
{
    int rc = check_vol(o, be, "swin_mlp", "x", x);
    if (rc) return rc;
    if (!blk || !blk->norm2_w || !blk->norm2_b || !blk->fc1_w || !blk->fc1_b || !blk->fc2_w || !blk->fc2_b)
        return fail(o, be, SWIN_ERR_ARG, "swin_mlp: block weights missing (norm2, fc1, fc2 with biases)");
    if (hidden <= 0) return fail(o, be, SWIN_ERR_ARG, "swin_mlp: hidden %d must be positive", hidden);
    rc = check_ws(o, be, "swin_mlp", o->swin_mlp_ws(be, x, hidden), ws, ws_bytes);
    return rc ? rc : o->swin_mlp(be, x, blk, hidden, ws, ws_bytes);
}

int swin_op_patch_merge(const struct swin_ops *o, void *be, struct swin_vol out, struct swin_vol in,
                        const swin_merge_order order, const float *norm_w, const float *norm_b,
                        const float *red_w, void *ws, size_t ws_bytes)
{
    int rc = check_vols(o, be, "patch_merge", out, in);
    if (rc) return rc;
    if (!order || !norm_w || !norm_b || !red_w)
        return fail(o, be, SWIN_ERR_ARG, "patch_merge: order, norm_w, norm_b and red_w are required");
    if (in.d % 2 || in.h % 2 || in.w % 2 || out.d * 2 != in.d || out.h * 2 != in.h || out.w * 2 != in.w ||
        out.c != 2 * in.c)
        return fail(o, be, SWIN_ERR_SHAPE, "patch_merge: in %dx%dx%dx%d (even dims) needs out %dx%dx%dx%d, got %dx%dx%dx%d",
                    in.d, in.h, in.w, in.c, in.d / 2, in.h / 2, in.w / 2, 2 * in.c, out.d, out.h, out.w, out.c);
    for (int m = 0; m < 8; m++)
        for (int a = 0; a < 3; a++)
            if (order[m][a] != 0 && order[m][a] != 1)
                return fail(o, be, SWIN_ERR_ARG, "patch_merge: order[%d][%d] = %d, offsets must be 0 or 1", m, a,
                            order[m][a]);
    rc = check_ws(o, be, "patch_merge", o->patch_merge_ws(be, out, in), ws, ws_bytes);
    return rc ? rc : o->patch_merge(be, out, in, order, norm_w, norm_b, red_w, ws, ws_bytes);
}

/* ---- blending of the sliding cubes ---------------------------------------------------- */

/* 0, or the status of the first inconsistency of g (core/ring_geom.h) and its description. */
static int check_ring_geom(const struct swin_ring_geom *g, char *msg, size_t msg_size)
{
    if (g->ax < 0 || g->ax > 2 || g->classes < 1 || (g->label_bytes != 1 && g->label_bytes != 2) ||
        (g->label_bytes == 1 && g->classes > 256)) {
        snprintf(msg, msg_size, "slab axis %d, %d classes, %d-byte labels (need axis 0..2, classes >= 1, labels of "
                 "1 byte up to 256 classes or 2)", g->ax, g->classes, g->label_bytes);
        return SWIN_ERR_ARG;
    }
    for (int k = 0; k < 3; k++) {
        const int64_t padded = g->size[k] > g->roi[k] ? g->size[k] : g->roi[k];
        if (g->size[k] < 1 || g->roi[k] < 1 || g->padded[k] != padded || g->pad_lo[k] != (padded - g->size[k]) / 2 ||
            g->interval[k] < 1 || g->n[k] < 1 || swin_ring_start(g, k, g->n[k] - 1) != padded - g->roi[k]) {
            snprintf(msg, msg_size,
                     "axis %d: size %lld, cube %d, padded %lld, pad %lld, interval %lld, %d starts inconsistent (need "
                     "padded = max(size, cube), pad = (padded - size) / 2, interval >= 1, the last start at "
                     "padded - cube)",
                     k, (long long)g->size[k], g->roi[k], (long long)g->padded[k], (long long)g->pad_lo[k],
                     (long long)g->interval[k], g->n[k]);
            return SWIN_ERR_SHAPE;
        }
    }
    return 0;
}

/* The ring's geometry, and that this backend blends at all. */
static int check_ring(const struct swin_ops *o, void *be, const char *op, const void *ring,
                      const struct swin_ring_geom *g)
{
    if (!o->ring_bytes || !o->ring_start || !o->ring_add || !o->ring_finish)
        return fail(o, be, SWIN_ERR_ARG, "%s: the %s backend does not blend in its own memory (its logits come back "
                    "to the host)", op, o->name);
    if (!ring || !g) return fail(o, be, SWIN_ERR_ARG, "%s: the ring and its geometry are required", op);
    char msg[SWIN_ERROR_MSG_MAX - 32];
    int rc = check_ring_geom(g, msg, sizeof msg);
    return rc ? fail(o, be, (swin_status)rc, "%s: %s", op, msg) : 0;
}

int swin_op_ring_start(const struct swin_ops *o, void *be, void *ring, const struct swin_ring_geom *g,
                       const float *importance)
{
    int rc = check_ring(o, be, "ring_start", ring, g);
    if (rc) return rc;
    if (!importance) return fail(o, be, SWIN_ERR_ARG, "ring_start: importance is NULL");
    return o->ring_start(be, ring, g, importance);
}

int swin_op_ring_add(const struct swin_ops *o, void *be, void *ring, const struct swin_ring_geom *g,
                     struct swin_vol logits, const int64_t start[3])
{
    int rc = check_ring(o, be, "ring_add", ring, g);
    if (!rc) rc = check_vol(o, be, "ring_add", "logits", logits);
    if (rc) return rc;
    if (logits.d != g->roi[0] || logits.h != g->roi[1] || logits.w != g->roi[2] || logits.c != g->classes)
        return fail(o, be, SWIN_ERR_SHAPE, "ring_add: logits %dx%dx%dx%d, need the cube %dx%dx%d with %d classes",
                    logits.d, logits.h, logits.w, logits.c, g->roi[0], g->roi[1], g->roi[2], g->classes);
    if (!start) return fail(o, be, SWIN_ERR_ARG, "ring_add: start is NULL");
    for (int k = 0; k < 3; k++)
        if (start[k] < 0 || start[k] > g->padded[k] - g->roi[k])
            return fail(o, be, SWIN_ERR_SHAPE, "ring_add: start %lld on axis %d leaves the padded volume of %lld",
                        (long long)start[k], k, (long long)g->padded[k]);
    return o->ring_add(be, ring, g, logits, start);
}

int swin_op_ring_finish(const struct swin_ops *o, void *be, void *ring, const struct swin_ring_geom *g,
                        int64_t plane, int64_t row_lo, int64_t row_hi, void *labels, float *probs,
                        long long *nonfinite)
{
    int rc = check_ring(o, be, "ring_finish", ring, g);
    if (rc) return rc;
    if (plane < 0 || plane >= g->size[g->ax])
        return fail(o, be, SWIN_ERR_SHAPE, "ring_finish: plane %lld outside the %lld planes along axis %d",
                    (long long)plane, (long long)g->size[g->ax], g->ax);
    const int64_t rows = g->size[swin_ring_o1(g)];
    if (row_lo < 0 || row_lo > row_hi || row_hi > rows)
        return fail(o, be, SWIN_ERR_SHAPE, "ring_finish: rows [%lld, %lld) outside the %lld rows of a plane",
                    (long long)row_lo, (long long)row_hi, (long long)rows);
    if (probs && !g->probs)
        return fail(o, be, SWIN_ERR_ARG, "ring_finish: probabilities asked for, but the ring was planned without");
    if (!nonfinite) return fail(o, be, SWIN_ERR_ARG, "ring_finish: nonfinite is NULL");
    return o->ring_finish(be, ring, g, plane, row_lo, row_hi, labels, probs, nonfinite);
}
