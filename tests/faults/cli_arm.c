/* Arms alloc_fault.h for the whole process from the environment: linked into
 * swinrun_alloc_faults, the CLI with the allocation wrappers (tests/faults/CMakeLists.txt).
 *   SWIN_FAIL_ALLOC=N   the Nth allocation of the process fails (0: none)
 *   SWIN_ALLOC_LOG=FILE at exit, FILE gets the number of allocations on its first line,
 *                       then the call-stack hash of each, one per line */
#include <stdio.h>
#include <stdlib.h>

#include "tests/faults/alloc_fault.h"

#define CAP 400000

static void **sites;
static unsigned long *stacks;

__attribute__((constructor)) static void arm_from_environment(void)
{
    const char *n = getenv("SWIN_FAIL_ALLOC"), *log = getenv("SWIN_ALLOC_LOG");
    if (!n && !log) return;
    if (log) {
        sites = calloc(CAP, sizeof *sites);
        stacks = calloc(CAP, sizeof *stacks);
        if (sites && stacks) alloc_fault_record(sites, stacks, CAP);
    }
    alloc_fault_arm(n ? atol(n) : 0);
}

__attribute__((destructor)) static void write_log(void)
{
    const char *log = getenv("SWIN_ALLOC_LOG");
    if (!log || !stacks) return;
    long count = alloc_fault_count();
    alloc_fault_disarm();
    FILE *f = fopen(log, "w");
    if (!f) return;
    fprintf(f, "%ld\n", count);
    for (long i = 0; i < count && i < CAP; i++) fprintf(f, "%lx\n", stacks[i]);
    fclose(f);
}
