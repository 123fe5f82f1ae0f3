/* MONAI SwinUNETR's default configuration (depths 2,2,2,2, heads 3,6,12,24, window 7,
 * MLP ratio 4, qkv bias, normalize, MONAI >= 1.5 merge order) for tests that build a
 * model in code. */
#ifndef SWIN_TEST_DEFAULT_CONFIG_H
#define SWIN_TEST_DEFAULT_CONFIG_H

#include "core/model.h"

void test_default_config(struct swin_config *c, int feature_size, int in_channels, int out_channels);

#endif
