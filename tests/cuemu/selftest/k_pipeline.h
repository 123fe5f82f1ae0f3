/* Kernels for the asynchronous-copy tests (k_pipeline.cu). */
#ifndef TESTS_EMU_K_PIPELINE_H
#define TESTS_EMU_K_PIPELINE_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif
/* What kp_pipeline gets wrong on purpose (KP_CORRECT: nothing). */
enum kp_mode {
    KP_CORRECT,
    KP_READ_EARLY,   /* reads each stage after a barrier but before its wait */
    KP_NEVER_WAITED, /* issues and commits one more copy at the end and exits */
    KP_UNCOMMITTED,  /* never commits: the copies reach __syncthreads uncommitted */
    KP_MISALIGNED,   /* src 4 bytes off a 16-byte boundary */
    KP_BAD_SIZE,     /* a 12-byte copy */
    KP_DEVICE_DST,   /* copies into device memory instead of shared memory */
    KP_DST_IN_FLIGHT, /* issues a second copy into a destination still in flight */
    KP_ZFILL_OUTSIDE  /* the zero-filled copies name an address before the allocation */
};
/* One block of 64 threads, a 3-stage pipeline over `steps` stages of 64 x 4 floats of
 * in (steps * 256 floats): stage s goes to shared memory by 16-byte async copies, the
 * copies of odd stages for threads t % 4 == 0 zero-filled (zfill 16); after the wait and
 * a barrier thread t adds up thread (t + 1) % 64's 4 floats. out: 64 floats (256 in
 * KP_DEVICE_DST). Returns cudaGetLastError(). */
cudaError_t kp_pipeline(const float *in, float *out, int steps, enum kp_mode mode);
#ifdef __cplusplus
}
#endif
#endif
