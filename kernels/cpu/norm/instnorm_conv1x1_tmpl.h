/* instnorm_act_conv1x1's apply pass (instnorm_conv1x1.h), written once for every level:
 * compiled by instnorm_conv1x1_avx2.c and instnorm_conv1x1_avx512.c after their vec_*.h, with
 * NORM_CONV1X1_FN defined as the function's name. Per block of voxels: each voxel's cin
 * normalised channels, VW at a time in the arithmetic of instnorm_avx2.c's apply (the same
 * float32 values as instnorm_act in place), into a row of an aligned block; then the outputs,
 * ceil(cout / VW) vectors of accumulators per voxel, each row entry broadcast against its row
 * of w. */
#include "kernels/cpu/norm/instnorm_conv1x1.h"

_Static_assert(SWIN_NORM_CONV1X1_MAX_COUT <= 4 * 8, "project_rows holds at most 4 vectors of 8 outputs");

/* y[c0, c0 + VW) of voxel row x (and r) with coefficients k (and rk), lanes past n zero. */
V_INLINE vf norm_lanes(const float *x, const float *r, const struct swin_cpu_in_coef *k,
                       const struct swin_cpu_in_coef *rk, int c0, int n, bool lrelu)
{
    const bool full = n >= VW;
    const vmask m = v_mask(n);
#define LD(p) (full ? v_loadu(p) : v_maskload(p, m))
    vf y = v_sub(v_sub(LD(x + c0), LD(k->mean_hi + c0)), LD(k->mean_lo + c0));
    y = v_fmadd(y, LD(k->scale + c0), LD(k->shift + c0));
    if (r) {
        const vf q = v_sub(v_sub(LD(r + c0), LD(rk->mean_hi + c0)), LD(rk->mean_lo + c0));
        y = v_add(y, v_fmadd(q, LD(rk->scale + c0), LD(rk->shift + c0)));
    }
#undef LD
    return lrelu ? v_max(y, v_mul(y, v_set1(0.01f))) : y;
}

/* Rows [0, rows) of out (rows <= R, out_pitch apart) = bias + sum_c y[r][c] w[c] (y's rows
 * SWIN_NORM_CONV1X1_MAX_CIN apart, w's ldw), in NV <= 4 vectors of outputs, the last one holding
 * cout - (NV - 1) VW. R rows at a time, so that R NV accumulator chains hide the FMA latency
 * (one voxel's NV chains of cin FMAs would wait on it). */
V_INLINE void project_rows(float *out, int64_t out_pitch, const float *y, int rows, int cin, const float *w, int ldw,
                           const float *bias, int cout, const int NV, const int R)
{
    vf acc[8][4];
    for (int r = 0; r < R; r++)
        for (int j = 0; j < NV; j++) acc[r][j] = v_load(bias + j * VW);
    for (int c = 0; c < cin; c++, w += ldw) {
        vf wv[4];
        for (int j = 0; j < NV; j++) wv[j] = v_load(w + j * VW);
        for (int r = 0; r < R; r++) {
            const vf s = v_set1(y[r * SWIN_NORM_CONV1X1_MAX_CIN + c]);
            for (int j = 0; j < NV; j++) acc[r][j] = v_fmadd(s, wv[j], acc[r][j]);
        }
    }
    for (int r = 0; r < R && r < rows; r++)
        for (int j = 0; j < NV; j++) {
            float *o = out + r * out_pitch + j * VW;
            if (cout - j * VW >= VW) v_storeu(o, acc[r][j]);
            else v_maskstore(o, v_mask(cout - j * VW), acc[r][j]);
        }
}

/* Voxels [vb, ve) R at a time (the last block's missing rows repeat its last voxel, not stored). */
V_INLINE void blocks(const struct swin_cpu_norm_conv1x1 *h, int64_t vb, int64_t ve, const int NV, const int R)
{
    _Alignas(64) float y[8 * SWIN_NORM_CONV1X1_MAX_CIN];
    const int cin = h->cin, ldw = SWIN_CPU_NORM_CONV1X1_COUTP(h->cout);
    for (int64_t v0 = vb; v0 < ve; v0 += R) {
        const int rows = ve - v0 < R ? (int)(ve - v0) : R;
        for (int r = 0; r < R; r++) {
            const int64_t v = v0 + (r < rows ? r : rows - 1);
            const float *x = h->x + v * h->pitch, *res = h->res ? h->res + v * h->res_pitch : NULL;
            for (int c0 = 0; c0 < cin; c0 += VW)
                v_store(y + r * SWIN_NORM_CONV1X1_MAX_CIN + c0,
                        norm_lanes(x, res, h->k, h->rk, c0, cin - c0, h->lrelu));
        }
        project_rows(h->out + v0 * h->out_pitch, h->out_pitch, y, rows, cin, h->w, ldw, h->bias, h->cout, NV, R);
    }
}

V_FN void NORM_CONV1X1_FN(const struct swin_cpu_norm_conv1x1 *h, int64_t vb, int64_t ve)
{
    switch ((h->cout + VW - 1) / VW) { /* constant shapes, so that the accumulators stay in registers */
    case 1: blocks(h, vb, ve, 1, 8); break;
    case 2: blocks(h, vb, ve, 2, 4); break;
    case 3: blocks(h, vb, ve, 3, 2); break;
    default: blocks(h, vb, ve, 4, 2); break;
    }
}
