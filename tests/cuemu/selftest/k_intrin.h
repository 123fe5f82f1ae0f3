/* Integer and float intrinsics (k_intrin.cu): thread i applies each intrinsic to
 * (a[i], b[i], s[i]) and writes result k to out[i * KI_OUTS + k]; f[i] feeds the float
 * conversions. One block of n threads. */
#ifndef TESTS_EMU_K_INTRIN_H
#define TESTS_EMU_K_INTRIN_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif
enum {
    KI_POPC, KI_CLZ, KI_FFS, KI_BREV, KI_BYTE_PERM, KI_FSHL, KI_FSHR, KI_FSHLC, KI_FSHRC,
    KI_MUL24, KI_UMUL24, KI_MULHI, KI_UMULHI, KI_POPCLL, KI_CLZLL, KI_FFSLL, KI_BREVLL_LO,
    KI_BREVLL_HI, KI_F2I_RN, KI_F2I_RZ, KI_F2I_RD, KI_F2I_RU, KI_SAT, KI_MIN_MIXED,
    KI_MAX_MIXED, KI_OUTS
};
cudaError_t ki_all(const unsigned *a, const unsigned *b, const unsigned *s, const float *f,
                   unsigned *out, int n);
#ifdef __cplusplus
}
#endif
#endif
