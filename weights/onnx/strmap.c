#include "weights/onnx/strmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;   /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

bool swin_strmap_init(struct swin_strmap *m, size_t expected)
{
    size_t cap = 64;
    while (cap < expected * 2) cap *= 2;
    m->keys = calloc(cap, sizeof *m->keys);
    m->vals = malloc(cap * sizeof *m->vals);
    m->cap = cap;
    m->count = 0;
    if (!m->keys || !m->vals) {
        swin_strmap_free(m);
        return false;
    }
    return true;
}

void swin_strmap_free(struct swin_strmap *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

static bool rehash(struct swin_strmap *m)
{
    struct swin_strmap n;
    if (!swin_strmap_init(&n, m->cap)) return false;
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i]) swin_strmap_put(&n, m->keys[i], m->vals[i]);
    swin_strmap_free(m);
    *m = n;
    return true;
}

bool swin_strmap_put(struct swin_strmap *m, const char *key, int val)
{
    if ((m->count + 1) * 2 > m->cap && !rehash(m)) return false;
    size_t i = hash(key) & (m->cap - 1);
    while (m->keys[i] && strcmp(m->keys[i], key)) i = (i + 1) & (m->cap - 1);
    if (!m->keys[i]) m->count++;
    m->keys[i] = key;
    m->vals[i] = val;
    return true;
}

int swin_strmap_get(const struct swin_strmap *m, const char *key)
{
    if (!m->cap) return -1;
    size_t i = hash(key) & (m->cap - 1);
    while (m->keys[i]) {
        if (!strcmp(m->keys[i], key)) return m->vals[i];
        i = (i + 1) & (m->cap - 1);
    }
    return -1;
}
