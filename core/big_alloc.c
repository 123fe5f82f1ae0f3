/* Large host buffers on transparent huge pages (big_alloc.h). */
#define _DEFAULT_SOURCE
#include "core/big_alloc.h"

#include <stdint.h>
#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#define HUGE_PAGE ((size_t)2 << 20)

void *swin_big_alloc(size_t bytes, size_t align)
{
    if (bytes >= HUGE_PAGE && align < HUGE_PAGE) align = HUGE_PAGE;
    if (bytes == 0) bytes = 1;
    if (bytes > SIZE_MAX - align) return NULL;
    const size_t size = (bytes + align - 1) / align * align;
    void *p = aligned_alloc(align, size);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    /* advice only: a kernel without THP answers EINVAL and the pages stay small */
    if (p && size >= HUGE_PAGE) (void)madvise(p, size, MADV_HUGEPAGE);
#endif
    return p;
}

void swin_big_free(void *p) { free(p); }
