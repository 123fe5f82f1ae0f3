/* Winograd F(6x6x6, 3x3x3) at the AVX2 level (AVX2 + FMA, compiled for it only; the backend
 * checks the CPU first): winograd_tmpl.h with F(6, 3) and 8 lanes, 8 channels per pass of the
 * transforms so that the input transform's 8^3-voxel buffer (16 KiB) leaves room in a 32 KiB
 * L1. */
#include "kernels/cpu/vec_avx2.h"

#define WINO_KERNELS swin_cpu_wino6_avx2
#define WINO_GEMM swin_cpu_winograd_avx2_gemm_point
#define WINO_PANEL 24
#define CHUNK 8
#include "kernels/cpu/winograd/winograd_f6.h"
#include "kernels/cpu/winograd/winograd_tmpl.h"
