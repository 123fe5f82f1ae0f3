/* Conversion of ONNX weight payloads into the canonical layouts of core/model.h, read
 * in bounded chunks straight from the file so no second full-size copy is ever held. */
#ifndef SWIN_WEIGHTS_LAYOUT_H
#define SWIN_WEIGHTS_LAYOUT_H

#include "weights/onnx/onnx_file.h"

enum layout_kind {
    LAYOUT_COPY,      /* as stored */
    LAYOUT_OUT_IN,    /* source (d0 = out, d1 = in, k) -> (k, in, out): Conv (cout, cin, kd, kh, kw) and
                         Linear stored (out, in) (k = 1) */
    LAYOUT_IN_OUT,    /* source (d0 = in, d1 = out, k) -> (k, in, out): ConvTranspose (cin, cout, 2, 2, 2) */
    LAYOUT_ZERO,      /* no source: zeros (a bias the exporter dropped because it was all zero) */
    LAYOUT_ONE,       /* no source: ones (a scale an optimiser dropped because it was all one) */
};

/* Recovers a relative-position bias table (T, heads) from a constant-folded bias
 * (heads, n, n) = table[R_full[i][t]][j] for the configured window w: rows that no (i, t < n)
 * reaches stay 0. Entry (j, i, t) is t's flat element j strides[0] + i strides[1] + t strides[2]
 * ((n*n, n, 1) when stored as (heads, n, n); (1, n*heads, heads) for dynamo's folded
 * table[index] of (n*n, heads)). Fails when two entries of one table cell disagree (not a bias). */
swin_status swin_layout_unfold_bias(const struct swin_onnx_file *f, const struct swin_onnx_tensor *t, uint64_t heads, uint64_t n,
                                    const int64_t strides[3], const int window[3], float *dst, swin_error *err);

/* Writes d0*d1*k floats to dst. */
swin_status swin_layout_convert(const struct swin_onnx_file *f, const struct swin_onnx_tensor *t, enum layout_kind kind, uint64_t d0,
                           uint64_t d1, uint64_t k, float *dst, swin_error *err);

#endif
