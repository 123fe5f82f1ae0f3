/* A memory limit is checked on a plan made without a thread pool (runtime/context.h): a plan,
 * the search for a cube that fits, and a context refused for its limit start no thread; a
 * context within its limit starts its pool once (threads - 1 workers, the caller being the
 * first). Thread creations are counted by wrapping pthread_create at link time (--wrap), so
 * only the project's own count, not those of OpenBLAS or the C library.
 *
 *     test_context_threads MODEL.onnx   (an export with a 32^3 cube) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/swinrun.h"
#include "tests/common/check.h"

#define THREADS 3

static int created;

int __real_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
    __atomic_add_fetch(&created, 1, __ATOMIC_RELAXED);
    return __real_pthread_create(t, a, fn, arg);
}

/* Creates a context with p, expecting status `want` whose message names `says` ("" for any),
 * and `threads` thread creations. */
static bool context_case(const char *what, const swin_model_t *m, const swin_context_params *p, swin_status want,
                         const char *says, int threads)
{
    swin_context_t *ctx = NULL;
    swin_error err = {0};
    created = 0;
    swin_status st = swin_context_create(m, p, &ctx, &err);
    fprintf(stderr, "%s: %s, %d threads started%s%s\n", what, swin_status_name(st), created, st ? ": " : "", err.msg);
    bool ok = check_true(what, st == want && strstr(err.msg, says) && created == threads && !ctx == !!want);
    swin_context_free(ctx);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_context_threads MODEL.onnx\n");
        return 2;
    }
    swin_model_t *m = NULL;
    swin_error err = {0};
    if (swin_model_load(argv[1], &m, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    swin_context_params p = swin_context_default_params();
    p.backend = SWIN_BACKEND_CPU;
    p.threads = THREADS;
    swin_plan_info info;
    created = 0;
    bool ok = check_true("a plan", swin_model_plan(m, &p, &info, &err) == SWIN_OK);
    ok &= check_true("a plan starts no thread", created == 0);
    const size_t fits_32 = info.total_bytes;

    p.mem_limit = fits_32 - 1;
    ok &= context_case("32^3 over its limit", m, &p, SWIN_ERR_MEM_LIMIT, "no smaller window fits", 0);
    p.cube[0] = p.cube[1] = p.cube[2] = 64;
    p.mem_limit = fits_32;
    ok &= context_case("64^3 over its limit, 32^3 fits", m, &p, SWIN_ERR_MEM_LIMIT, "32x32x32", 0);
    created = 0;
    ok &= check_true("the plan over its limit names 32^3 and starts no thread",
                     swin_model_plan(m, &p, &info, &err) == SWIN_ERR_MEM_LIMIT && strstr(err.msg, "32x32x32") &&
                         created == 0);
    /* a C program that sets no vocabulary is told the C API's field (core/settings.h) */
    ok &= check_true("the refusal names swin_context_params.mem_limit",
                     strstr(err.msg, "raise swin_context_params.mem_limit to at least") != NULL);
    p.precision = SWIN_PRECISION_BF16;
    ok &= context_case("bf16, 64^3 over its limit", m, &p, SWIN_ERR_MEM_LIMIT, "", 0);
    p.precision = SWIN_PRECISION_FP32;
    p.cube[0] = p.cube[1] = p.cube[2] = 32;
    ok &= context_case("32^3 within its limit", m, &p, SWIN_OK, "", THREADS - 1);
    p.mem_limit = 0;
    ok &= context_case("no limit", m, &p, SWIN_OK, "", THREADS - 1);
    swin_model_free(m);
    return test_exit(ok);
}
