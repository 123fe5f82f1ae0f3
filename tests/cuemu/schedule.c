/* CUEMU_SCHEDULE: the order in which threads run between barriers and blocks run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/cuemu/emu_internal.h"

static int kind = -1; /* enum cuemu_schedule; -1 until read from the environment */
static unsigned long long state;

void cuemu_set_schedule(enum cuemu_schedule s, unsigned long long seed)
{
    kind = (int)s;
    state = seed ? seed : 0x9E3779B97F4A7C15ull; /* xorshift must not start at 0 */
}

enum cuemu_schedule cuemu_schedule_kind(void)
{
    if (kind < 0) {
        const char *e = getenv("CUEMU_SCHEDULE");
        if (!e || !*e || !strcmp(e, "forward")) {
            cuemu_set_schedule(CUEMU_SCHED_FORWARD, 0);
        } else if (!strcmp(e, "reverse")) {
            cuemu_set_schedule(CUEMU_SCHED_REVERSE, 0);
        } else if (!strncmp(e, "random:", 7)) {
            unsigned long long seed = strtoull(e + 7, NULL, 0);
            fprintf(stderr, "cuemu: schedule random:%llu\n", seed);
            cuemu_set_schedule(CUEMU_SCHED_RANDOM, seed);
        } else {
            fprintf(stderr, "cuemu: CUEMU_SCHEDULE=%s not understood (forward, reverse, "
                            "random:SEED); using forward\n", e);
            cuemu_set_schedule(CUEMU_SCHED_FORWARD, 0);
        }
    }
    return (enum cuemu_schedule)kind;
}

unsigned long long cuemu_schedule_rand(void)
{
    /* xorshift64* */
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545F4914F6CDD1Dull;
}
