/* The planted backend (cpu_portable.c, "cpu-portable"), registered by this folder's
 * CMakeLists.txt alone, runs a model through the runtime:
 *   - the registry finds it by name beside "cpu"; opening it in float16 is refused
 *     (SWIN_ERR_ARG: its capability says float32 only);
 *   - it is the portable level: its conv3d kernel for a 3x3x3 conv is im2col + OpenBLAS;
 *   - a context on it (runtime/context.h) plans, starts and runs the model: the logits agree
 *     with ONNX Runtime's within 1e-3 of max(1, max|ref|) (the end-to-end criterion), and the
 *     plan reports it as asked (CPU, "requested", its thread count).
 *
 *     test_planted_backend CASE_DIR   (model.onnx, input.npy, logits.npy; the export cube) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio/npy.h"
#include "kernels/cpu/cpu_backend.h"
#include "runtime/backend_registry.h"
#include "runtime/context.h"
#include "tests/common/check.h"

#define NAME "cpu-portable"

static bool read_npy(const char *dir, const char *file, struct swin_npy_array *a)
{
    char path[4096];
    swin_error err = {0};
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (swin_npy_read_f32(path, a, &err) == SWIN_OK) return true;
    fprintf(stderr, "%s\n", err.msg);
    return false;
}

/* The kernel conv3d picks for a 3x3x3 stride-1 conv of 24 channels on a 32^3 grid (Winograd
 * at the AVX2 level). */
static const char *conv_kernel(const struct swin_cpu_backend *be)
{
    const struct swin_vol v = {.d = 32, .h = 32, .w = 32, .c = 24, .pitch = 24};
    static const float w[1];
    return swin_cpu_conv3d_kernel(be, v, v, w, 3, 1, 1);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_planted_backend CASE_DIR\n");
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/model.onnx", argv[1]);
    swin_model_t *m = NULL;
    swin_error err = {0};
    struct swin_npy_array in = {0}, ref = {0};
    if (swin_model_load(path, &m, &err) || !read_npy(argv[1], "input.npy", &in) ||
        !read_npy(argv[1], "logits.npy", &ref)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    bool ok = check_true("the registry has " NAME " beside cpu", swin_backend_find(NAME) && swin_backend_find("cpu"));

    swin_context_params p = swin_context_default_params();
    p.threads = 2;
    p.precision = SWIN_PRECISION_FP16;
    struct swin_backend_ctx b;
    ok &= check_true(NAME " refuses fp16",
                     swin_backend_open_named(NAME, SWIN_BACKEND_CPU, m, &p, &b, &err) == SWIN_ERR_ARG && !b.iface);

    p.precision = SWIN_PRECISION_FP32;
    swin_status st = swin_backend_open_named(NAME, SWIN_BACKEND_CPU, m, &p, &b, &err);
    if (!check_true(NAME " opens", st == SWIN_OK)) {
        fprintf(stderr, "%s\n", err.msg);
        return test_exit(false);
    }
    const char *kernel = conv_kernel(b.inst.be);
    fprintf(stderr, NAME ": 3x3x3 conv kernel \"%s\"\n", kernel);
    ok &= check_true(NAME " runs the portable conv3d (im2col + sgemm)", !strcmp(kernel, "im2col + sgemm"));

    swin_model_info mi;
    swin_model_get_info(m, &mi);
    swin_context_t *ctx = NULL;
    st = swin_context_create_on(m, &p, mi.cube, &b, &ctx, &err);
    if (!check_true("a context on " NAME, st == SWIN_OK)) {
        fprintf(stderr, "%s\n", err.msg);
        return test_exit(false);
    }
    swin_plan_info info;
    swin_context_plan(ctx, &info);
    const bool as_asked = info.backend == SWIN_BACKEND_CPU && !strcmp(info.backend_reason, "requested");
    ok &= check_true("its plan reports CPU, requested, 2 threads", as_asked && info.cpu_threads == 2);
    float *logits = malloc(ref.count * sizeof *logits);
    st = logits ? swin_context_run(ctx, in.data, logits, &err) : SWIN_ERR_NOMEM;
    if (check_true("the model runs on " NAME, st == SWIN_OK))
        ok &= check_close_scaled("logits vs ONNX Runtime", logits, ref.data, ref.count, 1e-3);
    else fprintf(stderr, "%s\n", err.msg);
    free(logits);
    swin_context_free(ctx);
    swin_model_free(m);
    free(in.data);
    free(ref.data);
    return test_exit(ok);
}
