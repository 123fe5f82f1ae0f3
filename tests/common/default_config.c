#include "tests/common/default_config.h"

#include <string.h>

void test_default_config(struct swin_config *c, int feature_size, int in_channels, int out_channels)
{
    memset(c, 0, sizeof *c);
    c->in_channels = in_channels;
    c->out_channels = out_channels;
    c->feature_size = feature_size;
    for (int s = 0; s < SWIN_STAGES; s++) {
        c->depths[s] = 2;
        c->heads[s] = 3 << s;
        c->mlp_hidden[s] = 4 * (feature_size << s);
    }
    c->window[0] = c->window[1] = c->window[2] = 7;
    c->qkv_bias = c->normalize = true;
    memcpy(c->merge_order, swin_merge_order_v15, sizeof c->merge_order);
    c->merge_kind = SWIN_MERGE_V15;
}
