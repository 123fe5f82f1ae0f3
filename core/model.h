/* The model graph (struct swin_model): a Swin UNETR's configuration and one named field per weight.
 *
 * Everything here is host memory, float32, in the layouts that the op table expects
 * (see kernels/ops.h). The loader (weights/) fills it; forward() (runtime/forward.c)
 * reads it. All weight pointers point into one flat, 256-byte aligned buffer
 * (`flat`, `flat_bytes`), so a backend uploads it with one copy.
 *
 * Canonical weight layouts (row-major, the last index fastest):
 *   Linear          (in, out)                     y[t,o] = b[o] + sum_i x[t,i] W[i,o]
 *   Conv3d k^3      (kd, kh, kw, cin, cout)       cross-correlation, as PyTorch
 *   ConvTranspose2  (kd, kh, kw, cin, cout)       from PyTorch's (cin, cout, kd, kh, kw)
 *   bias table      ((2w1-1)(2w2-1)(2w3-1), heads) as PyTorch's relative_position_bias_table
 *   LN / IN affine  (C)
 */
#ifndef SWIN_MODEL_H
#define SWIN_MODEL_H

#include <stdbool.h>
#include <stddef.h>

struct swin_recipe;

#define SWIN_STAGES 4
#define SWIN_MAX_DEPTH 16   /* blocks per stage; MONAI defaults to 2 */
#define SWIN_DECODERS 5     /* decoder5 .. decoder1, stored as decoder[4] .. decoder[0] */
#define SWIN_MAX_NORM_GROUPS 4096  /* group norm's groups (torch.nn.GroupNorm num_groups) swinrun reads */

/* Offsets (o_d, o_h, o_w) of the 8 sub-grids that patch merging concatenates, in
 * concatenation order. MONAI >= 1.5 'merging', MONAI < 1.5 'merging' (which repeats two
 * offsets) and 'mergingv2' differ only in this order (docs/forward.md §3.5). */
typedef int swin_merge_order[8][3];

enum swin_merge_kind {
    SWIN_MERGE_V15 = 0,    /* 'merging', MONAI >= 1.5 */
    SWIN_MERGE_PRE15 = 1,  /* 'merging', MONAI 0.9 - 1.4 (duplicated offsets) */
    SWIN_MERGE_V2 = 2,     /* 'mergingv2' (lexicographic, W fastest) */
    SWIN_MERGE_OTHER = 3,  /* read from a graph, matches none of the above */
};

struct swin_config {
    int in_channels;              /* Ci */
    int out_channels;             /* Co, logits channels */
    int feature_size;             /* f; stage s has C_s = f * 2^s channels */
    int depths[SWIN_STAGES];      /* blocks per stage */
    int heads[SWIN_STAGES];       /* attention heads per stage */
    int window[3];                /* configured window (D, H, W), MONAI default 7 */
    int mlp_hidden[SWIN_STAGES];  /* MLP hidden width per stage, int(C_s * mlp_ratio) */
    bool qkv_bias;                /* qkv Linear has a bias */
    bool normalize;               /* proj_out LN on the 5 hidden states */
    bool patch_norm;              /* LN(f) with affine after the patch-embed conv */
    bool use_v2;                  /* residual conv block before each Swin stage */
    bool instnorm_affine;         /* CNN-block InstanceNorm has gamma/beta */
    bool batch_norm;              /* norm_name='batch': CNN blocks' batch norms folded into their convs */
    bool batch_norm_at_load;      /* ... folded by the loader (a checkpoint, an ONNX file's BatchNormalization nodes) */
    int norm_groups;              /* norm_name=('group', {'num_groups': G}): G; 0 for instance or batch norm */
    swin_merge_order merge_order; /* sub-grid order of every patch merging */
    enum swin_merge_kind merge_kind;
    int cube[3];                  /* export cube (D, H, W); 0 where the axis is dynamic */
    /* 0: stage s's bias tables are complete. n > 0: they were recovered from an export that
     * constant-folded the relative-position bias for n-token windows; only table rows
     * R_full[i][t], i, t < n, are known (the rest are 0), so only windows of at most n tokens
     * are covered (docs/forward.md §3.3 and §3.4). */
    int bias_tokens[SWIN_STAGES];
    /* The attention logits' scale per stage where the file stores another value than MONAI's
     * 1/sqrt(head dim) within 1 % (a float16 or bfloat16 copy of it); 0: MONAI's. */
    float attn_scale[SWIN_STAGES];
};

/* Where the ONNX file or checkpoint came from, as far as the file tells (for `swinrun info` and messages). */
struct swin_source {
    int opset;                        /* of the default ONNX domain */
    char exporter[256];               /* e.g. "torch.onnx dynamo exporter (pytorch 2.15.0)" */
    char post[192];                   /* traces of post-processing tools, "" when none; for a checkpoint
                                         (opset 0): where the values the weights cannot tell came from */
    char weight_storage[96];          /* e.g. "float32", "float16, cast to float32 in the graph" */
};

/* One Swin block (pre-norm, window attention then MLP). C = stage channels, h = heads. */
struct swin_block_w {
    const float *norm1_w, *norm1_b;   /* (C) */
    const float *qkv_w;               /* (C, 3C): columns [0,C) q, [C,2C) k, [2C,3C) v; head j owns hd columns */
    const float *qkv_b;               /* (3C) or NULL when !qkv_bias */
    const float *bias_table;          /* (T, h), T = (2w1-1)(2w2-1)(2w3-1) */
    const float *proj_w, *proj_b;     /* (C, C), (C) */
    const float *norm2_w, *norm2_b;   /* (C) */
    const float *fc1_w, *fc1_b;       /* (C, hidden), (hidden) */
    const float *fc2_w, *fc2_b;       /* (hidden, C), (C) */
};

/* UnetResBlock: conv1 3x3x3, conv2 3x3x3, conv3 1x1x1 (only when cin != cout), each followed
 * by an InstanceNorm, or a GroupNorm of norm_groups groups (0: instance norm); norm*_w/_b are
 * its affine parameters, NULL unless instnorm_affine or group norm (always affine).
 * With norm_name='batch' the exporters fold each (inference-mode) batch norm into the conv
 * before it: bn_folded, the convs carry the folded biases and no norm follows them. */
struct swin_resblock_w {
    int cin, cout;
    bool bn_folded;
    int norm_groups;
    const float *conv1_w;             /* (3,3,3, cin, cout) */
    const float *conv2_w;             /* (3,3,3, cout, cout) */
    const float *conv3_w;             /* (1,1,1, cin, cout) or NULL */
    const float *conv1_b, *conv2_b, *conv3_b;  /* (cout), only when bn_folded */
    const float *norm1_w, *norm1_b, *norm2_w, *norm2_b, *norm3_w, *norm3_b;
};

struct swin_stage_w {
    struct swin_block_w block[SWIN_MAX_DEPTH];
    struct swin_resblock_w v2;        /* use_v2 only: layers{s}c, cin == cout, no conv3 */
    const float *merge_norm_w, *merge_norm_b;  /* (8C) */
    const float *merge_red_w;         /* (8C, 2C), no bias */
};

struct swin_upblock_w {
    const float *transp_w;            /* (2,2,2, cin, cout), no bias */
    struct swin_resblock_w res;       /* 2*cout -> cout */
};

struct swin_model {
    struct swin_config cfg;
    const float *patch_w;             /* (2,2,2, Ci, f) */
    const float *patch_b;             /* (f) */
    const float *patch_norm_w, *patch_norm_b;  /* (f), only with patch_norm */
    struct swin_stage_w stage[SWIN_STAGES];
    /* encoder[0] = encoder1 (Ci->f), [1] encoder2 (f), [2] encoder3 (2f), [3] encoder4 (4f),
     * [4] encoder10 (16f) */
    struct swin_resblock_w encoder[5];
    /* decoder[4] = decoder5 (16f->8f) ... decoder[0] = decoder1 (f->f) */
    struct swin_upblock_w decoder[SWIN_DECODERS];
    const float *out_w;               /* (1,1,1, f, Co) */
    const float *out_b;               /* (Co) */

    struct swin_source source;
    struct swin_recipe *recipe;       /* a MONAI bundle's recipe (malloc'd), NULL for any other file */

    void *flat;                       /* the one weight buffer every pointer above points into */
    size_t flat_bytes;
    size_t param_count;               /* number of float parameters */
};

/* Stage channel count C_s = f * 2^s. */
static inline int swin_stage_channels(const struct swin_config *c, int s) { return c->feature_size << s; }

/* Size of the relative-position bias table: (2w1-1)(2w2-1)(2w3-1). */
static inline int swin_bias_table_rows(const struct swin_config *c)
{
    return (2 * c->window[0] - 1) * (2 * c->window[1] - 1) * (2 * c->window[2] - 1);
}

/* The three reference merge orders (docs/forward.md §3.5). */
extern const swin_merge_order swin_merge_order_v15, swin_merge_order_pre15, swin_merge_order_v2;
const char *swin_merge_kind_name(enum swin_merge_kind k);

/* Frees the flat buffer; the struct itself is the caller's. NULL-safe. */
void swin_model_release(struct swin_model *m);

#endif
