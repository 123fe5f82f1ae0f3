/* Which convolutions of a Swin UNETR get Winograd weights: every 3x3x3 conv of the CNN
 * blocks, on the grid forward() (runtime/forward.c) runs it on, where the shape rule picks
 * Winograd. Grids as divisors of the window: encoder1 and decoder1 at 1, encoder2..4 and
 * decoder2..5 at 2^k (k = 1..4), encoder10 at 32, stage s's v2 block at 2^(s+1). */
#include "kernels/cpu/winograd.h"
#include "kernels/cpu/cpu_backend.h"

/* One conv where the rule holds: registered (transform), or only its bytes counted. */
static swin_status prepare_conv(struct swin_cpu_backend *be, const float *w, int cin, int cout, bool transform,
                                size_t *bytes, swin_error *err)
{
    if (!transform) {
        *bytes += swin_cpu_round(swin_cpu_winograd_u_floats(cin, cout) * sizeof(float));
        return SWIN_OK;
    }
    return swin_cpu_winograd_register(be, w, cin, cout, err);
}

/* conv1 (cin -> cout) and conv2 (cout -> cout) of one block, where the rule holds on the
 * window divided by `div`. */
static swin_status prepare_block(struct swin_cpu_backend *be, const struct swin_resblock_w *r, const int cube[3],
                                 int div, bool transform, size_t *bytes, swin_error *err)
{
    if (!r->conv1_w || !r->conv2_w || r->cin <= 0 || r->cout <= 0) return SWIN_OK;
    struct swin_vol g = {.d = cube[0] / div, .h = cube[1] / div, .w = cube[2] / div};
    if (g.d < 1 || g.h < 1 || g.w < 1) return SWIN_OK;
    struct swin_vol in = g, out = g;
    in.c = r->cin;
    out.c = r->cout;
    swin_status st = SWIN_OK;
    if (swin_cpu_winograd_wins(be, out, in)) st = prepare_conv(be, r->conv1_w, r->cin, r->cout, transform, bytes, err);
    in.c = r->cout;
    if (!st && swin_cpu_winograd_wins(be, out, in))
        st = prepare_conv(be, r->conv2_w, r->cout, r->cout, transform, bytes, err);
    return st;
}

swin_status swin_cpu_backend_winograd(struct swin_cpu_backend *be, const struct swin_model *m, const int cube[3],
                                      bool transform, size_t *bytes, swin_error *err)
{
    static const int enc_div[5] = {1, 2, 4, 8, 32};
    swin_status st = SWIN_OK;
    size_t counted = 0;
    for (int k = 0; k < 5 && !st; k++) st = prepare_block(be, &m->encoder[k], cube, enc_div[k], transform, &counted, err);
    for (int k = 0; k < SWIN_DECODERS && !st; k++)
        st = prepare_block(be, &m->decoder[k].res, cube, 1 << k, transform, &counted, err);
    if (m->cfg.use_v2)
        for (int s = 0; s < SWIN_STAGES && !st; s++)
            st = prepare_block(be, &m->stage[s].v2, cube, 2 << s, transform, &counted, err);
    *bytes = transform ? (be->wino ? be->wino->bytes : 0) : counted;
    return st;
}
