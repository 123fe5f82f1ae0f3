/* Every atomic function on every type CUDA allows, from many threads and blocks. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/cuda/swin_launch.h"
#include "tests/cuemu/selftest/k_atomic.h"

/* CAS loops start from an atomic read (atomicAdd of 0, or a CAS that cannot change the
 * value): a plain read would race with the other threads' atomics. */
__global__ void atomic_all(atomic_buf *b)
{
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int a = g % 17 - 8; /* small signed values */
    unsigned u = (unsigned)g * 2654435761u;

    atomicAdd(&b->i_add, a);
    atomicSub(&b->i_sub, a);
    atomicAdd((unsigned long long *)&b->i_exch_olds, (unsigned long long)(long long)atomicExch(&b->i_exch, g));
    atomicMin(&b->i_min, a * 3);
    atomicMax(&b->i_max, a * 5);
    atomicAnd(&b->i_and, ~(1 << (g % 31)));
    atomicOr(&b->i_or, 1 << (g % 13));
    atomicXor(&b->i_xor, a);
    for (int old = atomicAdd(&b->i_cas, 0), seen; (seen = atomicCAS(&b->i_cas, old, old + 2)) != old; old = seen) {
    }

    atomicAdd(&b->u_add, u);
    atomicSub(&b->u_sub, (unsigned)g);
    atomicExch(&b->u_exch, (unsigned)g);
    atomicMin(&b->u_min, u);
    atomicMax(&b->u_max, u);
    atomicAnd(&b->u_and, ~(1u << (g % 32)));
    atomicOr(&b->u_or, 1u << (g % 29));
    atomicXor(&b->u_xor, u);
    for (unsigned old = atomicAdd(&b->u_cas, 0u), seen; (seen = atomicCAS(&b->u_cas, old, old + 3)) != old; old = seen) {
    }

    unsigned long long w = (unsigned long long)u << 20 | (unsigned)g;
    atomicAdd(&b->ull_add, w);
    atomicExch(&b->ull_exch, w);
    atomicMin(&b->ull_min, w);
    atomicMax(&b->ull_max, w);
    atomicAnd(&b->ull_and, ~(1ull << (g % 64)));
    atomicOr(&b->ull_or, 1ull << (g % 61));
    atomicXor(&b->ull_xor, w);
    for (unsigned long long old = atomicAdd(&b->ull_cas, 0ull), seen;
         (seen = atomicCAS(&b->ull_cas, old, old + 5)) != old; old = seen) {
    }
    atomicMin(&b->ll_min, (long long)a * 1000000007LL);
    atomicMax(&b->ll_max, (long long)a * 1000000007LL);

    atomicAdd(&b->f_add, (float)(g % 7));
    float of = atomicExch(&b->f_exch, (float)g);
    atomicAdd((unsigned long long *)&b->f_exch_olds, (unsigned long long)(long long)of);
    atomicAdd(&b->d_add, 0.25 * g);
    for (unsigned short old = atomicCAS(&b->us_cas, (unsigned short)0, (unsigned short)0), seen;
         (seen = atomicCAS(&b->us_cas, old, (unsigned short)(old + 1))) != old; old = seen) {
    }
    atomicAdd((__half *)&b->h_add, __float2half(1.0f));
    atomicAdd((__half2 *)&b->h2_add, __floats2half2_rn(1.0f, 2.0f));
    if (g < 128) /* bfloat16 holds integers exactly only up to 256 */
        atomicAdd((__nv_bfloat16 *)&b->bf_add, __float2bfloat16(1.0f));
    if (g < 64)
        atomicAdd((__nv_bfloat162 *)&b->bf2_add, __floats2bfloat162_rn(1.0f, 2.0f));

    atomicInc(&b->inc, KA_INC_VAL);
    atomicDec(&b->dec, KA_DEC_VAL);
    if (g == 0) {
        atomicInc(&b->inc_high, KA_INC_VAL); /* above val: wraps to 0 */
        atomicDec(&b->dec_high, KA_DEC_VAL); /* above val: reloads val */
        atomicDec(&b->dec_zero, KA_DEC_VAL); /* at 0: reloads val */
    }
    atomicAdd_block(&b->block_add, 1);
    atomicAdd_system(&b->system_add, 2);
}

extern "C" cudaError_t ka_all(struct atomic_buf *b, int blocks, int threads)
{
    SWIN_LAUNCH(atomic_all, blocks, threads)(b);
    return cudaGetLastError();
}
