/* The CUDA backend's chunk budget (cuda_backend.h): SWIN_CUDA_CHUNK_BYTES read at creation
 * and swin_cuda_backend_set_chunk_bytes refuse what they cannot use with SWIN_ERR_ARG and
 * a message; a readable value is taken (binary units); the *_ws queries follow the budget
 * (without a context: the default's), and an op handed the workspace planned under a
 * smaller budget refuses to run instead of overrunning it. Exact checks, no tolerance. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "tests/kernels/cuda/cuda_op_test.h"

#include "kernels/op_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Creates a backend with SWIN_CUDA_CHUNK_BYTES=value: want_bytes > 0 must be taken,
 * 0 must be refused with SWIN_ERR_ARG and a message. */
static bool env_case(const struct swin_model *m, const char *value, size_t want_bytes)
{
    setenv("SWIN_CUDA_CHUNK_BYTES", value, 1);
    swin_error err = {0};
    struct swin_cuda_backend *be = NULL;
    const swin_status st = swin_cuda_backend_create(0, m, ct_dtype(), &be, &err);
    unsetenv("SWIN_CUDA_CHUNK_BYTES");
    char what[700];
    bool ok;
    if (want_bytes) {
        snprintf(what, sizeof what, "SWIN_CUDA_CHUNK_BYTES=%s: %zu bytes (want %zu)", value,
                 be ? swin_cuda_backend_chunk_bytes(be) : 0, want_bytes);
        ok = check_true(what, st == SWIN_OK && swin_cuda_backend_chunk_bytes(be) == want_bytes);
    } else {
        snprintf(what, sizeof what, "SWIN_CUDA_CHUNK_BYTES=%s refused: status %d, \"%s\"", value, (int)st, err.msg);
        ok = check_true(what, st == SWIN_ERR_ARG && be == NULL && strstr(err.msg, "SWIN_CUDA_CHUNK_BYTES"));
    }
    swin_cuda_backend_free(be);
    return ok;
}

int main(void)
{
    test_rng r = {0xc4b};
    ct_env e;
    ct_env_init(&e, 1 << 14);
    const int C = 16, hidden = 64;
    struct swin_block_w b;
    memset(&b, 0, sizeof b);
    b.norm2_w = ct_weight(&e, &r, C, 0.5f, 1.5f);
    b.norm2_b = ct_weight(&e, &r, C, -0.3f, 0.3f);
    b.fc1_w = ct_weight(&e, &r, (size_t)C * hidden, -0.2f, 0.2f);
    b.fc1_b = ct_weight(&e, &r, hidden, -0.5f, 0.5f);
    b.fc2_w = ct_weight(&e, &r, (size_t)hidden * C, -0.2f, 0.2f);
    b.fc2_b = ct_weight(&e, &r, C, -0.5f, 0.5f);
    ct_env_upload(&e);
    bool ok = check_true("default budget 32 MiB", swin_cuda_backend_chunk_bytes(e.gpu) == (size_t)32 << 20);

    ok &= env_case(&e.model, "65536", 65536);
    ok &= env_case(&e.model, "64K", 65536);
    ok &= env_case(&e.model, "3m", (size_t)3 << 20);
    ok &= env_case(&e.model, "1024G", SWIN_CUDA_CHUNK_BYTES_MAX);
    const char *bad[] = {"", "0", "0K", "-5", "+5", " 5", "5 ", "abc", "12x", "2T", "1MB", "0x100", "1025G",
                         "99999999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) ok &= env_case(&e.model, bad[i], 0);

    swin_error err = {0};
    ok &= check_true("set_chunk_bytes(0) refused",
                     swin_cuda_backend_set_chunk_bytes(e.gpu, 0, &err) == SWIN_ERR_ARG && err.msg[0]);
    err.msg[0] = 0;
    ok &= check_true("set_chunk_bytes(1 TiB + 1) refused",
                     swin_cuda_backend_set_chunk_bytes(e.gpu, SWIN_CUDA_CHUNK_BYTES_MAX + 1, &err) == SWIN_ERR_ARG &&
                         err.msg[0]);
    ok &= check_true("a refused budget leaves the default", swin_cuda_backend_chunk_bytes(e.gpu) == (size_t)32 << 20);

    /* 6x6x6 = 216 rows of C + hidden = 80 elements: planned at a 64-row budget, run at the
     * default (all 216 rows at once): the op boundary refuses the smaller workspace. */
    const struct swin_ops *ops = swin_cuda_ops_for(ct_dtype());
    cvol x = cvol_new(6, 6, 6, C, C, &r, -1.0f, 1.0f);
    const size_t full = ops->swin_mlp_ws(e.gpu, x.dev, hidden);
    /* A plan without a context (be NULL) gets the default budget's workspaces. */
    cvol out = cvol_new(3, 3, 3, 2 * C, 2 * C, &r, -1.0f, 1.0f);
    const int L[3] = {6, 6, 6}, w7[3] = {7, 7, 7};
    const struct swin_window_geom g = swin_window_geom_make(L, w7, 2, true);
    ok &= check_true("workspaces without a context = at the default budget",
                     ops->swin_mlp_ws(NULL, x.dev, hidden) == full &&
                         ops->swin_attention_ws(NULL, x.dev, &g) == ops->swin_attention_ws(e.gpu, x.dev, &g) &&
                         ops->patch_merge_ws(NULL, out.dev, x.dev) == ops->patch_merge_ws(e.gpu, out.dev, x.dev));
    cvol_free(&out);
    ct_set_chunk_bytes(&e, (size_t)64 * (C + hidden) * swin_dtype_bytes(ct_dtype()));
    const size_t small = ops->swin_mlp_ws(e.gpu, x.dev, hidden);
    char what[200];
    snprintf(what, sizeof what, "mlp workspace follows the budget: %zu bytes at 64 rows < %zu at 216", small, full);
    ok &= check_true(what, small < full);
    void *ws = ct_dev_ws(small);
    ct_set_chunk_bytes(&e, (size_t)32 << 20);
    const int rc = swin_op_swin_mlp(ops, e.gpu, x.dev, &b, hidden, ws, small);
    snprintf(what, sizeof what, "mlp with a workspace planned under a smaller budget refused: status %d, \"%s\"", rc,
             ops->last_error(e.gpu));
    ok &= check_true(what, rc == SWIN_ERR_ARG);
    ok &= cvol_compare("x untouched by the refused call", &x, 0, C, 0.0);
    ct_dev_ws_free(ws);
    cvol_free(&x);
    ct_env_free(&e);
    return test_exit(ok);
}
