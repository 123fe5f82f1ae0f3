/* Plans of the real forward() for the default f=48 model (no weights are needed to plan):
 * the arena must be within 10 % of the planner's lower bound at 96^3 and 64^3, and the
 * full-resolution peak must be what the forward order promises: three f-channel maps
 * (decoder1's concat, two maps wide, plus conv1's output; then res, a and b), where giving
 * the concat its own bytes beside encoder1's output or res would need four. f=12 at 32^3
 * checks the ratio and the three maps only. */
#include <stdio.h>
#include <string.h>

#include "core/model.h"
#include "pipeline/swinrun.h"
#include "tests/common/check.h"
#include "tests/common/default_config.h"

static const float dummy[1];

static void default_model(struct swin_model *m, int f)
{
    memset(m, 0, sizeof *m);
    test_default_config(&m->cfg, f, 1, 14);
    /* encoder1 (Ci != f) and every decoder have the 1x1x1 residual conv */
    m->encoder[0] = (struct swin_resblock_w){.cin = 1, .cout = f, .conv3_w = dummy};
    for (int k = 1; k <= 3; k++) m->encoder[k] = (struct swin_resblock_w){.cin = f << (k - 1), .cout = f << (k - 1)};
    m->encoder[4] = (struct swin_resblock_w){.cin = 16 * f, .cout = 16 * f};
    for (int k = 0; k < SWIN_DECODERS; k++) {
        int cout = k == 0 ? f : f << (k - 1);
        m->decoder[k].res = (struct swin_resblock_w){.cin = 2 * cout, .cout = cout, .conv3_w = dummy};
    }
    m->flat_bytes = 248749184;  /* 62,187,296 float parameters */
}

static bool plan_ok(const struct swin_model *m, int side)
{
    swin_context_params p = swin_context_default_params();
    p.threads = 1;
    p.cube[0] = p.cube[1] = p.cube[2] = side;
    swin_plan_info info;
    swin_error err = {0};
    if (swin_model_plan(m, &p, &info, &err)) {
        fprintf(stderr, "plan failed: %s\n", err.msg);
        return false;
    }
    double ratio = (double)info.arena_bytes / (double)info.lower_bound;
    fprintf(stderr, "f=%d %d^3: arena %.1f MiB, lower bound %.1f MiB, ratio %.4f, %d tensors\n",
            m->cfg.feature_size, side, info.arena_bytes / 1048576.0, info.lower_bound / 1048576.0, ratio,
            info.tensors);
    bool ok = check_true("arena / lower bound <= 1.10", ratio <= 1.10);
    size_t full = (size_t)side * side * side * sizeof(float) * (size_t)m->cfg.feature_size;
    ok &= check_true("lower bound >= 3 full-resolution maps", info.lower_bound >= 3 * full);
    /* Where a map is small (f=12 at 32^3: 1.5 MiB) the ops' workspaces, which depend on the
     * CPU's vector width (AVX-512 tiles are wider than AVX2's), weigh as much as half a map:
     * the bound on maps holds only where maps dominate. */
    if (full >= ((size_t)32 << 20))
        ok &= check_true("lower bound < 3.5 full-resolution maps (resized in place)", 2 * info.lower_bound < 7 * full);
    return ok;
}

int main(void)
{
    struct swin_model m;
    bool ok = true;
    default_model(&m, 48);
    ok &= plan_ok(&m, 96);
    ok &= plan_ok(&m, 64);
    default_model(&m, 12);
    ok &= plan_ok(&m, 32);
    return test_exit(ok);
}
