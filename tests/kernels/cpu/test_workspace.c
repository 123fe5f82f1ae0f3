/* The workspace every conv, attention, MLP and patch-merging call of an f=48 96^3 model plans is
 * the one the kernel that runs needs: at every SIMD level this CPU has (the test names the ones
 * it skips) and in both precisions (float32; bfloat16: the backend's bfloat16 copy of the model
 * with its range set, as precision BF16 runs it). forward() runs in plan mode on an op table
 * that records each workspace query (no op runs, no activation exists: cheap). Then per conv:
 *   1. the planned bytes equal the need of the kernel conv3d names for these arguments, by
 *      that kernel's own query (per-tap GEMMs, Winograd with its tile, im2col / implicit);
 *   2. conv3d refuses one byte less (the kernel it dispatches needs all of it);
 *   3. on grids of at most 12^3 voxels it runs with exactly the planned bytes, followed by a
 *      guard that must stay untouched, and its output is finite.
 * The attention, MLP and patch-merging queries must not depend on the level or the precision
 * (their kernels at every level use the same layout); each is checked equal across them. */
#include "tests/kernels/cpu/op_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/conv/conv3d_internal.h"
#include "kernels/cpu/winograd/winograd.h"
#include "runtime/forward.h"
#include "kernels/cpu/model_bf16.h"
#include "tests/common/random_model.h"

#define MAX_CALLS 256
#define GUARD 4096

struct conv_call {
    struct swin_vol out, in;
    const float *w;
    int k, stride, pad;
    size_t planned;
};

static struct {
    struct conv_call conv[MAX_CALLS];
    int nconv;
    size_t other[MAX_CALLS]; /* attention, MLP and merge queries in call order */
    int nother;
} rec;

static size_t r_conv3d_ws(void *be, struct swin_vol out, struct swin_vol in, const float *w, int k, int stride, int pad,
                          bool stats)
{
    const size_t b = swin_cpu_ops.conv3d_ws(be, out, in, w, k, stride, pad, stats);
    if (rec.nconv < MAX_CALLS) rec.conv[rec.nconv++] = (struct conv_call){out, in, w, k, stride, pad, b};
    return b;
}

static size_t r_attention_ws(void *be, struct swin_vol x, const struct swin_window_geom *g)
{
    const size_t b = swin_cpu_ops.swin_attention_ws(be, x, g);
    if (rec.nother < MAX_CALLS) rec.other[rec.nother++] = b;
    return b;
}

static size_t r_mlp_ws(void *be, struct swin_vol x, int hidden)
{
    const size_t b = swin_cpu_ops.swin_mlp_ws(be, x, hidden);
    if (rec.nother < MAX_CALLS) rec.other[rec.nother++] = b;
    return b;
}

static size_t r_merge_ws(void *be, struct swin_vol out, struct swin_vol in)
{
    const size_t b = swin_cpu_ops.patch_merge_ws(be, out, in);
    if (rec.nother < MAX_CALLS) rec.other[rec.nother++] = b;
    return b;
}

/* What the named kernel's own query says it needs. */
static size_t kernel_need(struct swin_cpu_backend *be, const struct conv_call *c, const char *name)
{
    if (!strncmp(name, "per-tap", 7)) return swin_cpu_conv3d_taps_ws(be, c->out, c->in);
    if (!strncmp(name, "Winograd F(6", 12)) return swin_cpu_winograd_ws(be, c->out, c->in, 6);
    if (!strncmp(name, "Winograd F(4", 12)) return swin_cpu_winograd_ws(be, c->out, c->in, 4);
    if (!strncmp(name, "Winograd F(2", 12)) return swin_cpu_winograd_ws(be, c->out, c->in, 2);
    return swin_cpu_conv3d_direct_ws(be, c->out, c->in, c->k);
}

static bool run_exact(struct swin_cpu_backend *be, const struct conv_call *c, const char *what)
{
    tvol in = tvol_new(c->in.d, c->in.h, c->in.w, c->in.c, c->in.c);
    test_rng r = {7ULL};
    tvol_fill(&in, &r, -1.0f, 1.0f);
    tvol out = tvol_new(c->out.d, c->out.h, c->out.w, c->out.c, c->out.c);
    unsigned char *ws = malloc(c->planned + GUARD);
    memset(ws + c->planned, 0xA5, GUARD);
    bool ok = check_true(
        what, swin_cpu_ops.conv3d(be, out.v, NULL, in.v, c->w, NULL, c->k, c->stride, c->pad, ws, c->planned) == 0);
    bool guard = true, finite = true;
    for (size_t i = 0; i < GUARD; i++) guard &= ws[c->planned + i] == 0xA5;
    for (size_t v = 0; v < swin_vol_voxels(out.v); v++)
        for (int o = 0; o < out.v.c; o++) finite &= isfinite(swin_vol_f32(out.v)[v * out.v.pitch + o]);
    ok &= check_true("  ... nothing written past the planned workspace", guard);
    ok &= check_true("  ... its output is finite", finite);
    free(ws);
    tvol_free(&in), tvol_free(&out);
    return ok;
}

/* Plans the model on this backend and checks every conv; the other queries go to others[]. */
static bool walk(struct swin_cpu_backend *be, const struct swin_model *m, const char *prec, size_t *others,
                 int *nothers)
{
    struct swin_ops ops = swin_cpu_ops;
    ops.conv3d_ws = r_conv3d_ws;
    ops.swin_attention_ws = r_attention_ws;
    ops.swin_mlp_ws = r_mlp_ws;
    ops.patch_merge_ws = r_merge_ws;
    rec.nconv = rec.nother = 0;
    swin_error err = {0};
    struct swin_plan plan;
    swin_plan_init(&plan);
    struct swin_exec e = {.plan = &plan, .planning = true, .ops = &ops, .be = be, .err = &err};
    const int cube[3] = {96, 96, 96};
    bool ok = check_true("plan the f=48 96^3 model", swin_forward(&e, m, cube, NULL, NULL) == SWIN_OK);
    swin_plan_release(&plan);
    for (int i = 0; i < rec.nconv; i++) {
        const struct conv_call *c = &rec.conv[i];
        const char *name = swin_cpu_conv3d_kernel(be, c->out, c->in, c->w, c->k, c->stride, c->pad);
        char what[256];
        snprintf(what, sizeof what, "%s: conv %dx%dx%d %d->%d k%d s%d: planned %zu = %s's need", prec, c->out.d,
                 c->out.h, c->out.w, c->in.c, c->out.c, c->k, c->stride, c->planned, name);
        ok &= check_true(what, c->planned == kernel_need(be, c, name));
        void *short_ws = malloc(c->planned);
        snprintf(what, sizeof what, "%s: conv %dx%dx%d %d->%d: one byte short is refused", prec, c->out.d, c->out.h,
                 c->out.w, c->in.c, c->out.c);
        ok &= check_true(what, swin_cpu_ops.conv3d(be, c->out, NULL, c->in, c->w, NULL, c->k, c->stride, c->pad,
                                                   short_ws, c->planned - 1) == SWIN_ERR_ARG);
        free(short_ws);
        if (swin_vol_voxels(c->out) <= 12 * 12 * 12) {
            snprintf(what, sizeof what, "%s: conv %dx%dx%d %d->%d (%s) runs in exactly the planned workspace", prec,
                     c->out.d, c->out.h, c->out.w, c->in.c, c->out.c, name);
            ok &= run_exact(be, c, what);
        }
    }
    ok &= check_true("the model's convs were recorded", rec.nconv > 20 && rec.nconv < MAX_CALLS);
    memcpy(others, rec.other, (size_t)rec.nother * sizeof *others);
    *nothers = rec.nother;
    return ok;
}

int main(void)
{
    struct swin_model m32 = {0};
    struct test_model_builder b = {.cap = test_random_model_cap(48), .rng = {11ULL}};
    b.flat = aligned_alloc(256, b.cap);
    test_random_model(&m32, &b, 48);
    m32.flat = b.flat;
    m32.flat_bytes = b.used;
    struct swin_model *m16 = NULL;
    size_t bf16_bytes = 0;
    swin_error err = {0};
    bool ok = check_true("bfloat16 copy",
                         swin_model_bf16_copy(&m32, SWIN_BF16_KEEP_DEFAULT, &m16, &bf16_bytes, &err) == SWIN_OK);
    struct swin_cpu_backend *be = test_backend(2);
    if (!ok || !be) return test_exit(false);
    size_t first[MAX_CALLS], got[MAX_CALLS];
    int nfirst = -1, ngot = 0;
    for (int i = 0; i < TEST_SIMD_LEVELS; i++) {
        if (!test_simd_select(be, test_simd_levels[i])) continue;
        for (int p = 0; p < 2; p++) {
            char prec[48];
            snprintf(prec, sizeof prec, "%s %s", test_simd_name(test_simd_levels[i]), p ? "bf16" : "fp32");
            swin_cpu_backend_set_bf16(be, p ? m16->flat : NULL, p ? bf16_bytes : 0);
            ok &= walk(be, p ? m16 : &m32, prec, nfirst < 0 ? first : got, nfirst < 0 ? &nfirst : &ngot);
            if (nfirst >= 0 && ngot) {
                bool same = ngot == nfirst;
                for (int k = 0; same && k < ngot; k++) same = got[k] == first[k];
                char what[160];
                snprintf(what, sizeof what, "%s: attention, MLP and merge workspaces as at the first level", prec);
                ok &= check_true(what, same);
            }
        }
    }
    swin_cpu_backend_free(be);
    swin_model_bf16_free(m16);
    free(b.flat);
    return test_exit(ok);
}
