/* core/big_alloc: sizes, alignment, and that a large buffer really sits on huge pages where the
 * kernel offers transparent huge pages (read back from /proc/self/smaps). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/big_alloc.h"
#include "tests/common/check.h"

#define MIB ((size_t)1 << 20)

/* "always" or "madvise" selected in the kernel's THP switch. */
static bool thp_offered(void)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (!f) return false;
    char line[128] = {0};
    const bool got = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    return got && (strstr(line, "[always]") || strstr(line, "[madvise]"));
}

/* kB of AnonHugePages of the mapping holding p, -1 when not found. */
static long huge_kb_at(const void *p)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f) return -1;
    char line[512];
    bool inside = false;
    long kb = -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) { /* a mapping's first line */
            if (inside) break;
            inside = (uintptr_t)p >= lo && (uintptr_t)p < hi;
            continue;
        }
        if (inside && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1) break;
    }
    fclose(f);
    return kb;
}

int main(void)
{
    bool ok = true;
    const size_t sizes[] = {0, 1, 4096, 2 * MIB - 1, 2 * MIB, 3 * MIB + 5, 64 * MIB};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        unsigned char *p = swin_big_alloc(sizes[i], 256);
        char what[96];
        snprintf(what, sizeof what, "%zu bytes: allocated", sizes[i]);
        ok &= check_true(what, p != NULL);
        if (!p) continue;
        const size_t want = sizes[i] >= 2 * MIB ? 2 * MIB : 256;
        snprintf(what, sizeof what, "%zu bytes: aligned to %zu", sizes[i], want);
        ok &= check_true(what, (uintptr_t)p % want == 0);
        memset(p, 0xa5, sizes[i] ? sizes[i] : 1);
        if (sizes[i] == 64 * MIB) {
            if (!thp_offered()) {
                printf("skipped: the huge-page check (transparent huge pages are off on this host)\n");
            } else {
                const long kb = huge_kb_at(p);
                printf("64 MiB buffer: %ld kB on huge pages\n", kb);
                ok &= check_true("64 MiB buffer: some of it on huge pages", kb >= 2048);
            }
        }
        swin_big_free(p);
    }
    swin_big_free(NULL);
    return test_exit(ok);
}
