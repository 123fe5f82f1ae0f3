/* The project's one kernel launch and dynamic shared memory accessor, for both builds:
 *
 *   SWIN_LAUNCH(kernel, grid, block, smem, stream)(args...);
 *   SWIN_LAUNCH((tmpl<float, 7>), grid, block)(args...);   // templates in parentheses
 *   err = cudaGetLastError();                              // launch errors, as with <<<>>>
 *
 *   __global__ void k(...) { SWIN_DYN_SMEM(float, tile); ... tile[i] ... }
 *
 * Under nvcc these are <<<...>>> and `extern __shared__`. Only a target built with
 * swin_emu_cuda_sources (tests/cuemu/CMakeLists.txt: -DSWIN_EMU and a forced include of
 * tests/cuemu/cuemu.h) maps them onto the emulator's launcher and per-launch buffer; this
 * header itself includes nothing of the emulator. This is the only place in the project
 * where <<< may appear. */
#ifndef SWIN_LAUNCH_H
#define SWIN_LAUNCH_H

#if defined(__CUDACC__)
#define SWIN_LAUNCH(kernel, ...) kernel<<<__VA_ARGS__>>>
/* One untyped array for every kernel: `extern __shared__` arrays of different types in
 * one translation unit would conflict. 128-byte aligned, enough for every type placed in
 * it: wmma load/store_matrix_sync need 32-byte (256-bit) aligned tiles, float4 and 16-byte
 * async copies 16. The emulator's base has the same alignment (CUEMU_DYN_SMEM_OFFSET
 * moves it off, to show what depends on it). */
#define SWIN_DYN_SMEM(T, name)                                                                \
    extern __shared__ __align__(128) unsigned char swin_dyn_smem_[];                          \
    T *name = reinterpret_cast<T *>(swin_dyn_smem_)
#elif defined(SWIN_EMU)
#define SWIN_LAUNCH(kernel, ...) ::cuemu::make_launcher(kernel, #kernel, __VA_ARGS__)
#define SWIN_DYN_SMEM(T, name) T *name = static_cast<T *>(cuemu_dynamic_smem())
#else
#error "kernels/cuda/swin_launch.h: compile with nvcc, or through swin_emu_cuda_sources (SWIN_EMU)"
#endif

#endif
