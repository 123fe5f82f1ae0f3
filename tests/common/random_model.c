/* Random-weight SwinUNETR models for the tests and benches (random_model.h). */
#include "tests/common/random_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/common/default_config.h"

size_t test_random_model_cap(int f)
{
    const size_t q = (size_t)(f + 11) / 12;
    return ((size_t)24 << 20) * q * q;
}

/* n floats uniform in [-a, a) + off, 256-byte aligned inside the flat buffer. */
static const float *param(struct test_model_builder *b, size_t n, float a, float off)
{
    size_t bytes = (n * sizeof(float) + 255) / 256 * 256;
    if (b->used + bytes > b->cap) {
        fprintf(stderr, "FAIL model buffer too small\n");
        exit(1);
    }
    float *p = (float *)(b->flat + b->used);
    b->used += bytes;
    test_fill_uniform(&b->rng, p, n, -a, a);
    for (size_t i = 0; i < n; i++) p[i] += off;
    return p;
}

static const float *conv_w(struct test_model_builder *b, int taps, int cin, int cout)
{
    return param(b, (size_t)taps * cin * cout, sqrtf(3.0f / (float)(taps * cin)), 0.0f);
}

static void resblock(struct test_model_builder *b, struct swin_resblock_w *r, int cin, int cout)
{
    r->cin = cin;
    r->cout = cout;
    r->conv1_w = conv_w(b, 27, cin, cout);
    r->conv2_w = conv_w(b, 27, cout, cout);
    r->conv3_w = cin != cout ? conv_w(b, 1, cin, cout) : NULL;
}

void test_random_model(struct swin_model *m, struct test_model_builder *b, int f)
{
    test_random_model_heads(m, b, f, NULL);
}

void test_random_model_heads(struct swin_model *m, struct test_model_builder *b, int f, const int heads[4])
{
    memset(m, 0, sizeof *m);
    struct swin_config *c = &m->cfg;
    test_default_config(c, f, 1, 3);
    for (int s = 0; heads && s < 4; s++) c->heads[s] = heads[s];
    m->patch_w = conv_w(b, 8, 1, f);
    m->patch_b = param(b, f, 0.1f, 0.0f);
    const int T = swin_bias_table_rows(c);
    for (int s = 0; s < 4; s++) {
        const int C = f << s, h = c->heads[s], hid = c->mlp_hidden[s];
        for (int k = 0; k < 2; k++) {
            struct swin_block_w *w = &m->stage[s].block[k];
            w->norm1_w = param(b, C, 0.2f, 1.0f);
            w->norm1_b = param(b, C, 0.1f, 0.0f);
            w->qkv_w = conv_w(b, 1, C, 3 * C);
            w->qkv_b = param(b, 3 * C, 0.1f, 0.0f);
            w->bias_table = param(b, (size_t)T * h, 0.5f, 0.0f);
            w->proj_w = conv_w(b, 1, C, C);
            w->proj_b = param(b, C, 0.1f, 0.0f);
            w->norm2_w = param(b, C, 0.2f, 1.0f);
            w->norm2_b = param(b, C, 0.1f, 0.0f);
            w->fc1_w = conv_w(b, 1, C, hid);
            w->fc1_b = param(b, hid, 0.1f, 0.0f);
            w->fc2_w = conv_w(b, 1, hid, C);
            w->fc2_b = param(b, C, 0.1f, 0.0f);
        }
        m->stage[s].merge_norm_w = param(b, 8 * C, 0.2f, 1.0f);
        m->stage[s].merge_norm_b = param(b, 8 * C, 0.1f, 0.0f);
        m->stage[s].merge_red_w = conv_w(b, 1, 8 * C, 2 * C);
    }
    resblock(b, &m->encoder[0], 1, f);
    for (int k = 1; k <= 3; k++) resblock(b, &m->encoder[k], f << (k - 1), f << (k - 1));
    resblock(b, &m->encoder[4], 16 * f, 16 * f);
    for (int k = 0; k < SWIN_DECODERS; k++) {
        const int cout = k == 0 ? f : f << (k - 1), cin = k == 0 ? f : 2 * cout;
        m->decoder[k].transp_w = conv_w(b, 8, cin, cout);
        resblock(b, &m->decoder[k].res, 2 * cout, cout);
    }
    m->out_w = conv_w(b, 1, f, c->out_channels);
    m->out_b = param(b, c->out_channels, 0.1f, 0.0f);
    m->flat = b->flat;
    m->flat_bytes = b->used;
}
