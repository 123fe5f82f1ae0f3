/* The CPU backend's bfloat16 copy of a model (precision BF16): the GEMM and convolution
 * weights (patch embedding, qkv, proj, fc1, fc2, patch-merging reduction, every conv and
 * transposed conv, the output conv) rounded to bfloat16 (nearest even); norms, biases and
 * the relative-position bias tables copied as float32. Each pointer of the copy points at
 * its tensor in the copy's flat buffer; a GEMM weight pointer (typed const float * as in
 * struct swin_model) points at bfloat16 data, which the CPU backend reads as such once
 * swin_cpu_backend_set_bf16 is on (kernels/cpu/cpu_backend.h). */
#ifndef SWIN_MODEL_BF16_H
#define SWIN_MODEL_BF16_H

#include <stddef.h>

#include "runtime/model.h"
#include "runtime/status.h"

/* Bytes of the flat buffer of m's bfloat16 copy (what the plan counts). */
size_t swin_model_bf16_bytes(const struct swin_model *m);
/* Makes the copy (one allocation of swin_model_bf16_bytes plus the struct). SWIN_ERR_NOMEM
 * when memory runs out; SWIN_ERR_ARG when a weight pointer lies outside m->flat. */
swin_status swin_model_bf16_copy(const struct swin_model *m, struct swin_model **out, swin_error *err);
/* NULL-safe. */
void swin_model_bf16_free(struct swin_model *c);

#endif
