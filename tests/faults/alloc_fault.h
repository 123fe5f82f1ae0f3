/* Allocation fault injection for the project's own code: linked into a test executable
 * with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=aligned_alloc,
 * --wrap=posix_memalign,--wrap=strdup,--wrap=strndup,--wrap=free (see CMakeLists.txt), it
 * sees every such call made by the objects of that link: the project's static libraries
 * (loader, planner, CPU backend, API, pipeline, CLI code) and, in the emulated CUDA build,
 * the CUDA emulator (cudaMalloc). Allocations made inside shared libraries (libc itself,
 * nifti_clib, zlib, OpenBLAS) are not seen; protobuf-c's are, because the loader hands it
 * an allocator that calls malloc.
 *
 * alloc_fault_arm(n) starts a count; the nth allocation after it returns NULL (ENOMEM).
 * Every allocation counted is also remembered until freed, so that a scenario can check
 * that it gave back everything it took. */
#ifndef SWIN_TEST_ALLOC_FAULT_H
#define SWIN_TEST_ALLOC_FAULT_H

#include <stdbool.h>
#include <stddef.h>

/* Starts counting: the nth allocation from now fails (n = 0: none does). Forgets the
 * allocations remembered so far. */
void alloc_fault_arm(long n);
/* Stops counting and failing. */
void alloc_fault_disarm(void);
/* Allocations counted since alloc_fault_arm. */
long alloc_fault_count(void);
/* Whether the nth allocation happened (and was failed). */
bool alloc_fault_fired(void);
/* The return address of the failed allocation's call (NULL when none failed). */
void *alloc_fault_site(void);
/* Allocations counted since alloc_fault_arm and not yet freed, and their bytes. */
long alloc_fault_live(size_t *bytes);

/* Where each allocation of the next armed runs is made from: the caller's return address
 * (site) and a hash of the call stack (up to 8 frames above the allocation function;
 * stack), for allocations 1..cap of each run. NULL arrays: stop recording (recording
 * walks the stack, which makes every allocation much slower). */
void alloc_fault_record(void **site, unsigned long *stack, long cap);

#endif
