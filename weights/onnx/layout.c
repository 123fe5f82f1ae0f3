#include "weights/onnx/layout.h"

#include "weights/onnx/window.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK_FLOATS (1u << 18)   /* 1 MiB of source rows at a time */

swin_status swin_layout_convert(const struct swin_onnx_file *f, const struct swin_onnx_tensor *t, enum layout_kind kind, uint64_t d0,
                           uint64_t d1, uint64_t k, float *dst, swin_error *err)
{
    uint64_t n = d0 * d1 * k;
    if (kind == LAYOUT_ZERO) {
        memset(dst, 0, (size_t)n * sizeof *dst);
        return SWIN_OK;
    }
    if (kind == LAYOUT_ONE) {
        for (uint64_t i = 0; i < n; i++) dst[i] = 1.0f;
        return SWIN_OK;
    }
    if (t->numel != n)
        return swin_error_set(err, SWIN_ERR_INTERNAL, "%s: tensor '%s' has %llu elements, layout expects %llu", f->path,
                              t->name, (unsigned long long)t->numel, (unsigned long long)n);
    if (kind == LAYOUT_COPY) return swin_onnx_tensor_read_f32(f, t, 0, n, dst, err);
    /* Source rows are indexed by d0; each holds d1 * k floats. */
    uint64_t row = d1 * k;
    uint64_t rows_per_chunk = row >= CHUNK_FLOATS ? 1 : CHUNK_FLOATS / row;
    if (rows_per_chunk > d0) rows_per_chunk = d0;
    float *buf = malloc((size_t)(rows_per_chunk * row) * sizeof *buf);
    if (!buf) return swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of host memory converting '%s'", f->path, t->name);
    swin_status st = SWIN_OK;
    for (uint64_t r0 = 0; r0 < d0 && !st; r0 += rows_per_chunk) {
        uint64_t nr = d0 - r0 < rows_per_chunk ? d0 - r0 : rows_per_chunk;
        if ((st = swin_onnx_tensor_read_f32(f, t, r0 * row, nr * row, buf, err))) break;
        for (uint64_t r = 0; r < nr; r++) {
            const float *src = buf + r * row;
            uint64_t i0 = r0 + r;
            for (uint64_t i1 = 0; i1 < d1; i1++)
                for (uint64_t kk = 0; kk < k; kk++) {
                    float v = src[i1 * k + kk];
                    if (kind == LAYOUT_OUT_IN)       /* (out=i0, in=i1, k) -> (k, in, out) */
                        dst[(kk * d1 + i1) * d0 + i0] = v;
                    else                             /* (in=i0, out=i1, k) -> (k, in, out) */
                        dst[(kk * d0 + i0) * d1 + i1] = v;
                }
        }
    }
    free(buf);
    return st;
}

swin_status swin_layout_unfold_bias(const struct swin_onnx_file *f, const struct swin_onnx_tensor *t, uint64_t heads, uint64_t n,
                                    const int64_t strides[3], const int window[3], float *dst, swin_error *err)
{
    uint64_t rows = (uint64_t)(2 * window[0] - 1) * (2 * window[1] - 1) * (2 * window[2] - 1);
    /* stored as (heads, n, n): read a query's row at a time; any other view: the whole source */
    bool rowwise = strides[0] == (int64_t)(n * n) && strides[1] == (int64_t)n && strides[2] == 1;
    uint64_t extent = (heads - 1) * (uint64_t)strides[0] + (n - 1) * ((uint64_t)strides[1] + (uint64_t)strides[2]) + 1;
    if (!rowwise && extent > t->numel)
        return swin_error_set(err, SWIN_ERR_INTERNAL, "%s: view of '%s' reaches past it", f->path, t->name);
    unsigned char *seen = calloc((size_t)(rows * heads), 1);
    float *buf = malloc((size_t)(rowwise ? n : extent) * sizeof *buf);
    if (!seen || !buf) {
        free(seen);
        free(buf);
        return swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of host memory unfolding '%s'", f->path, t->name);
    }
    memset(dst, 0, (size_t)(rows * heads) * sizeof *dst);
    swin_status st = rowwise ? SWIN_OK : swin_onnx_tensor_read_f32(f, t, 0, extent, buf, err);
    for (uint64_t j = 0; j < heads && !st; j++)
        for (uint64_t i = 0; i < n && !st; i++) {
            if (rowwise && (st = swin_onnx_tensor_read_f32(f, t, (j * n + i) * n, n, buf, err))) break;
            const float *row = rowwise ? buf : buf + j * (uint64_t)strides[0] + i * (uint64_t)strides[1];
            uint64_t step = rowwise ? 1 : (uint64_t)strides[2];
            for (uint64_t k = 0; k < n; k++) {
                uint64_t cell = (uint64_t)window_rel_index(window, (int64_t)i, (int64_t)k) * heads + j;
                float v = row[k * step];
                if (seen[cell] && dst[cell] != v) {
                    st = swin_error_set(err, SWIN_ERR_MODEL,
                                        "%s: constant '%s' is not a folded relative-position bias: entries (%llu, %llu, %llu) and an earlier one "
                                        "map to the same table cell but differ",
                                        f->path, t->name, (unsigned long long)j, (unsigned long long)i, (unsigned long long)k);
                    break;
                }
                dst[cell] = v;
                seen[cell] = 1;
            }
        }
    free(seen);
    free(buf);
    return st;
}
