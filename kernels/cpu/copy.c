/* copy: out = in, voxel by voxel (same dims and channels, pitches may differ), e.g. a
 * resblock result into one half of a decoder concat. Threads split the D slices. */
#include <string.h>

#include "kernels/cpu/cpu_internal.h"

struct copy_task {
    struct swin_vol out, in;
};

static void copy_run(void *p, int tid, int nth)
{
    const struct copy_task *t = p;
    const int64_t plane = (int64_t)t->in.h * t->in.w;
    for (int z = tid; z < t->in.d; z += nth)
        for (int64_t i = z * plane; i < (z + 1) * plane; i++)
            memcpy(t->out.data + i * t->out.pitch, t->in.data + i * t->in.pitch, (size_t)t->in.c * sizeof(float));
}

int swin_cpu_copy(void *bev, struct swin_vol out, struct swin_vol in)
{
    struct swin_cpu_backend *be = bev;
    int rc = swin_cpu_check_vol(be, "copy", "out", out);
    if (!rc) rc = swin_cpu_check_vol(be, "copy", "in", in);
    if (rc) return rc;
    if (out.d != in.d || out.h != in.h || out.w != in.w || out.c != in.c)
        return swin_cpu_fail(be, SWIN_ERR_SHAPE, "copy: out %dx%dx%dx%d differs from in %dx%dx%dx%d", out.d,
                             out.h, out.w, out.c, in.d, in.h, in.w, in.c);
    struct copy_task t = {out, in};
    swin_cpu_run(be, copy_run, &t);
    return 0;
}
