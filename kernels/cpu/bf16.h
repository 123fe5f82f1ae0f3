/* bfloat16 (the upper 16 bits of a float32: sign, 8 exponent bits, 7 mantissa bits) and
 * its conversions, shared by the CPU backend's bf16 kernels and the weight conversion. */
#ifndef SWIN_CPU_BF16_H
#define SWIN_CPU_BF16_H

#include <stdint.h>
#include <string.h>

typedef uint16_t swin_bf16;

/* Round to nearest, ties to even; NaN stays a (quiet) NaN, +-inf and overflow to inf as
 * IEEE rounding does. */
static inline swin_bf16 swin_bf16_from_f32(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (swin_bf16)((u >> 16) | 0x0040u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (swin_bf16)(u >> 16);
}

static inline float swin_bf16_to_f32(swin_bf16 h)
{
    const uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* f rounded to the nearest bfloat16, as a float32. */
static inline float swin_bf16_round(float f) { return swin_bf16_to_f32(swin_bf16_from_f32(f)); }

#endif
