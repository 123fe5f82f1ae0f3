/* The configured attention window, from the bias table's row count T = (2w1-1)(2w2-1)(2w3-1)
 * and, when the graph has it, the relative_position_index constant (N, N) with N = w1 w2 w3,
 * which is also checked entry by entry against R_full (docs/forward.md §3.3). */
#ifndef SWIN_WEIGHTS_WINDOW_H
#define SWIN_WEIGHTS_WINDOW_H

#include "weights/onnx/graph.h"

/* table_node: the Gather that reads the bias table; rows: the table's row count. */
swin_status swin_attn_window_detect(const struct swin_onnx_index *g, int table_node, int64_t rows, int window[3], swin_error *err);

/* The window a static export's first partition uses, read back from the qkv projection's
 * input: Reshape (-1, n, C) [<- Reshape to 2-D before a Gemm] <- Transpose (0, 1, 3, 5, 2, 4, 6, 7) <- Reshape (B, D/w1, w1,
 * H/w2, w2, W/w3, w3, C); false when the graph does not show it (shapes computed at run time).
 * It is the stage's effective window: a window axis the stage's grid shrank equals the grid. */
bool swin_window_from_partition(const struct swin_onnx_index *g, int qkv_node, int window[3], swin_error *err);

/* The window (w1, w2, w3), w1 w2 w3 = n, whose table has `rows` rows and whose R_full equals
 * the n x n index v entry by entry; false when none does. */
bool swin_window_from_index(const int64_t *v, int64_t n, int64_t rows, int window[3]);

/* R_full[i, t] for window w (tokens i, t < w1 w2 w3). */
static inline int64_t window_rel_index(const int w[3], int64_t i, int64_t t)
{
    int64_t i1 = i / (w[1] * w[2]), i2 = i / w[2] % w[1], i3 = i % w[2];
    int64_t t1 = t / (w[1] * w[2]), t2 = t / w[2] % w[1], t3 = t % w[2];
    return (i1 - t1 + w[0] - 1) * (2 * w[1] - 1) * (2 * w[2] - 1) + (i2 - t2 + w[1] - 1) * (2 * w[2] - 1) + (i3 - t3 + w[2] - 1);
}

#endif
