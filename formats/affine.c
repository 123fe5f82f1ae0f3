/* Affine algebra and MONAI's Orientation/Spacing geometry, in double precision.
 * References (installed MONAI 1.6.1 and nibabel): nibabel.orientations.io_orientation,
 * monai.data.utils.zoom_affine and compute_shape_offset, monai Spacing.__call__. */
#include "formats/affine.h"
#include "core/settings.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define AFFINE_TOL 1e-3 /* monai.utils.misc AFFINE_TOL */

swin_mat4 swin_mat4_identity(void)
{
    swin_mat4 r = {{{0}}};
    for (int i = 0; i < 4; i++) r.m[i][i] = 1;
    return r;
}

swin_mat4 swin_mat4_mul(swin_mat4 a, swin_mat4 b)
{
    swin_mat4 r;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            double s = 0;
            for (int k = 0; k < 4; k++) s += a.m[i][k] * b.m[k][j];
            r.m[i][j] = s;
        }
    return r;
}

static double det3(const double m[3][3])
{
    return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
           m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}

static bool inv3(const double m[3][3], double r[3][3])
{
    double d = det3(m);
    if (!(fabs(d) > 1e-12)) return false;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            /* cofactor of m[j][i] */
            int r0 = (j + 1) % 3, r1 = (j + 2) % 3, c0 = (i + 1) % 3, c1 = (i + 2) % 3;
            r[i][j] = (m[r0][c0] * m[r1][c1] - m[r0][c1] * m[r1][c0]) / d;
        }
    return true;
}

bool swin_mat4_inverse(swin_mat4 a, swin_mat4 *out)
{
    double m[3][3], r[3][3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) m[i][j] = a.m[i][j];
    if (!inv3(m, r)) return false;
    *out = swin_mat4_identity();
    for (int i = 0; i < 3; i++) {
        double t = 0;
        for (int j = 0; j < 3; j++) {
            out->m[i][j] = r[i][j];
            t += r[i][j] * a.m[j][3];
        }
        out->m[i][3] = -t;
    }
    return true;
}

bool swin_mat4_solve(swin_mat4 a, swin_mat4 b, swin_mat4 *x)
{
    for (int c = 0; c < 4; c++) { /* getrf: column c, pivot = largest magnitude below */
        int p = c;
        for (int r = c + 1; r < 4; r++)
            if (fabs(a.m[r][c]) > fabs(a.m[p][c])) p = r;
        if (a.m[p][c] == 0) return false;
        if (p != c)
            for (int k = 0; k < 4; k++) {
                double t = a.m[p][k];
                a.m[p][k] = a.m[c][k], a.m[c][k] = t;
                t = b.m[p][k];
                b.m[p][k] = b.m[c][k], b.m[c][k] = t;
            }
        double rinv = 1.0 / a.m[c][c];
        for (int r = c + 1; r < 4; r++) {
            double l = a.m[r][c] * rinv;
            a.m[r][c] = l;
            for (int k = c + 1; k < 4; k++) a.m[r][k] -= l * a.m[c][k];
            for (int k = 0; k < 4; k++) b.m[r][k] -= l * b.m[c][k];
        }
    }
    for (int c = 3; c >= 0; c--) { /* back substitution */
        double rinv = 1.0 / a.m[c][c];
        for (int k = 0; k < 4; k++) {
            double s = b.m[c][k];
            for (int j = c + 1; j < 4; j++) s -= a.m[c][j] * x->m[j][k];
            x->m[c][k] = s * rinv;
        }
    }
    return true;
}

void swin_mat4_spacing(swin_mat4 a, double sp[3])
{
    for (int j = 0; j < 3; j++)
        sp[j] = sqrt(a.m[0][j] * a.m[0][j] + a.m[1][j] * a.m[1][j] + a.m[2][j] * a.m[2][j]);
}

bool swin_affine_orientation(swin_mat4 a, int axis[3], int flip[3])
{
    double sp[3], r[3][3];
    swin_mat4_spacing(a, sp);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) r[i][j] = a.m[i][j] / (sp[j] > 0 ? sp[j] : 1);
    /* Polar factor by Newton's iteration R <- (R + R^-T) / 2 (what the SVD gives). */
    for (int it = 0; it < 100; it++) {
        double inv[3][3], nr[3][3], diff = 0;
        if (!inv3(r, inv)) return false;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                nr[i][j] = 0.5 * (r[i][j] + inv[j][i]);
                diff += fabs(nr[i][j] - r[i][j]);
            }
        memcpy(r, nr, sizeof r);
        if (diff < 1e-15) break;
    }
    for (int in = 0; in < 3; in++) {
        int best = 0;
        for (int o = 1; o < 3; o++)
            if (fabs(r[o][in]) > fabs(r[best][in])) best = o;
        if (r[best][in] == 0) return false;
        axis[in] = best;
        flip[in] = r[best][in] < 0 ? -1 : 1;
        for (int j = 0; j < 3; j++) r[best][j] = 0; /* take the world axis out of play */
    }
    return true;
}

void swin_affine_axcodes(swin_mat4 a, char codes[4])
{
    int axis[3], flip[3];
    if (!swin_affine_orientation(a, axis, flip)) {
        strcpy(codes, "???");
        return;
    }
    for (int k = 0; k < 3; k++) codes[k] = (flip[k] > 0 ? "RAS" : "LPI")[axis[k]];
    codes[3] = 0;
}

/* monai.data.utils.zoom_affine(affine, pixdim, diagonal=False): keeps the rotation of
 * the QR factorisation (via Cholesky, as MONAI does), replaces the zooms. */
static bool zoom_affine(swin_mat4 a, const double pixdim[3], swin_mat4 *out)
{
    double rzs[3][3], g[3][3], u[3][3] = {{0}}, uinv[3][3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) rzs[i][j] = a.m[i][j];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            g[i][j] = 0;
            for (int k = 0; k < 3; k++) g[i][j] += rzs[k][i] * rzs[k][j];
        }
    /* g = u^T u with u upper triangular (numpy cholesky(g).T) */
    for (int i = 0; i < 3; i++) {
        double s = g[i][i];
        for (int k = 0; k < i; k++) s -= u[k][i] * u[k][i];
        if (!(s > 0)) return false;
        u[i][i] = sqrt(s);
        for (int j = i + 1; j < 3; j++) {
            double t = g[i][j];
            for (int k = 0; k < i; k++) t -= u[k][i] * u[k][j];
            u[i][j] = t / u[i][i];
        }
    }
    if (!inv3(u, uinv)) return false;
    *out = swin_mat4_identity();
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double rot = 0;
            for (int k = 0; k < 3; k++) rot += rzs[i][k] * uinv[k][j];
            out->m[i][j] = rot * fabs(pixdim[j]);
        }
    return true;
}

/* monai.data.utils.compute_shape_offset(shape, in_affine, out_affine, scale_extent=False);
 * out_affine has no translation yet. */
static bool shape_offset(const int64_t dim[3], swin_mat4 in, swin_mat4 out, int64_t shape[3], double offset[3])
{
    /* np.linalg.solve(out, in), not inv(out) @ in: with 1.25 mm slices resampled to 2.5 mm the
     * solve's 1.25 / 2.5 is exactly 0.5, the inverse's 0.4 * 1.25 is not, and an extent of
     * exactly n + 0.5 voxels must round to even as numpy's does (MONAI's shape) */
    swin_mat4 x;
    if (!swin_mat4_solve(out, in, &x)) return false;
    double co[8][3], cw[8][3];
    for (int c = 0; c < 8; c++) { /* numpy meshgrid "ij" order: the first axis slowest */
        double v[3] = {(c >> 2) & 1 ? (double)(dim[0] - 1) : 0, (c >> 1) & 1 ? (double)(dim[1] - 1) : 0,
                       c & 1 ? (double)(dim[2] - 1) : 0};
        for (int r = 0; r < 3; r++) {
            co[c][r] = x.m[r][3];
            cw[c][r] = in.m[r][3];
            for (int k = 0; k < 3; k++) {
                co[c][r] += x.m[r][k] * v[k];
                cw[c][r] += in.m[r][k] * v[k];
            }
        }
    }
    for (int r = 0; r < 3; r++) {
        double lo = co[0][r], hi = co[0][r];
        for (int c = 1; c < 8; c++) {
            lo = fmin(lo, co[c][r]);
            hi = fmax(hi, co[c][r]);
        }
        shape[r] = (int64_t)nearbyint(hi - lo + 1.0); /* np.round: half to even */
    }
    for (int c = 0; c < 8; c++) {
        bool is_min = true;
        for (int r = 0; r < 3; r++)
            for (int d = 0; d < 8; d++)
                if (fabs(fmin(0.0, co[d][r] - co[c][r])) > 1e-8) is_min = false;
        if (is_min) {
            memcpy(offset, cw[c], 3 * sizeof(double));
            return true;
        }
    }
    for (int r = 0; r < 3; r++) { /* no corner is smallest on every axis: centre-align */
        offset[r] = in.m[r][3];
        for (int k = 0; k < 3; k++)
            offset[r] += in.m[r][k] * (double)dim[k] / 2.0 - out.m[r][k] * (double)shape[k] / 2.0;
    }
    return true;
}

bool swin_resample_grid_plan(swin_mat4 in_affine, const int64_t in_dim[3], bool reorient, const double *pixdim,
               int64_t max_voxels, struct swin_grid *g, char *msg, int msg_len)
{
    swin_mat4 inv;
    if (!swin_mat4_inverse(in_affine, &inv)) {
        snprintf(msg, msg_len, "the image's affine (qform/sform) is singular");
        return false;
    }
    /* p: oriented voxel -> input voxel (nibabel inv_ornt_aff) */
    swin_mat4 p = swin_mat4_identity();
    int64_t odim[3] = {in_dim[0], in_dim[1], in_dim[2]};
    if (reorient) {
        int axis[3], flip[3];
        if (!swin_affine_orientation(in_affine, axis, flip)) {
            snprintf(msg, msg_len, "cannot tell the image's orientation from its affine");
            return false;
        }
        p = (swin_mat4){{{0}}};
        p.m[3][3] = 1;
        for (int in = 0; in < 3; in++) {
            p.m[in][axis[in]] = flip[in];
            p.m[in][3] = flip[in] < 0 ? (double)(in_dim[in] - 1) : 0;
            odim[axis[in]] = in_dim[in];
        }
    }
    swin_mat4 oriented = swin_mat4_mul(in_affine, p);
    memcpy(g->ras_dim, odim, sizeof odim);
    g->ras_affine = oriented;
    g->ras_to_in = p;
    if (!pixdim) {
        memcpy(g->dim, odim, sizeof odim);
        g->affine = oriented;
        g->to_in = p;
    } else {
        double orig[3], target[3];
        swin_mat4_spacing(oriented, orig);
        for (int k = 0; k < 3; k++) /* MONAI keeps a spacing within AFFINE_TOL of the target */
            target[k] = fabs(orig[k] - pixdim[k]) <= AFFINE_TOL ? orig[k] : pixdim[k];
        swin_mat4 out;
        double offset[3];
        if (!zoom_affine(oriented, target, &out) || !shape_offset(odim, oriented, out, g->dim, offset)) {
            snprintf(msg, msg_len, "the image's affine (qform/sform) is singular");
            return false;
        }
        for (int r = 0; r < 3; r++) out.m[r][3] = offset[r];
        g->affine = out;
        g->to_in = swin_mat4_mul(inv, out);
    }
    double n = 1;
    for (int k = 0; k < 3; k++) {
        if (g->dim[k] < 1) g->dim[k] = 1;
        n *= (double)g->dim[k];
    }
    if (n > (double)max_voxels) {
        snprintf(msg, msg_len,
                 "resampling to the requested spacing would make a %lld x %lld x %lld grid (%.3g voxels, limit "
                 "%lld): check the image's spacing (pixdim) and %s",
                 (long long)g->dim[0], (long long)g->dim[1], (long long)g->dim[2], n, (long long)max_voxels,
                 swin_setting(SWIN_SETTING_SPACING));
        return false;
    }
    return true;
}
