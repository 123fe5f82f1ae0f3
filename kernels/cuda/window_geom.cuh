/* Window geometry of one Swin block on the device (forward spec 3.4, ops.h
 * swin_window_geom), and the token -> voxel map that fuses zero padding, the cyclic
 * shift and the window partition / reverse into the gathers and scatters:
 *
 *   global token gt = window * n + t, window = (a0 nw1 + a1) nw2 + a2 (W fastest),
 *   t = (t0 win1 + t1) win2 + t2; padded rolled position p_k = a_k win_k + t_k;
 *   source voxel q_k = (p_k + shift_k) mod padded_k   (roll toward lower indices);
 *   the token is real iff q_k < L_k on every axis, else it is a zero (padded) token.
 *   Region label (shifted-window mask, spec 3.4.4) from p on the padded grid:
 *   rho_k = 0 if p < P - win, 1 if p < P - shift, else 2 (0 everywhere when shift_k = 0). */
#ifndef SWIN_CUDA_WINDOW_GEOM_CUH
#define SWIN_CUDA_WINDOW_GEOM_CUH

#include "kernels/ops.h"

namespace swin_cuda {

struct WinGeom {
    int L[3], win[3], shift[3], padded[3], cw[3], nw[3];
    int n;          /* tokens per window, win0 win1 win2 */
    int heads;
    bool masked;    /* some shift > 0 */
    float scale;    /* the logits' scale; 0: 1/sqrt(head dim) */
};

inline WinGeom win_geom(const struct swin_window_geom *g)
{
    WinGeom w;
    for (int k = 0; k < 3; k++) {
        w.L[k] = g->L[k];
        w.win[k] = g->win[k];
        w.shift[k] = g->shift[k];
        w.padded[k] = g->padded[k];
        w.cw[k] = g->cfg_window[k];
        w.nw[k] = g->padded[k] / g->win[k];
    }
    w.n = g->win[0] * g->win[1] * g->win[2];
    w.heads = g->heads;
    w.scale = g->scale;
    w.masked = g->shift[0] > 0 || g->shift[1] > 0 || g->shift[2] > 0;
    return w;
}

__device__ inline int win_region(int p, int padded, int win, int shift)
{
    if (shift == 0) return 0;
    if (p < padded - win) return 0;
    return p < padded - shift ? 1 : 2;
}

/* Origin a_k win_k of window `window` on the padded rolled grid (a from window =
 * (a0 nw1 + a1) nw2 + a2). */
struct WinOrigin {
    int p[3];
};
__device__ inline WinOrigin window_origin(const WinGeom &g, long long window)
{
    const int a2 = (int)(window % g.nw[2]);
    const long long a01 = window / g.nw[2];
    return WinOrigin{{(int)(a01 / g.nw[1]) * g.win[0], (int)(a01 % g.nw[1]) * g.win[1], a2 * g.win[2]}};
}

/* Region label of token t of the window at origin w (32-bit: t < n). */
__device__ inline int token_label_at(const WinGeom &g, const WinOrigin &w, int t)
{
    const int t12 = g.win[1] * g.win[2];
    const int tt[3] = {t / t12, t % t12 / g.win[2], t % g.win[2]};
    int lab = 0;
    for (int k = 0; k < 3; k++) lab = lab * 3 + win_region(w.p[k] + tt[k], g.padded[k], g.win[k], g.shift[k]);
    return lab;
}

/* Region label of token t of window `window`. */
__device__ inline int token_label(const WinGeom &g, long long window, int t)
{
    return token_label_at(g, window_origin(g, window), t);
}

/* Source voxel index (q0 L1 + q1) L2 + q2 of global token gt, or -1 for a padded token.
 * 32-bit throughout: the host keeps the padded token count and the voxel count under
 * 2^31. q_k = (a_k win_k + t_k + shift_k) mod padded_k with a_k win_k + t_k < padded_k
 * and shift_k < win_k <= padded_k, so the mod is one conditional subtraction. */
__device__ inline int token_voxel(const WinGeom &g, int gt)
{
    const int window = gt / g.n, t = gt - window * g.n;
    const int nw12 = g.nw[1] * g.nw[2], w12 = g.win[1] * g.win[2];
    const int a0 = window / nw12, ar = window - a0 * nw12, a1 = ar / g.nw[2];
    const int t0 = t / w12, tr = t - t0 * w12, t1 = tr / g.win[2];
    int q[3] = {a0 * g.win[0] + t0 + g.shift[0], a1 * g.win[1] + t1 + g.shift[1],
                (ar - a1 * g.nw[2]) * g.win[2] + (tr - t1 * g.win[2]) + g.shift[2]};
    for (int k = 0; k < 3; k++) {
        if (q[k] >= g.padded[k]) q[k] -= g.padded[k];
        if (q[k] >= g.L[k]) return -1;
    }
    return (q[0] * g.L[1] + q[1]) * g.L[2] + q[2];
}

/* Relative-position index parts (spec 3.4.3, with the shrink quirk): token i of any
 * window is decomposed by the CONFIGURED window cw, and
 *   R_full[i, t] = rel_query(i) - rel_key(t). */
__device__ inline int rel_key(const WinGeom &g, int t)
{
    const int s1 = (2 * g.cw[1] - 1) * (2 * g.cw[2] - 1), s2 = 2 * g.cw[2] - 1;
    return t / (g.cw[1] * g.cw[2]) * s1 + t / g.cw[2] % g.cw[1] * s2 + t % g.cw[2];
}
__device__ inline int rel_query(const WinGeom &g, int i)
{
    const int s1 = (2 * g.cw[1] - 1) * (2 * g.cw[2] - 1), s2 = 2 * g.cw[2] - 1;
    return rel_key(g, i) + (g.cw[0] - 1) * s1 + (g.cw[1] - 1) * s2 + (g.cw[2] - 1);
}

} // namespace swin_cuda

#endif
