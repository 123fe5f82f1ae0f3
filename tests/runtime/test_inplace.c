/* The in-place narrowing conv (runtime/inplace.h) on the CPU backend, planned and run as
 * forward() does, against a naive float64 1x1x1 conv: channel ratios 2
 * (what the model uses), 1.5 and 3, depths of 1 to 9 planes (so the scratch planes and
 * the chunk bounds are both exercised), and the arena must stay below the plan of the
 * same step with a separate output tensor. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpu_backend.h"
#include "runtime/conv_call.h"
#include "runtime/inplace.h"
#include "tests/common/check.h"

struct shape {
    int d, h, w, c_in, c_out;
};

static float frand(void) { return (float)rand() / (float)RAND_MAX * 2.0f - 1.0f; }

/* A step on tensor t (s.c_in channels), written once for plan and run mode as forward() is. */
typedef void (*body_fn)(struct swin_exec *e, struct swin_activation *t, const struct shape *s, const float *w,
                        const float *b);

/* Plan mode: a fresh tensor of s.c_in channels, the body, the release; then the solve. */
static bool plan_body(struct swin_plan *plan, struct swin_cpu_backend *be, body_fn body, const struct shape *s,
                      const float *w, const float *b)
{
    swin_error err = {0};
    swin_plan_init(plan);
    struct swin_exec e = {.plan = plan, .planning = true, .ops = &swin_cpu_ops, .be = be, .err = &err};
    struct swin_activation t;
    swin_exec_activation(&e, &t, s->d, s->h, s->w, s->c_in, "x");
    body(&e, &t, s, w, b);
    swin_exec_release(&e, t.id);
    if (e.status || swin_plan_solve(plan, &err)) {
        fprintf(stderr, "  plan failed: %s\n", err.msg);
        swin_plan_release(plan);
        return false;
    }
    return true;
}

static size_t planned_arena(struct swin_cpu_backend *be, body_fn body, const struct shape *s, const float *w,
                            const float *b)
{
    struct swin_plan plan;
    if (!plan_body(&plan, be, body, s, w, b)) return 0;
    size_t bytes = plan.arena_bytes;
    swin_plan_release(&plan);
    return bytes;
}

/* One case after its run: the input's copy, the tensor's view after the body, the arena. */
struct case_run {
    float *x;
    struct swin_vol y;
    char *arena;
    size_t arena_bytes;
};

/* Plans the body, runs it on random data; checks (by name) that both went through. */
static bool run_case(struct swin_cpu_backend *be, body_fn body, const struct shape *s, const float *w,
                     const float *b, const char *verb, struct case_run *r)
{
    char what[128];
    snprintf(what, sizeof what, "%s %dx%dx%d %d -> %d", verb, s->d, s->h, s->w, s->c_in, s->c_out);
    *r = (struct case_run){0};
    swin_error err = {0};
    struct swin_plan plan;
    if (!plan_body(&plan, be, body, s, w, b)) return check_true(what, false);
    r->arena_bytes = plan.arena_bytes;
    r->arena = malloc(plan.arena_bytes);
    swin_plan_rewind(&plan);
    struct swin_exec e = {.plan = &plan, .arena = r->arena, .ops = &swin_cpu_ops, .be = be, .err = &err};
    struct swin_activation t;
    swin_exec_activation(&e, &t, s->d, s->h, s->w, s->c_in, "x");
    size_t n = swin_vol_voxels(t.v) * (size_t)s->c_in;
    r->x = malloc(n * sizeof *r->x);
    for (size_t i = 0; i < n; i++) r->x[i] = swin_vol_f32(t.v)[i] = frand();
    body(&e, &t, s, w, b);
    swin_exec_release(&e, t.id);
    swin_plan_release(&plan);
    r->y = t.v;
    if (e.status) fprintf(stderr, "  run failed: %s\n", err.msg);
    bool ok = check_true(what, e.status == SWIN_OK);
    return ok & check_true("  result is a whole tensor of c_out channels", r->y.c == s->c_out && r->y.pitch == s->c_out);
}

/* With a few planes the scratch is as large as the output; from 4 on it must be smaller. */
static bool arena_check(struct swin_cpu_backend *be, body_fn separate, const struct shape *s, const float *w,
                        const float *b, const struct case_run *r)
{
    return s->d < 4 || check_true("  arena below a separate output's", r->arena_bytes < planned_arena(be, separate, s, w, b));
}

/* What the in-place versions replace, planned only: a separate output tensor. */
static void separate_conv_body(struct swin_exec *e, struct swin_activation *t, const struct shape *s, const float *w,
                               const float *b)
{
    struct swin_activation y;
    swin_exec_activation(e, &y, s->d, s->h, s->w, s->c_out, "y");
    swin_fwd_conv(e, y.v, NULL, t->v, w, b, 1, 1, 0);
    swin_exec_release(e, y.id);
}

static void narrow_body(struct swin_exec *e, struct swin_activation *t, const struct shape *s, const float *w,
                        const float *b)
{
    swin_inplace_conv1x1_narrow(e, t, w, b, s->c_out);
}

static bool narrow_case(struct swin_cpu_backend *be, struct shape s)
{
    float *w = malloc((size_t)s.c_in * s.c_out * sizeof *w), *b = malloc((size_t)s.c_out * sizeof *b);
    for (int i = 0; i < s.c_in * s.c_out; i++) w[i] = frand();
    for (int i = 0; i < s.c_out; i++) b[i] = frand();
    struct case_run r;
    bool ok = run_case(be, narrow_body, &s, w, b, "narrow", &r);
    if (ok) {
        size_t vox = (size_t)s.d * s.h * s.w;
        float *ref = malloc(vox * s.c_out * sizeof *ref);
        for (size_t v = 0; v < vox; v++)
            for (int co = 0; co < s.c_out; co++) {
                double acc = b[co];
                for (int ci = 0; ci < s.c_in; ci++) acc += (double)r.x[v * s.c_in + ci] * w[ci * s.c_out + co];
                ref[v * s.c_out + co] = (float)acc;
            }
        ok &= check_close("  conv1x1 in place", swin_vol_f32(r.y), ref, vox * s.c_out, 1e-5, 1e-5);
        ok &= arena_check(be, separate_conv_body, &s, w, b, &r);
        free(ref);
    }
    free(w), free(b), free(r.x), free(r.arena);
    return ok;
}

int main(void)
{
    swin_error err = {0};
    struct swin_cpu_backend *be = NULL;
    if (swin_cpu_backend_create(2, &be, &err)) {
        fprintf(stderr, "backend: %s\n", err.msg);
        return 1;
    }
    srand(7);
    bool ok = true;
    const struct shape narrow[] = {{9, 16, 16, 96, 48}, {8, 5, 7, 16, 8}, {7, 6, 5, 12, 8}, {5, 4, 6, 24, 8},
                                   {1, 3, 3, 8, 4},     {2, 5, 1, 10, 5}, {3, 2, 2, 6, 4}};
    for (size_t i = 0; i < sizeof narrow / sizeof *narrow; i++) ok &= narrow_case(be, narrow[i]);
    swin_cpu_backend_free(be);
    return test_exit(ok);
}
