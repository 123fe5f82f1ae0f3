/* The CPU backend's bfloat16 copy of a model (precision BF16): the GEMM and convolution
 * weights (patch embedding, qkv, proj, fc1, fc2, patch-merging reduction, every conv and
 * transposed conv, the output conv) rounded to bfloat16 (nearest even), except the classes
 * a keep mask names, which stay float32 like norms, biases and the relative-position bias
 * tables. Each pointer of the copy points at its tensor in the copy's flat buffer; the
 * bfloat16 tensors fill its first bf16_bytes, so a GEMM weight pointer (typed const float *
 * as in struct swin_model) inside that range points at bfloat16 data, which the CPU
 * backend reads as such once given the range (swin_cpu_backend_set_bf16,
 * kernels/cpu/cpu_backend.h). */
#ifndef SWIN_MODEL_BF16_H
#define SWIN_MODEL_BF16_H

#include <stddef.h>

#include "core/model.h"
#include "core/status.h"

/* GEMM weight classes a copy keeps in float32 (bit flags); their GEMMs read float32
 * inputs unrounded. */
enum swin_bf16_keep {
    SWIN_BF16_KEEP_STEM = 1u << 0,    /* the convs reading the image: patch embedding, encoder1's
                                         conv1 and 1x1x1 conv3 (cin = in_channels) */
    SWIN_BF16_KEEP_HEAD = 1u << 1,    /* the output 1x1x1 conv (f -> out_channels) */
    SWIN_BF16_KEEP_ATTN = 1u << 2,    /* qkv and proj of every Swin block */
    SWIN_BF16_KEEP_MLP = 1u << 3,     /* fc1 and fc2 of every Swin block */
    SWIN_BF16_KEEP_MERGE = 1u << 4,   /* patch-merging reductions */
    SWIN_BF16_KEEP_ENCODER = 1u << 5, /* encoder resblock convs besides the stem's, use_v2 blocks */
    SWIN_BF16_KEEP_DECODER = 1u << 6, /* decoder transposed convs and resblock convs */
};

/* What precision BF16 keeps in float32: the first convs (their input is the raw image,
 * whose rounding every later layer inherits) and the head (its rounding lands on the
 * logits unfiltered); together under 0.1 % of the weight bytes of f=48. */
#define SWIN_BF16_KEEP_DEFAULT (SWIN_BF16_KEEP_STEM | SWIN_BF16_KEEP_HEAD)

/* Bytes of the flat buffer of m's bfloat16 copy with mask keep (what the plan counts). */
size_t swin_model_bf16_bytes(const struct swin_model *m, unsigned keep);
/* Makes the copy (one allocation of swin_model_bf16_bytes plus the struct); *bf16_bytes:
 * the leading bytes of its flat buffer that hold the bfloat16 tensors. SWIN_ERR_NOMEM when
 * memory runs out; SWIN_ERR_ARG when a weight pointer lies outside m->flat. */
swin_status swin_model_bf16_copy(const struct swin_model *m, unsigned keep, struct swin_model **out,
                                 size_t *bf16_bytes, swin_error *err);
/* NULL-safe. */
void swin_model_bf16_free(struct swin_model *c);

#endif
