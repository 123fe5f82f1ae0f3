/* The taps' read both Winograd tile sizes share, written once for every level (included by
 * winograd2_tmpl.h and winograd4_tmpl.h after a vec_*.h). */
#include "kernels/cpu/winograd/winograd.h"

/* The 27 taps w[kz][ky][kx][ci][co0, co0 + VW) as float32 (bfloat16 widened exactly),
 * g[(kz * 3 + ky) * 3 + kx]; n: the channels left from co0 (VW or more: all; the rest of the
 * vector is 0). */
V_INLINE void wino_taps(const struct wino_task *t, int ci, int co0, int n, vf *g)
{
    const int cin = t->in.c, cout = t->out.c;
    const vmask mk = v_mask(n);
    const bool full = n >= VW;
    for (int i = 0; i < 27; i++) { /* tap i = (kz * 3 + ky) * 3 + kx */
        const size_t at = ((size_t)i * cin + ci) * cout + co0;
        if (t->w_bf16) g[i] = v_widen_bf16((const uint16_t *)(const void *)t->w + at, full ? VW : n);
        else g[i] = full ? v_loadu(t->w + at) : v_maskload(t->w + at, mk);
    }
}
