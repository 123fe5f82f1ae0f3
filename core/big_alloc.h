/* Large host buffers (the activation arena, the weights) on transparent huge pages where the
 * kernel offers them. The forward pass walks buffers of hundreds of MiB with strides of a few
 * KiB to MiB (a Winograd tile's 36 input rows sit on 36 different 4 KiB pages); with 4 KiB
 * pages every such row costs a TLB walk, with 2 MiB pages a plane of a 96^3 x 48 map is one
 * or two entries. Linux in THP "madvise" mode (Debian's and Ubuntu's default) gives huge pages
 * only to ranges that ask: these ask before their first touch. Elsewhere, or where the kernel
 * refuses, the buffer is an ordinary one. Free with swin_big_free. */
#ifndef SWIN_BIG_ALLOC_H
#define SWIN_BIG_ALLOC_H

#include <stddef.h>

/* bytes rounded up to the alignment (at least `align`, a power of two; 2 MiB for buffers of
 * 2 MiB or more); NULL when out of memory. Contents undefined. */
void *swin_big_alloc(size_t bytes, size_t align);
void swin_big_free(void *p);

#endif
