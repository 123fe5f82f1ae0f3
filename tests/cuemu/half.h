/* IEEE binary16 and bfloat16 conversions for the C sources (cuBLAS inputs/outputs). */
#ifndef CUEMU_HALF_H
#define CUEMU_HALF_H

float cuemu_half_to_float(unsigned short h);
unsigned short cuemu_float_to_half(float f);  /* round to nearest even */
float cuemu_bf16_to_float(unsigned short b);

#endif
