/* The per-tap GEMMs at the AVX2 level (AVX2 + FMA, compiled for it only; the backend checks the
 * CPU first): conv3d_taps_tmpl.h with 8 lanes. */
#include "kernels/cpu/vec_avx2.h"

#define TAPS_RUN swin_cpu_conv3d_taps_avx2_run
#include "kernels/cpu/conv/conv3d_taps_tmpl.h"
