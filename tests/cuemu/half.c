/* binary16: 1 sign, 5 exponent (bias 15), 10 mantissa bits. bfloat16: the top 16 bits
 * of a binary32. */
#include "tests/cuemu/half.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

float cuemu_half_to_float(unsigned short h)
{
    unsigned sign = h >> 15, exp = h >> 10 & 0x1F, man = h & 0x3FF;
    float v;
    if (exp == 0)
        v = ldexpf((float)man, -24); /* subnormal: man * 2^-24 */
    else if (exp == 31)
        v = man ? NAN : INFINITY;
    else
        v = ldexpf((float)(man | 0x400), (int)exp - 25);
    return sign ? -v : v;
}

unsigned short cuemu_float_to_half(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    unsigned short sign = (unsigned short)(b >> 16 & 0x8000);
    float a = fabsf(f);
    if (a != a)
        return sign | 0x7E00;
    if (a >= 65520.0f) /* rounds to infinity */
        return sign | 0x7C00;
    if (a < 6.103515625e-05f) /* subnormal range: multiples of 2^-24 */
        return sign | (unsigned short)nearbyintf(a * 16777216.0f);
    int e;
    float m = frexpf(a, &e);                    /* a = m * 2^e, m in [0.5, 1) */
    unsigned man = (unsigned)nearbyintf(m * 2048.0f); /* 11 significant bits */
    if (man == 2048) {                          /* rounding carried into the exponent */
        man = 1024;
        e++;
    }
    return sign | (unsigned short)((unsigned)(e + 14) << 10 | (man & 0x3FF));
}

float cuemu_bf16_to_float(unsigned short v)
{
    uint32_t b = (uint32_t)v << 16;
    float f;
    memcpy(&f, &b, 4);
    return f;
}
