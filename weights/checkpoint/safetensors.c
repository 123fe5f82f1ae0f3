/* .safetensors: an 8-byte little-endian header length N, N bytes of JSON
 * {"KEY": {"dtype": "F32", "shape": [...], "data_offsets": [BEGIN, END]}, "__metadata__": {...}},
 * then the data, each tensor contiguous at [BEGIN, END) of it. */
#include "weights/checkpoint/ckpt_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAIL(st, ...) swin_error_set(err, st, __VA_ARGS__)
#define MAX_HEADER (100u << 20)   /* the format's own limit */

static bool to_u64(const json_node *n, uint64_t *v)
{
    if (!n || n->kind != JSON_NUMBER || !n->text || n->text[0] < '0' || n->text[0] > '9') return false;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(n->text, &end, 10);
    if (*end || errno) return false;
    *v = x;
    return true;
}

static enum pk_dtype dtype_of(const char *s)
{
    static const struct { const char *n; enum pk_dtype t; } m[] = {
        {"F32", PK_F32}, {"F16", PK_F16}, {"BF16", PK_BF16}, {"F64", PK_F64}, {"I64", PK_I64},
        {"I32", PK_I32}, {"I16", PK_I16}, {"I8", PK_I8}, {"U8", PK_U8}, {"BOOL", PK_BOOL8},
    };
    for (size_t i = 0; s && i < sizeof m / sizeof *m; i++)
        if (!strcmp(s, m[i].n)) return m[i].t;
    return PK_DTYPE_UNKNOWN;
}

struct span { uint64_t b, e; };

static int by_begin(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    return x->b < y->b ? -1 : x->b > y->b;
}

swin_status swin_safetensors_read(struct swin_ckpt_file *c, swin_error *err)
{
    unsigned char lenb[8];
    swin_status st = swin_pread_exact(c->fd, c->path, 0, 8, lenb, err);
    if (st) return st;
    uint64_t hn = 0;
    for (int i = 8; i-- > 0;) hn = hn << 8 | lenb[i];
    if (hn > MAX_HEADER || hn > c->size - 8)
        return FAIL(SWIN_ERR_FORMAT, "%s: safetensors header of %llu bytes does not fit the file", c->path, (unsigned long long)hn);
    char *text = malloc((size_t)hn + 1);
    if (!text) return FAIL(SWIN_ERR_NOMEM, "%s: out of host memory", c->path);
    if ((st = swin_pread_exact(c->fd, c->path, 8, (size_t)hn, text, err))) {
        free(text);
        return st;
    }
    char why[160];
    c->json = swin_json_parse(text, (size_t)hn, why, sizeof why);
    free(text);
    if (!c->json) return FAIL(SWIN_ERR_FORMAT, "%s: safetensors header: %s", c->path, why);
    if (c->json->kind != JSON_OBJECT) return FAIL(SWIN_ERR_FORMAT, "%s: safetensors header is not a JSON object", c->path);
    size_t n = 0;
    for (const json_node *m = c->json->child; m; m = m->next) n++;
    c->t = calloc(n + 1, sizeof *c->t);
    struct span *spans = calloc(n + 1, sizeof *spans);
    if (!c->t || !spans) {
        free(spans);
        return FAIL(SWIN_ERR_NOMEM, "%s: out of host memory", c->path);
    }
    uint64_t data0 = 8 + hn, data_len = c->size - data0;
    int ns = 0;
    st = SWIN_OK;
    for (const json_node *m = c->json->child; m && !st; m = m->next) {
        if (!strcmp(m->key, "__metadata__")) continue;
        struct swin_ckpt_tensor *t = &c->t[c->n++];
        t->key = m->key;
        const json_node *sh = swin_json_get(m, "shape"), *off = swin_json_get(m, "data_offsets"), *dt = swin_json_get(m, "dtype");
        uint64_t b, e, numel = 1;
        t->dtype = dtype_of(dt && dt->kind == JSON_STRING ? dt->text : NULL);
        if (t->dtype == PK_DTYPE_UNKNOWN || !sh || sh->kind != JSON_ARRAY || swin_json_len(sh) > PK_MAX_RANK || swin_json_len(off) != 2 ||
            !to_u64(swin_json_at(off, 0), &b) || !to_u64(swin_json_at(off, 1), &e) || b > e || e > data_len) {
            st = FAIL(SWIN_ERR_FORMAT, "%s: safetensors entry '%s' lacks a known dtype, a shape of rank <= 8 or data_offsets "
                      "inside the file", c->path, m->key);
            break;
        }
        t->ndim = (int)swin_json_len(sh);
        for (int i = t->ndim; i-- > 0;) {
            uint64_t d;
            if (!to_u64(swin_json_at(sh, (size_t)i), &d) || d > ((uint64_t)1 << 40) || (d && numel > ((uint64_t)1 << 62) / d)) {
                st = FAIL(SWIN_ERR_FORMAT, "%s: safetensors entry '%s' has an impossible shape", c->path, m->key);
                break;
            }
            t->size[i] = (int64_t)d;
            t->stride[i] = (int64_t)numel;
            numel *= d;
        }
        if (st) break;
        size_t es = swin_pickle_dtype_size(t->dtype);
        if (numel > (e - b) / es || (e - b) != numel * es) {
            st = FAIL(SWIN_ERR_FORMAT, "%s: safetensors entry '%s' has %llu bytes for %llu %s elements", c->path, m->key,
                      (unsigned long long)(e - b), (unsigned long long)numel, swin_pickle_dtype_name(t->dtype));
            break;
        }
        t->storage_off = data0 + b;
        t->storage_numel = numel;
        spans[ns++] = (struct span){b, e};
    }
    if (!st) {
        qsort(spans, (size_t)ns, sizeof *spans, by_begin);
        for (int i = 1; i < ns && !st; i++)
            if (spans[i].b < spans[i - 1].e)
                st = FAIL(SWIN_ERR_FORMAT, "%s: safetensors entries overlap at data byte %llu", c->path, (unsigned long long)spans[i].b);
    }
    free(spans);
    snprintf(c->format, sizeof c->format, "safetensors");
    snprintf(c->where, sizeof c->where, "the top level");
    return st;
}
