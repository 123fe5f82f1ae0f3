/* Atomic test kernel (k_atomic.cu): every thread of `blocks` x `threads` applies every
 * atomic function to the fields of one struct atomic_buf (a device pointer). 16-bit
 * floating types are stored as their bit patterns. */
#ifndef TESTS_EMU_K_ATOMIC_H
#define TESTS_EMU_K_ATOMIC_H

#include <cuda_runtime_api.h>

struct atomic_buf {
    int i_add, i_sub, i_exch, i_min, i_max, i_and, i_or, i_xor, i_cas;
    unsigned u_add, u_sub, u_exch, u_min, u_max, u_and, u_or, u_xor, u_cas;
    unsigned long long ull_add, ull_exch, ull_min, ull_max, ull_and, ull_or, ull_xor, ull_cas;
    long long ll_min, ll_max;
    float f_add, f_exch;
    double d_add;
    unsigned short us_cas, h_add, bf_add, pad_;
    unsigned h2_add, bf2_add;
    unsigned inc, dec, inc_high, dec_high, dec_zero;
    int block_add, system_add;
    /* Sums of the old values returned by the exchanges (each thread's exchange returns a
     * distinct earlier value: the olds plus the final value are the initial value plus
     * every thread's id). */
    long long i_exch_olds, f_exch_olds;
};

#ifdef __cplusplus
extern "C" {
#endif
/* Launch constants: atomicInc wraps at INC_VAL, atomicDec at DEC_VAL. */
#define KA_INC_VAL 7u
#define KA_DEC_VAL 5u
cudaError_t ka_all(struct atomic_buf *b, int blocks, int threads);
#ifdef __cplusplus
}
#endif
#endif
