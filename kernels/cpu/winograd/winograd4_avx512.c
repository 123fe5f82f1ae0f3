/* Winograd F(4x4x4, 3x3x3) at the AVX-512 level (compiled for it only; the backend checks the
 * CPU first): winograd_tmpl.h with F(4, 3) and 16 lanes. */
#include "kernels/cpu/vec_avx512.h"

#define WINO_KERNELS swin_cpu_wino4_avx512
#define WINO_GEMM swin_cpu_winograd_avx512_gemm_point
#define WINO_PANEL 48
#include "kernels/cpu/winograd/winograd_f4.h"
#include "kernels/cpu/winograd/winograd_tmpl.h"
