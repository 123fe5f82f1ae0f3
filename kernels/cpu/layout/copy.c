/* copy: out = in, channels-last volumes of the same dims and channels, pitches may differ
 * (a hidden state into a concat half). No overlap. Threads take static voxel ranges. */
#include "kernels/cpu/cpu_internal.h"

#include <string.h>

struct copy_task {
    struct swin_vol out, in;
};

static void copy_run(void *p, int tid, int nth)
{
    const struct copy_task *t = p;
    const int64_t n = (int64_t)swin_vol_voxels(t->in);
    const int64_t b = n * tid / nth, e = n * (tid + 1) / nth;
    const size_t row = (size_t)t->in.c * sizeof(float);
    if (t->in.pitch == t->in.c && t->out.pitch == t->out.c) {   /* both dense: one block */
        memcpy(swin_vol_f32(t->out) + b * t->out.c, swin_vol_f32(t->in) + b * t->in.c, (size_t)(e - b) * row);
        return;
    }
    for (int64_t v = b; v < e; v++) memcpy(swin_vol_f32(t->out) + v * t->out.pitch, swin_vol_f32(t->in) + v * t->in.pitch, row);
}

int swin_cpu_copy(void *bev, struct swin_vol out, struct swin_vol in)
{
    struct swin_cpu_backend *be = bev;
    struct copy_task t = {out, in};
    swin_cpu_run(be, copy_run, &t);
    return 0;
}
