/* instnorm_act_conv1x1's apply pass at the AVX-512 level (16 lanes; compiled for it only; the
 * backend checks the CPU first): instnorm_conv1x1_tmpl.h. */
#include "kernels/cpu/vec_avx512.h"

#define NORM_CONV1X1_FN swin_cpu_norm_conv1x1_avx512
#include "kernels/cpu/norm/instnorm_conv1x1_tmpl.h"
