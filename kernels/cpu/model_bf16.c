/* The bfloat16 copy of a model (kernels/cpu/model_bf16.h).
 *
 * Tensor extents: the loader packs every tensor into m->flat at increasing, aligned
 * offsets with zero padding between them, so a tensor extends from its pointer to the
 * next tensor's (or the end of flat); padding is converted with it. The copy holds the
 * bfloat16 tensors first (half their extent's bytes), then the float32 ones (their
 * extent's bytes), each group in that order, each tensor at a SWIN_BF16_ALIGN-aligned
 * offset: the CPU backend tells a bfloat16 weight from a float32 one by that range. */
#include "kernels/cpu/model_bf16.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/big_alloc.h"
#include "core/recipe.h"
#include "kernels/cpu/bf16.h"

#define SWIN_BF16_ALIGN 64
/* Upper bound of weight pointer fields: 4 stages x (16 blocks x 13 + 3 + 12) + 4 + 5 x 12 +
 * 5 x 13 + 2. */
#define MAX_FIELDS 1100

struct field {
    const float **slot;
    bool gemm;   /* stored as bfloat16 */
};

/* A GEMM weight of class `cls` is stored as bfloat16 unless keep has that class. */
static bool bf16_of(unsigned keep, unsigned cls) { return !(keep & cls); }

struct fields {
    struct field f[MAX_FIELDS];
    int n;
};

static void add(struct fields *fs, const float **slot, bool gemm)
{
    if (*slot && fs->n < MAX_FIELDS) fs->f[fs->n++] = (struct field){slot, gemm};
}

/* stem: encoder1, whose conv1 and conv3 read the image itself (conv2 reads its conv1) */
static void add_res(struct fields *fs, struct swin_resblock_w *r, unsigned keep, unsigned cls, bool stem)
{
    const bool in = bf16_of(keep, stem ? SWIN_BF16_KEEP_STEM : cls), mid = bf16_of(keep, cls);
    add(fs, &r->conv1_w, in), add(fs, &r->conv2_w, mid), add(fs, &r->conv3_w, in);
    add(fs, &r->conv1_b, false), add(fs, &r->conv2_b, false), add(fs, &r->conv3_b, false);
    add(fs, &r->norm1_w, false), add(fs, &r->norm1_b, false), add(fs, &r->norm2_w, false);
    add(fs, &r->norm2_b, false), add(fs, &r->norm3_w, false), add(fs, &r->norm3_b, false);
}

/* Every weight pointer field of m that is set; GEMM weights of the classes in keep stay
 * float32. */
static void collect(struct swin_model *m, unsigned keep, struct fields *fs)
{
    fs->n = 0;
    add(fs, &m->patch_w, bf16_of(keep, SWIN_BF16_KEEP_STEM)), add(fs, &m->patch_b, false);
    add(fs, &m->patch_norm_w, false), add(fs, &m->patch_norm_b, false);
    for (int s = 0; s < SWIN_STAGES; s++) {
        struct swin_stage_w *st = &m->stage[s];
        for (int b = 0; b < SWIN_MAX_DEPTH; b++) {
            struct swin_block_w *k = &st->block[b];
            const bool attn = bf16_of(keep, SWIN_BF16_KEEP_ATTN), mlp = bf16_of(keep, SWIN_BF16_KEEP_MLP);
            add(fs, &k->norm1_w, false), add(fs, &k->norm1_b, false), add(fs, &k->qkv_w, attn);
            add(fs, &k->qkv_b, false), add(fs, &k->bias_table, false), add(fs, &k->proj_w, attn);
            add(fs, &k->proj_b, false), add(fs, &k->norm2_w, false), add(fs, &k->norm2_b, false);
            add(fs, &k->fc1_w, mlp), add(fs, &k->fc1_b, false), add(fs, &k->fc2_w, mlp), add(fs, &k->fc2_b, false);
        }
        add_res(fs, &st->v2, keep, SWIN_BF16_KEEP_ENCODER, false);
        add(fs, &st->merge_norm_w, false), add(fs, &st->merge_norm_b, false);
        add(fs, &st->merge_red_w, bf16_of(keep, SWIN_BF16_KEEP_MERGE));
    }
    for (int e = 0; e < 5; e++) add_res(fs, &m->encoder[e], keep, SWIN_BF16_KEEP_ENCODER, e == 0);
    for (int d = 0; d < SWIN_DECODERS; d++) {
        add(fs, &m->decoder[d].transp_w, bf16_of(keep, SWIN_BF16_KEEP_DECODER));
        add_res(fs, &m->decoder[d].res, keep, SWIN_BF16_KEEP_DECODER, false);
    }
    add(fs, &m->out_w, bf16_of(keep, SWIN_BF16_KEEP_HEAD)), add(fs, &m->out_b, false);
}

/* One distinct tensor: where it starts in m->flat, its extent, and whether every use of
 * it is a GEMM weight. */
struct swin_activation {
    size_t off, bytes, new_off;
    bool gemm;
};

static int by_off(const void *a, const void *b)
{
    const struct swin_activation *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

static size_t round_up(size_t n) { return (n + SWIN_BF16_ALIGN - 1) / SWIN_BF16_ALIGN * SWIN_BF16_ALIGN; }

/* The distinct tensors of fs in flat order, with their offsets in the copy: the bfloat16
 * ones first, in [0, *bf16_end), then the float32 ones. Returns their count and sets *total
 * to the copy's bytes, or -1 when a pointer lies outside m->flat. */
static int layout(const struct swin_model *m, const struct fields *fs, struct swin_activation *t, size_t *total,
                  size_t *bf16_end)
{
    const char *flat = m->flat;
    int n = 0;
    for (int i = 0; i < fs->n; i++) {
        const char *p = (const char *)*fs->f[i].slot;
        if (p < flat || p >= flat + m->flat_bytes) return -1;
        t[n++] = (struct swin_activation){.off = (size_t)(p - flat), .gemm = fs->f[i].gemm};
    }
    qsort(t, (size_t)n, sizeof *t, by_off);
    int u = 0;
    for (int i = 0; i < n; i++) {
        if (u && t[u - 1].off == t[i].off) {
            t[u - 1].gemm = t[u - 1].gemm && t[i].gemm;
            continue;
        }
        t[u++] = t[i];
    }
    for (int i = 0; i < u; i++) t[i].bytes = (i + 1 < u ? t[i + 1].off : m->flat_bytes) - t[i].off;
    size_t at = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < u; i++) {
            if (t[i].gemm != (pass == 0)) continue;
            t[i].new_off = at;
            at += round_up(t[i].gemm ? t[i].bytes / 2 : t[i].bytes);
        }
        if (pass == 0) *bf16_end = at;
    }
    *total = at;
    return u;
}

size_t swin_model_bf16_bytes(const struct swin_model *m, unsigned keep)
{
    struct fields fs;            /* about 50 KB of stack */
    struct swin_activation t[MAX_FIELDS];
    struct swin_model c = *m;
    size_t total = 0, bf16_end = 0;
    collect(&c, keep, &fs);
    return layout(m, &fs, t, &total, &bf16_end) < 0 ? m->flat_bytes : total;
}

swin_status swin_model_bf16_copy(const struct swin_model *m, unsigned keep, struct swin_model **out,
                                 size_t *bf16_bytes, swin_error *err)
{
    *out = NULL;
    *bf16_bytes = 0;
    struct fields *fs = malloc(sizeof *fs);
    struct swin_activation *t = malloc(MAX_FIELDS * sizeof *t);
    struct swin_model *c = malloc(sizeof *c);
    if (!fs || !t || !c) {
        free(fs), free(t), free(c);
        return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for the bfloat16 weights");
    }
    *c = *m;
    c->recipe = NULL; /* its own duplicate once the copy exists (below) */
    collect(c, keep, fs);
    size_t total = 0, bf16_end = 0;
    const int n = layout(m, fs, t, &total, &bf16_end);
    char *flat = n < 0 ? NULL : swin_big_alloc(total, 256);
    if (!flat) {
        free(fs), free(t), free(c);
        return n < 0 ? swin_error_set(err, SWIN_ERR_ARG, "bfloat16 copy: a weight lies outside the model's buffer")
                     : swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for the %.1f MiB of bfloat16 weights",
                                      total / (1024.0 * 1024.0));
    }
    memset(flat, 0, total);
    for (int i = 0; i < n; i++) {
        const float *src = (const float *)((const char *)m->flat + t[i].off);
        if (!t[i].gemm) {
            memcpy(flat + t[i].new_off, src, t[i].bytes);
            continue;
        }
        swin_bf16 *dst = (swin_bf16 *)(flat + t[i].new_off);
        for (size_t k = 0; k < t[i].bytes / sizeof(float); k++) dst[k] = swin_bf16_from_f32(src[k]);
    }
    /* every slot: the same tensor's place in the copy (binary search by old offset) */
    for (int i = 0; i < fs->n; i++) {
        const size_t off = (size_t)((const char *)*fs->f[i].slot - (const char *)m->flat);
        int lo = 0, hi = n - 1;
        while (lo < hi) {
            const int mid = (lo + hi) / 2;
            if (t[mid].off < off) lo = mid + 1;
            else hi = mid;
        }
        *fs->f[i].slot = (const float *)(flat + t[lo].new_off);
    }
    c->flat = flat;
    c->flat_bytes = total;
    if (m->recipe && (c->recipe = malloc(sizeof *c->recipe))) *c->recipe = *m->recipe;
    free(fs), free(t);
    *out = c;
    *bf16_bytes = bf16_end;
    return SWIN_OK;
}

void swin_model_bf16_free(struct swin_model *c)
{
    if (!c) return;
    swin_model_release(c);
    free(c);
}
