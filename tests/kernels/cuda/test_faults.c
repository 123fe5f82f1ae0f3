/* Which op a kernel fault is blamed on. On a GPU a kernel's fault (an illegal address)
 * reaches the host at the next synchronisation, so a plain run blames whatever op or
 * call meets it there; SWIN_CUDA_SYNC_CHECK=1 synchronises after every op and names the
 * op that faulted, with its shapes. The emulator holds a fault to the next
 * synchronisation as hardware does (CUEMU_FAULTS=deferred) and plants one in the
 * layernorm kernel (CUEMU_INJECT_FAULT=layernorm_rows); a layernorm is followed by a
 * conv3d and the end-of-pass synchronisation. */
#include "tests/kernels/cuda/cuda_op_test.h"

#include "tests/cuemu/cuemu_api.h"
#include "kernels/op_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct run {
    int rc;              /* first nonzero status, 0 if none */
    const char *where;   /* "layernorm", "conv3d" or "synchronize": where it appeared */
    char msg[SWIN_ERROR_MSG_MAX];
};

struct ops_case {
    ct_env *e;
    cvol *in, *mid, *out;
    const float *g, *b, *w, *bias;
};

/* layernorm in -> mid, conv3d mid -> out (k3 s1 p1), synchronize, on a fresh backend
 * created with or without SWIN_CUDA_SYNC_CHECK. */
static struct run run_ops(const struct ops_case *c, bool sync_check)
{
    struct run r = {0, "", ""};
    if (sync_check) setenv("SWIN_CUDA_SYNC_CHECK", "1", 1);
    else unsetenv("SWIN_CUDA_SYNC_CHECK");
    cuemu_clear_fault();
    ct_env_upload(c->e);
    const struct swin_ops *ops = swin_cuda_ops_for(ct_dtype());
    void *be = c->e->gpu;
    const size_t ws_bytes = ops->conv3d_ws(be, c->out->dev, c->mid->dev, c->w, 3, 1, 1, false);
    void *ws = ws_bytes ? ct_dev_ws(ws_bytes) : NULL;
    swin_error err = {0};
    if ((r.rc = swin_op_layernorm(ops, be, c->mid->dev, c->in->dev, c->g, c->b))) {
        r.where = "layernorm";
    } else if ((r.rc = swin_op_conv3d(ops, be, c->out->dev, NULL, c->mid->dev, c->w, c->bias, 3, 1, 1, ws,
                                      ws_bytes))) {
        r.where = "conv3d";
    } else if ((r.rc = (int)swin_cuda_synchronize(be, &err))) {
        r.where = "synchronize";
        snprintf(r.msg, sizeof r.msg, "%s", err.msg);
    }
    if (r.rc && strcmp(r.where, "synchronize")) snprintf(r.msg, sizeof r.msg, "%s", ops->last_error(be));
    printf("  SWIN_CUDA_SYNC_CHECK=%d: status %d at %s: %s\n", sync_check, r.rc, r.where[0] ? r.where : "-",
           r.msg);
    if (ws) ct_dev_ws_free(ws);
    return r;
}

int main(void)
{
    /* read by the emulator at first use */
    setenv("CUEMU_FAULTS", "deferred", 1);
    setenv("CUEMU_INJECT_FAULT", "layernorm_rows", 1);
    test_rng rng = {11};
    ct_env e;
    ct_env_init(&e, 8 * 8 * 27 + 64);
    const float *g = ct_weight(&e, &rng, 8, 0.5f, 1.5f), *b = ct_weight(&e, &rng, 8, -0.5f, 0.5f),
                *w = ct_weight(&e, &rng, 27 * 8 * 8, -0.2f, 0.2f), *bias = ct_weight(&e, &rng, 8, -0.1f, 0.1f);
    ct_env_upload(&e);
    cvol in = cvol_new(4, 5, 6, 8, 8, &rng, -1.0f, 1.0f), mid = cvol_new(4, 5, 6, 8, 8, &rng, -1.0f, 1.0f),
         out = cvol_new(4, 5, 6, 8, 8, &rng, -1.0f, 1.0f);
    const struct ops_case c = {&e, &in, &mid, &out, g, b, w, bias};
    bool ok = true;

    printf("fault planted in layernorm, held to the next synchronisation:\n");
    struct run plain = run_ops(&c, false);
    ok &= check_true("plain: the fault surfaces (SWIN_ERR_BACKEND, cudaErrorIllegalAddress)",
                     plain.rc == SWIN_ERR_BACKEND && strstr(plain.msg, "cudaErrorIllegalAddress"));
    ok &= check_true("plain: layernorm, the op that faulted, returns success and is not named",
                     strcmp(plain.where, "layernorm") && !strstr(plain.msg, "layernorm"));
    ok &= check_true("plain: the message says how to find the op", strstr(plain.msg, "SWIN_CUDA_SYNC_CHECK=1"));

    struct run sync = run_ops(&c, true);
    ok &= check_true("SWIN_CUDA_SYNC_CHECK=1: layernorm fails, named with its shapes",
                     sync.rc == SWIN_ERR_BACKEND && !strcmp(sync.where, "layernorm") &&
                         strstr(sync.msg, "layernorm c8 on 4x5x6") && strstr(sync.msg, "cudaErrorIllegalAddress"));

    cuemu_inject_fault(NULL);
    printf("no fault:\n");
    struct run clean = run_ops(&c, true);
    ok &= check_true("SWIN_CUDA_SYNC_CHECK=1 without a fault: every op succeeds", clean.rc == 0);

    /* What the emulator showed before: a fault reported by its own launch. */
    cuemu_inject_fault("layernorm_rows");
    cuemu_set_fault_mode(CUEMU_FAULTS_IMMEDIATE);
    printf("fault planted in layernorm, reported at its launch:\n");
    struct run now = run_ops(&c, false);
    ok &= check_true("immediate faults: layernorm's own check names it",
                     now.rc == SWIN_ERR_BACKEND && !strcmp(now.where, "layernorm") && strstr(now.msg, "layernorm c8"));

    cuemu_inject_fault(NULL);
    cuemu_clear_fault();
    cvol_free(&in);
    cvol_free(&mid);
    cvol_free(&out);
    ct_env_free(&e);
    return test_exit(ok);
}
