/* 4-lane float vectors (GCC/Clang vector extensions, one SSE2 register) for the loops the
 * compiler will not vectorise by itself: selects under the default -ftrapping-math.
 * Loads and stores go through constant-size memcpy (one unaligned move). */
#ifndef SWIN_CPU_VEC_H
#define SWIN_CPU_VEC_H

#include <stdint.h>
#include <string.h>

typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));
/* 4 doubles (two SSE2 registers); used only inside functions, never passed by value */
typedef double v4d __attribute__((vector_size(32)));

static inline v4f load4(const float *p)
{
    v4f v;
    memcpy(&v, p, sizeof v);
    return v;
}

#endif
