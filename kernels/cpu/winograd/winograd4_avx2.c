/* Winograd F(4x4x4, 3x3x3) at the AVX2 level (AVX2 + FMA, compiled for it only; the backend
 * checks the CPU first): winograd_tmpl.h with F(4, 3) and 8 lanes. */
#include "kernels/cpu/vec_avx2.h"

#define WINO_KERNELS swin_cpu_wino4_avx2
#define WINO_GEMM swin_cpu_winograd_avx2_gemm_point
#define WINO_PANEL 24
#include "kernels/cpu/winograd/winograd_f4.h"
#include "kernels/cpu/winograd/winograd_tmpl.h"
