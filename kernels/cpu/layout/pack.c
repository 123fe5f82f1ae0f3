/* pack_input / unpack_output: host channels-first float32 (C, D, H, W) <-> the channels-last
 * volume (D, H, W, C) with pitch. Pure copies in blocks of voxels; threads split the D slices. */
#include "kernels/cpu/cpu_internal.h"

struct pack_task {
    struct swin_vol v;
    float *host;            /* (C, D, H, W) */
    bool to_vol;            /* true: host -> v; false: v -> host */
};

/* Voxels per block: per channel the host side moves one contiguous run of PACK_BLOCK floats
 * while the block's channels-last rows (PACK_BLOCK pitch floats) stay in L1. */
#define PACK_BLOCK 64

static void pack_run(void *p, int tid, int nth)
{
    const struct pack_task *t = p;
    struct swin_vol v = t->v;
    const int64_t plane = (int64_t)v.h * v.w, vox = (int64_t)v.d * plane;
    for (int z = tid; z < v.d; z += nth)
        for (int64_t b = z * plane; b < (z + 1) * plane; b += PACK_BLOCK) {
            const int64_t e = b + PACK_BLOCK < (z + 1) * plane ? b + PACK_BLOCK : (z + 1) * plane;
            float *cl = swin_vol_f32(v) + b * v.pitch;
            for (int c = 0; c < v.c; c++) {
                float *cf = t->host + c * vox + b;
                if (t->to_vol)
                    for (int64_t i = 0; i < e - b; i++) cl[i * v.pitch + c] = cf[i];
                else
                    for (int64_t i = 0; i < e - b; i++) cf[i] = cl[i * v.pitch + c];
            }
        }
}

int swin_cpu_pack_input(void *bev, struct swin_vol out, const float *host_cdhw)
{
    struct swin_cpu_backend *be = bev;
    /* The host buffer is only read on this path. */
    struct pack_task t = {out, (float *)host_cdhw, true};
    swin_cpu_run(be, pack_run, &t);
    return 0;
}

int swin_cpu_unpack_output(void *bev, float *host_cdhw, struct swin_vol in)
{
    struct swin_cpu_backend *be = bev;
    struct pack_task t = {in, host_cdhw, false};
    swin_cpu_run(be, pack_run, &t);
    return 0;
}
