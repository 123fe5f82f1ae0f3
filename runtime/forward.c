#include "runtime/forward.h"

#include "runtime/conv_call.h"
#include "runtime/forward_cnn.h"

void swin_block_geometry(const struct swin_config *c, int stage, int block, const int L[3],
                         struct swin_window_geom *g)
{
    *g = swin_window_geom_make(L, c->window, c->heads[stage], block % 2 == 1);
    g->scale = c->attn_scale[stage];
}

/* Swin blocks of one stage, in place on the residual stream x (channels-last). */
static void swin_stage_blocks(struct swin_exec *e, const struct swin_model *m, int s, struct swin_vol x)
{
    const int L[3] = {x.d, x.h, x.w};
    for (int b = 0; b < m->cfg.depths[s] && EXEC_OK(e); b++) {
        const struct swin_block_w *blk = &m->stage[s].block[b];
        struct swin_window_geom g;
        struct swin_workspace ws;
        swin_block_geometry(&m->cfg, s, b, L, &g);
        if (!swin_exec_workspace(e, &ws, e->ops->swin_attention_ws(e->be, x, &g), "attention workspace")) return;
        EXEC_OP(e, swin_attention, x, blk, &g, ws.data, ws.bytes);
        swin_exec_release(e, ws.id);
        int hidden = m->cfg.mlp_hidden[s];
        if (!swin_exec_workspace(e, &ws, e->ops->swin_mlp_ws(e->be, x, hidden), "mlp workspace")) return;
        EXEC_OP(e, swin_mlp, x, blk, hidden, ws.data, ws.bytes);
        swin_exec_release(e, ws.id);
    }
}

static struct swin_activation patch_merge(struct swin_exec *e, const struct swin_model *m, int s, struct swin_vol x)
{
    struct swin_activation y;
    struct swin_workspace ws;
    if (!swin_exec_activation(e, &y, x.d / 2, x.h / 2, x.w / 2, 2 * x.c, "merged")) return y;
    if (!swin_exec_workspace(e, &ws, e->ops->patch_merge_ws(e->be, y.v, x), "merge workspace")) return y;
    EXEC_OP(e, patch_merge, y.v, x, m->cfg.merge_order, m->stage[s].merge_norm_w,
            m->stage[s].merge_norm_b, m->stage[s].merge_red_w, ws.data, ws.bytes);
    swin_exec_release(e, ws.id);
    return y;
}

/* Order (docs/forward.md §1), arranged for a low peak:
 *  - each hidden state hs[s] is consumed as soon as it exists: encoder(s+1) runs on it and
 *    writes straight into the skip half of the concat of the decoder that needs it, so no
 *    full-resolution map exists before encoder1;
 *  - hs[3] (the raw skip of decoder5) is normalized straight into that concat half;
 *  - encoder1 (full resolution) runs last, after decoder1's concat holds the upsampled half,
 *    and writes its output straight into the other half; each decoder's residual conv
 *    overwrites its concat in place, so at full resolution no more than three f-channel maps
 *    are live (docs/memory-plan.md).
 * cat[k] is the concat of decoder[k]: channels [0, cout) = upsampled, [cout, 2 cout) = skip. */
swin_status swin_forward(struct swin_exec *e, const struct swin_model *m, const int cube[3],
                         const float *host_in, float *host_out)
{
    const struct swin_config *c = &m->cfg;
    const int f = c->feature_size;
    struct swin_activation X, x, cat[SWIN_DECODERS], d, logits;

    if (!swin_exec_activation(e, &X, cube[0], cube[1], cube[2], c->in_channels, "input")) return e->status;
    EXEC_OP(e, pack_input, X.v, host_in);

    if (!swin_exec_activation(e, &x, cube[0] / 2, cube[1] / 2, cube[2] / 2, f, "patch embed")) return e->status;
    swin_fwd_conv(e, x.v, NULL, X.v, m->patch_w, m->patch_b, 2, 2, 0);
    if (c->patch_norm) EXEC_OP(e, layernorm, x.v, x.v, m->patch_norm_w, m->patch_norm_b);

    for (int s = 0; s < SWIN_STAGES && EXEC_OK(e); s++) {
        const int C = f << s;
        const int k = s + 1;  /* the decoder whose skip hs[s] feeds */
        if (!swin_exec_activation(e, &cat[k], x.v.d, x.v.h, x.v.w, 2 * C, "decoder concat")) return e->status;
        struct swin_vol skip = vol_channels(cat[k].v, C, C);
        if (s == 3) {
            /* hs[3] is decoder5's raw skip */
            if (c->normalize) EXEC_OP(e, layernorm, skip, x.v, NULL, NULL);
            else EXEC_OP(e, copy, skip, x.v);
        } else {
            struct swin_activation hs = {.v = x.v, .id = -1};
            if (c->normalize) {
                if (!swin_exec_activation(e, &hs, x.v.d, x.v.h, x.v.w, C, "hidden state")) return e->status;
                EXEC_OP(e, layernorm, hs.v, x.v, NULL, NULL);
            }
            swin_fwd_resblock(e, hs.v, hs.id, &m->encoder[k], &skip, "encoder");
        }
        if (c->use_v2) {
            x = swin_fwd_resblock(e, x.v, x.id, &m->stage[s].v2, NULL, "v2 block");
        }
        swin_stage_blocks(e, m, s, x.v);
        struct swin_activation y = patch_merge(e, m, s, x.v);
        swin_exec_release(e, x.id);
        x = y;
    }
    if (!EXEC_OK(e)) return e->status;

    /* hs[4] -> encoder10 */
    if (c->normalize) EXEC_OP(e, layernorm, x.v, x.v, NULL, NULL);
    d = swin_fwd_resblock(e, x.v, x.id, &m->encoder[4], NULL, "encoder10");

    /* decoder5 .. decoder2 */
    for (int k = SWIN_DECODERS - 1; k >= 1 && EXEC_OK(e); k--) {
        const struct swin_upblock_w *u = &m->decoder[k];
        EXEC_OP(e, conv_transpose2, vol_channels(cat[k].v, 0, u->res.cout), d.v, u->transp_w);
        swin_exec_release(e, d.id);
        d = swin_fwd_resblock(e, cat[k].v, cat[k].id, &u->res, NULL, "decoder");
    }
    if (!EXEC_OK(e)) return e->status;

    /* decoder1's concat: the upsampled dec0 in its lower half (dec0 then dies), then
     * encoder1(X) straight into the upper half */
    if (!swin_exec_activation(e, &cat[0], cube[0], cube[1], cube[2], 2 * f, "decoder concat")) return e->status;
    EXEC_OP(e, conv_transpose2, vol_channels(cat[0].v, 0, f), d.v, m->decoder[0].transp_w);
    swin_exec_release(e, d.id);
    const struct swin_vol enc0 = vol_channels(cat[0].v, f, f);
    swin_fwd_resblock(e, X.v, X.id, &m->encoder[0], &enc0, "encoder1");
    logits = swin_fwd_resblock_head(e, cat[0].v, cat[0].id, &m->decoder[0].res, m->out_w, m->out_b, c->out_channels,
                                    "decoder1");
    if (!EXEC_OK(e)) return e->status;
    if (e->ring) EXEC_OP(e, ring_add, e->ring, e->ring_geom, logits.v, e->ring_start);
    else EXEC_OP(e, unpack_output, host_out, logits.v);
    swin_exec_release(e, logits.id);
    return e->status;
}
