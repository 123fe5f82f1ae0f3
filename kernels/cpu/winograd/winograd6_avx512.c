/* Winograd F(6x6x6, 3x3x3) at the AVX-512 level (compiled for it only; the backend checks the
 * CPU first): winograd_tmpl.h with F(6, 3) and 16 lanes. */
#include "kernels/cpu/vec_avx512.h"

#define WINO_KERNELS swin_cpu_wino6_avx512
#define WINO_GEMM swin_cpu_winograd_avx512_gemm_point
#define WINO_PANEL 48
#include "kernels/cpu/winograd/winograd_f6.h"
#include "kernels/cpu/winograd/winograd_tmpl.h"
