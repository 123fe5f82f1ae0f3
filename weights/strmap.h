/* A string -> int hash map (open addressing). Keys are borrowed, not copied. */
#ifndef SWIN_WEIGHTS_STRMAP_H
#define SWIN_WEIGHTS_STRMAP_H

#include <stdbool.h>
#include <stddef.h>

struct strmap {
    const char **keys;
    int *vals;
    size_t cap, count;
};

bool strmap_init(struct strmap *m, size_t expected);
void strmap_free(struct strmap *m);
/* Inserts or replaces; false when out of memory. */
bool strmap_put(struct strmap *m, const char *key, int val);
/* The value for key, or -1. */
int strmap_get(const struct strmap *m, const char *key);

#endif
