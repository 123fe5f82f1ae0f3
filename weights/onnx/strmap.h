/* A string -> int hash map (open addressing). Keys are borrowed, not copied. */
#ifndef SWIN_WEIGHTS_STRMAP_H
#define SWIN_WEIGHTS_STRMAP_H

#include <stdbool.h>
#include <stddef.h>

struct swin_strmap {
    const char **keys;
    int *vals;
    size_t cap, count;
};

bool swin_strmap_init(struct swin_strmap *m, size_t expected);
void swin_strmap_free(struct swin_strmap *m);
/* Inserts or replaces; false when out of memory. */
bool swin_strmap_put(struct swin_strmap *m, const char *key, int val);
/* The value for key, or -1. */
int swin_strmap_get(const struct swin_strmap *m, const char *key);

#endif
