#include "weights/strmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;   /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

bool strmap_init(struct strmap *m, size_t expected)
{
    size_t cap = 64;
    while (cap < expected * 2) cap *= 2;
    m->keys = calloc(cap, sizeof *m->keys);
    m->vals = malloc(cap * sizeof *m->vals);
    m->cap = cap;
    m->count = 0;
    if (!m->keys || !m->vals) {
        strmap_free(m);
        return false;
    }
    return true;
}

void strmap_free(struct strmap *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

static bool rehash(struct strmap *m)
{
    struct strmap n;
    if (!strmap_init(&n, m->cap)) return false;
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i]) strmap_put(&n, m->keys[i], m->vals[i]);
    strmap_free(m);
    *m = n;
    return true;
}

bool strmap_put(struct strmap *m, const char *key, int val)
{
    if ((m->count + 1) * 2 > m->cap && !rehash(m)) return false;
    size_t i = hash(key) & (m->cap - 1);
    while (m->keys[i] && strcmp(m->keys[i], key)) i = (i + 1) & (m->cap - 1);
    if (!m->keys[i]) m->count++;
    m->keys[i] = key;
    m->vals[i] = val;
    return true;
}

int strmap_get(const struct strmap *m, const char *key)
{
    if (!m->cap) return -1;
    size_t i = hash(key) & (m->cap - 1);
    while (m->keys[i]) {
        if (!strcmp(m->keys[i], key)) return m->vals[i];
        i = (i + 1) & (m->cap - 1);
    }
    return -1;
}
