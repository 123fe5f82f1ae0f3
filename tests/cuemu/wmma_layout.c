/* The wmma fragment slot maps (see wmma.h): identity, or a random permutation per
 * matrix use and tile size under CUEMU_WMMA_LAYOUT=scrambled:SEED. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/cuemu/cuemu_abi.h"
#include "tests/cuemu/emu_internal.h"

static unsigned short maps[3][2][256]; /* [use][E == 256][element] */
static unsigned long long seed;       /* 0: identity */
static int ready;

static unsigned long long splitmix(unsigned long long *s)
{
    unsigned long long z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void build(void)
{
    for (int use = 0; use < 3; use++)
        for (int big = 0; big < 2; big++) {
            unsigned n = big ? 256 : 128;
            unsigned short *m = maps[use][big];
            unsigned long long s = seed * 6 + (unsigned long long)(use * 2 + big);
            for (unsigned i = 0; i < n; i++)
                m[i] = (unsigned short)i;
            for (unsigned i = n - 1; seed && i > 0; i--) {
                unsigned j = (unsigned)(splitmix(&s) % (i + 1));
                unsigned short t = m[i];
                m[i] = m[j];
                m[j] = t;
            }
        }
    ready = 1;
}

void cuemu_set_wmma_layout(unsigned long long s)
{
    seed = s;
    build();
}

const unsigned short *cuemu_wmma_slot_map(int use, unsigned elements)
{
    if (!ready) {
        const char *e = getenv("CUEMU_WMMA_LAYOUT");
        if (e && !strncmp(e, "scrambled:", 10)) {
            seed = strtoull(e + 10, NULL, 0);
            if (!seed)
                seed = 1;
        } else if (e && strcmp(e, "identity") != 0) {
            fprintf(stderr, "cuemu: CUEMU_WMMA_LAYOUT=%s not understood (identity, "
                            "scrambled:SEED); using identity\n", e);
        }
        build();
    }
    return maps[use][elements == 256];
}
