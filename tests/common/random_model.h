/* A SwinUNETR model with random weights built in code (MONAI's default configuration,
 * 1 -> 3 channels), for the forward tests and the forward timing on a GPU: no ONNX file. */
#ifndef SWIN_TEST_RANDOM_MODEL_H
#define SWIN_TEST_RANDOM_MODEL_H

#include <stddef.h>

#include "core/model.h"
#include "tests/common/check.h"

struct test_model_builder {
    char *flat;       /* caller's buffer, 256-byte aligned, of cap bytes */
    size_t used, cap;
    test_rng rng;
};

/* Bytes of flat a feature size f needs (an upper bound: 24 MiB per (f / 12)^2). */
size_t test_random_model_cap(int f);

/* Fills m with weights uniform in +-sqrt(3 / fan-in) (norm scales around 1, small biases)
 * from b->rng, stored in b->flat; exits on overflow of b->cap. */
void test_random_model(struct swin_model *m, struct test_model_builder *b, int f);
/* The same with heads[s] attention heads in stage s instead of 3 << s (NULL: default). */
void test_random_model_heads(struct swin_model *m, struct test_model_builder *b, int f, const int heads[4]);

#endif
