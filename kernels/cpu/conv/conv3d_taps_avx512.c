/* The per-tap GEMMs at the AVX-512 level (compiled for it only; the backend checks the CPU
 * first): conv3d_taps_tmpl.h with 16 lanes. */
#include "kernels/cpu/vec_avx512.h"

#define TAPS_RUN swin_cpu_conv3d_taps_avx512_run
#include "kernels/cpu/conv/conv3d_taps_tmpl.h"
