#include "runtime/inplace.h"

#include "runtime/conv_call.h"

static size_t plane_bytes(struct swin_vol v, int pitch)
{
    return (size_t)v.h * (size_t)v.w * (size_t)pitch * swin_dtype_bytes(v.dtype);
}

/* Planes [z0, z1) of the tensor at `data` read as channels [c0, c0 + c) at `pitch`. */
static struct swin_vol planes(struct swin_vol v, void *data, int pitch, int c0, int c, int z0, int z1)
{
    const size_t elem = swin_dtype_bytes(v.dtype);
    v.data = data ? (char *)data + (size_t)z0 * plane_bytes(v, pitch) + (size_t)c0 * elem : NULL;
    v.d = z1 - z0;
    v.pitch = pitch;
    v.c = c;
    return v;
}

/* Planes that must go through scratch: the fewest n with n (big - small) >= small, so that
 * from n on each chunk advances by at least one plane. */
static int scratch_planes(size_t big, size_t small, int d)
{
    size_t n = (small + (big - small) - 1) / (big - small);
    return n < (size_t)d ? (int)n : d;
}

void swin_inplace_conv1x1_narrow(struct swin_exec *e, struct swin_activation *t, const float *w, const float *bias,
                                 int cout)
{
    const struct swin_vol in = t->v;
    const int cin = in.c, d = in.d;
    const size_t pin = plane_bytes(in, cin), pout = plane_bytes(in, cout);
    const int head = scratch_planes(pin, pout, d);
    struct swin_workspace tmp;
    if (!swin_exec_workspace(e, &tmp, (size_t)head * pout, "narrowing scratch")) return;
    struct swin_vol tmp_v = planes(in, tmp.data, cout, 0, cout, 0, head);
    swin_fwd_conv(e, tmp_v, NULL, planes(in, in.data, cin, 0, cin, 0, head), w, bias, 1, 1, 0);
    for (int z0 = head, z1; z0 < d; z0 = z1) {
        z1 = (int)((size_t)z0 * pin / pout);
        if (z1 > d) z1 = d;
        swin_fwd_conv(e, planes(in, in.data, cout, 0, cout, z0, z1), NULL, planes(in, in.data, cin, 0, cin, z0, z1), w,
                      bias, 1, 1, 0);
    }
    EXEC_OP(e, copy, planes(in, in.data, cout, 0, cout, 0, head), tmp_v);
    swin_exec_release(e, tmp.id);
    swin_exec_shrink_channels(e, t, cout);
}
