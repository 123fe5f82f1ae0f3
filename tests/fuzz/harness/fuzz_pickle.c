/* libFuzzer harness: the pickle interpreter (weights/checkpoint/pickle.h) on the fuzzed bytes as data.pkl,
 * then a walk over what it built (every value reachable from the root, each once), as the state
 * dict search reads it. Nothing in the bytes may run, crash, leak or allocate beyond the budget. */
#include <stdint.h>
#include <stdlib.h>

#include "tests/fuzz/harness/fuzz_status.h"
#include "weights/checkpoint/pickle.h"

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
    struct swin_pickle p;
    swin_error err = {SWIN_OK, ""};
    swin_status st = swin_pickle_load(bytes, size, "data.pkl", &p, &err);
    fuzz_check_error(st, &err);
    if (st) return 0;
    /* breadth-first over the values (shared and cyclic ones visited again, up to 100000) */
    size_t cap = 64, n = 0, head = 0;
    const struct pk_value **q = malloc(cap * sizeof *q);
    if (!q) abort();
    q[n++] = p.root;
    for (; head < n; head++) {
        const struct pk_value *v = q[head];
        (void)swin_pickle_dict_get(v, "state_dict");
        if (v->kind == PK_TENSOR && (v->ndim < 0 || v->ndim > PK_MAX_RANK || v->storage->kind != PK_STORAGE)) abort();
        for (size_t i = 0; i < v->n && n < 100000; i++) {
            if (n == cap && !(q = realloc(q, (cap *= 2) * sizeof *q))) abort();
            q[n++] = v->items[i];
        }
    }
    free(q);
    swin_pickle_free(&p);
    return 0;
}
