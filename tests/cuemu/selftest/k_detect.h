/* Kernels for the detector tests (k_detect.cu): each broken kernel has a correct twin.
 * All launch one block and return cudaGetLastError(). */
#ifndef TESTS_EMU_K_DETECT_H
#define TESTS_EMU_K_DETECT_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif
/* Barriers: threads split over two __syncthreads call sites, or one (correct). */
cudaError_t kd_barrier(int *out, int divergent);
/* Shuffle with a full mask after lanes >= 16 returned (broken), or mask 0xFFFF (correct). */
cudaError_t kd_exited_lane(int *out, int broken);
/* Lanes disagree: masks (0xFFFFFFFF vs 0xFFFF00FF), or intrinsics (shfl vs ballot). */
cudaError_t kd_mask_mismatch(int *out);
cudaError_t kd_op_mismatch(int *out);
/* Each lane passes a mask without its own lane. */
cudaError_t kd_not_in_mask(int *out);
/* Lane 0 waits in __syncwarp while the other threads wait at __syncthreads. */
cudaError_t kd_deadlock(int *out);
/* out[t] = in[(t + 1) % n] through shared memory, with or without the barrier. */
cudaError_t kd_neighbour(const float *in, float *out, int n, int barrier);
/* *out = sum of a 256-slot shared array of which threads fill only blockDim.x slots
 * (broken: the rest stays poisoned), or all 256 (correct: zero-filled). */
cudaError_t kd_uninit_sum(const float *in, float *out, int n, int fill_all);
/* Sanitizer targets, 64 threads, in: 68 floats, out: 64 floats. mode 1 writes one
 * element past out; 2 reads past a static shared array; 3 loads float4 from a 4-byte
 * aligned address; 4 reads a neighbour's shared write without a barrier (a race);
 * 0 is correct. */
cudaError_t kd_sanitize(const float *in, float *out, int mode);
/* A kernel whose locals (1 MiB per thread) overflow the fiber stack. */
cudaError_t kd_stack_overflow(float *out);
#ifdef __cplusplus
}
#endif
#endif
