/* Harness of the CUDA op tests: every op runs twice on identical inputs, once with the CPU
 * reference backend (swin_cpu_ops, host memory) and once with the CUDA backend (emulated
 * device memory), and the results are compared.
 *
 *   ct_env env;  ct_env_init(&env, weight_floats);        // host weight buffer
 *   float *w = ct_weight(&env, &rng, n, -0.1f, 0.1f);    // a weight inside it
 *   ct_env_upload(&env);                                  // (re)creates the CUDA backend,
 *                                                         // uploading the weights so far
 *   cvol x = cvol_new(d, h, w, c, pitch, &rng, -1, 1);   // host volume + device twin
 *   swin_cpu_ops.op(env.cpu, x.host, ...);  swin_cuda_ops.op(env.gpu, x.dev, ...);
 *   ok &= cvol_compare("what", &x, c0, c, rel);           // channels [c0, c0+c) within
 *                                                         // tolerance, everything else
 *                                                         // (pitch padding, tail guard)
 *                                                         // bit-identical
 * Weights are host pointers into env's flat buffer, which is what both op tables expect
 * (the CUDA backend translates them to its device copy). Workspaces come from the *_ws
 * queries of each backend and are handed over 4 bytes past an aligned address.
 *
 * Half mode (environment CT_DTYPE=f16, CTest's cuda_<op>_half): the CUDA backend stores
 * weights and volumes as float16. Weights and volume contents are then drawn as values
 * that float16 represents exactly (rounded with the compiler's _Float16, independent of
 * the backend's conversions), so both backends start from identical numbers and the
 * comparison measures only the kernels' float16 intermediates and outputs; each test
 * states its half tolerance next to the float32 one (CT_TOL). */
#ifndef SWIN_CUDA_OP_TEST_H
#define SWIN_CUDA_OP_TEST_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels/cpu/cpu_backend.h"
#include "kernels/cuda/cuda_backend.h"
#include "tests/common/check.h"

/* The storage type under test (from CT_DTYPE) and the tolerance that goes with it. */
enum swin_dtype ct_dtype(void);
#define CT_TOL(f32_rel, f16_rel) (ct_dtype() == SWIN_F16 ? (f16_rel) : (f32_rel))
/* Rounds n floats in place to the storage type under test (no-op for float32). */
void ct_round(float *p, size_t n);

typedef struct {
    struct swin_model model;      /* only flat / flat_bytes are set */
    char *flat;
    size_t used, cap;             /* bytes */
    struct swin_cpu_backend *cpu;
    struct swin_cuda_backend *gpu;
} ct_env;

void ct_env_init(ct_env *e, size_t weight_floats);
/* n floats uniform in [lo, hi) inside the weight buffer (256-byte aligned). */
float *ct_weight(ct_env *e, test_rng *r, size_t n, float lo, float hi);
/* Creates the CPU backend (1 thread) once and (re)creates the CUDA backend, which uploads
 * the weights made so far: call it after a case's ct_weight calls, before its ops.
 * Exits the test on failure; in the real-GPU build (CT_REAL_GPU) exits 77 (CTest skip)
 * when the backend reports SWIN_ERR_BACKEND, i.e. no usable device. */
void ct_env_upload(ct_env *e);
void ct_env_free(ct_env *e);

/* A volume (d, h, w, c) with pitch, plus guard elements; host and device hold the same
 * values after cvol_new: random channels, a sentinel in the pitch padding and tail. The
 * host twin is float32, the device twin has the storage type under test. */
typedef struct {
    struct swin_vol host, dev;
    float *hmem;
    void *dmem;
    size_t total;                 /* elements */
} cvol;

cvol cvol_new(int d, int h, int w, int c, int pitch, test_rng *r, float lo, float hi);
/* A view of channels [c0, c0 + c) of both twins. */
void cvol_slice(const cvol *v, int c0, int c, struct swin_vol *host, struct swin_vol *dev);
/* Compares the device twin with the host twin: channels [c0, c0 + c) of every voxel with
 * check_close_scaled(rel), every other element exactly (as float32 values). */
bool cvol_compare(const char *what, const cvol *v, int c0, int c, double rel);
void cvol_free(cvol *v);

/* Workspaces: host and device, `bytes` usable from 4 bytes past an aligned address. */
void *ct_host_ws(size_t bytes);
void *ct_dev_ws(size_t bytes);
void ct_host_ws_free(void *ws);
void ct_dev_ws_free(void *ws);

/* Multi-chunk runs of the chunked ops (attention, MLP, merge): ct_set_chunk_bytes gives
 * the CUDA backend created by the last ct_env_upload a chunk budget (exits on refusal);
 * ct_check_chunks checks that its one call of op so far ran over exactly `expect` chunks,
 * which the test derives from the budget (at least 2, else the case proves nothing). */
void ct_set_chunk_bytes(ct_env *e, size_t bytes);
bool ct_check_chunks(const char *what, const ct_env *e, enum swin_cuda_chunked_op op, long long expect);

/* Fails the test (message, exit 1) when an op returned nonzero. */
bool ct_rc(const char *what, int rc, const struct swin_ops *ops, void *be);

#endif
