/* Bit, integer and conversion intrinsics, one result each per thread. */
#include "kernels/cuda/swin_launch.h"
#include "tests/cuemu/selftest/k_intrin.h"

__global__ void intrinsics(const unsigned *a, const unsigned *b, const unsigned *s, const float *f,
                           unsigned *out)
{
    int i = threadIdx.x;
    unsigned x = a[i], y = b[i], sh = s[i];
    unsigned long long w = (unsigned long long)x << 32 | y;
    unsigned *o = out + i * KI_OUTS;
    o[KI_POPC] = (unsigned)__popc(x);
    o[KI_CLZ] = (unsigned)__clz((int)x);
    o[KI_FFS] = (unsigned)__ffs((int)x);
    o[KI_BREV] = __brev(x);
    o[KI_BYTE_PERM] = __byte_perm(x, y, sh);
    o[KI_FSHL] = __funnelshift_l(x, y, sh);
    o[KI_FSHR] = __funnelshift_r(x, y, sh);
    o[KI_FSHLC] = __funnelshift_lc(x, y, sh);
    o[KI_FSHRC] = __funnelshift_rc(x, y, sh);
    o[KI_MUL24] = (unsigned)__mul24((int)x, (int)y);
    o[KI_UMUL24] = __umul24(x, y);
    o[KI_MULHI] = (unsigned)__mulhi((int)x, (int)y);
    o[KI_UMULHI] = __umulhi(x, y);
    o[KI_POPCLL] = (unsigned)__popcll(w);
    o[KI_CLZLL] = (unsigned)__clzll((long long)w);
    o[KI_FFSLL] = (unsigned)__ffsll((long long)w);
    o[KI_BREVLL_LO] = (unsigned)__brevll(w);
    o[KI_BREVLL_HI] = (unsigned)(__brevll(w) >> 32);
    o[KI_F2I_RN] = (unsigned)__float2int_rn(f[i]);
    o[KI_F2I_RZ] = (unsigned)__float2int_rz(f[i]);
    o[KI_F2I_RD] = (unsigned)__float2int_rd(f[i]);
    o[KI_F2I_RU] = (unsigned)__float2int_ru(f[i]);
    o[KI_SAT] = __float_as_uint(__saturatef(f[i] / 8.0f));
    o[KI_MIN_MIXED] = min((int)x, y);
    o[KI_MAX_MIXED] = max(x, (int)y);
}

extern "C" cudaError_t ki_all(const unsigned *a, const unsigned *b, const unsigned *s,
                              const float *f, unsigned *out, int n)
{
    SWIN_LAUNCH(intrinsics, 1, n)(a, b, s, f, out);
    return cudaGetLastError();
}
