#include "weights/onnx/mask.h"

#include <math.h>
#include <stdlib.h>

/* Stage geometry on one axis: effective window, shift, padded length (the `<=` shrink rule). */
struct axis { int w, sh, p; };

static struct axis axis_of(int len, int win)
{
    struct axis a;
    a.w = len <= win ? len : win;
    a.sh = len <= win ? 0 : win / 2;
    a.p = (len + a.w - 1) / a.w * a.w;
    return a;
}

/* Region label of padded position p (rolled frame); one region when there is no shift. */
static int region(const struct axis *a, int p)
{
    if (!a->sh) return 0;
    return p < a->p - a->w ? 0 : (p < a->p - a->sh ? 1 : 2);
}

/* MONAI's region number 9 r_d + 3 r_h + r_w of token `tok` of window a. */
static int label(const struct axis ax[3], const int a[3], uint64_t tok)
{
    int t0 = (int)(tok / (uint64_t)(ax[1].w * ax[2].w)), t1 = (int)(tok / (uint64_t)ax[2].w % (uint64_t)ax[1].w),
        t2 = (int)(tok % (uint64_t)ax[2].w);
    return 9 * region(&ax[0], a[0] * ax[0].w + t0) + 3 * region(&ax[1], a[1] * ax[1].w + t1) + region(&ax[2], a[2] * ax[2].w + t2);
}

/* Stage s's windows at the export cube (every cube axis known): each axis's geometry, the
 * tokens per window n and the number of windows nw. */
static void stage_windows(const struct swin_config *cfg, int s, struct axis ax[3], uint64_t *n, uint64_t *nw)
{
    *n = *nw = 1;
    for (int k = 0; k < 3; k++) {
        ax[k] = axis_of(cfg->cube[k] >> (s + 1), cfg->window[k]);
        *n *= (uint64_t)ax[k].w;
        *nw *= (uint64_t)(ax[k].p / ax[k].w);
    }
}

/* The grid position a of window omega (window index W fastest). */
static void window_at(const struct axis ax[3], uint64_t omega, int a[3])
{
    for (int k = 2; k >= 0; k--) {
        uint64_t nwin = (uint64_t)(ax[k].p / ax[k].w);
        a[k] = (int)(omega % nwin);
        omega /= nwin;
    }
}

static swin_status mismatch(const struct swin_onnx_file *f, const struct swin_onnx_tensor *t, int s, const char *what, swin_error *err)
{
    return swin_error_set(err, SWIN_ERR_MODEL, "%s: constant '%s' added to stage %d's attention logits is not its shifted-window mask: %s",
                          f->path, t->name, s + 1, what);
}

swin_status swin_attn_mask_check(const struct swin_onnx_file *f, const struct swin_config *cfg, int s, const struct swin_onnx_tensor *t,
                       swin_error *err)
{
    struct axis ax[3];
    bool known = cfg->cube[0] && cfg->cube[1] && cfg->cube[2];
    uint64_t n = 1, nw = 1;
    if (known) stage_windows(cfg, s, ax, &n, &nw);
    if (known && t->numel != nw * n * n) return mismatch(f, t, s, "its size is not windows x tokens x tokens", err);
    float *buf = malloc((size_t)(known ? n : 4096) * sizeof *buf);
    if (!buf) return swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of host memory checking '%s'", f->path, t->name);
    swin_status st = SWIN_OK;
    uint64_t row = known ? n : 4096;
    for (uint64_t r0 = 0; r0 < t->numel && !st; r0 += row) {
        uint64_t cnt = t->numel - r0 < row ? t->numel - r0 : row;
        if ((st = swin_onnx_tensor_read_f32(f, t, r0, cnt, buf, err))) break;
        if (!known) {
            for (uint64_t k = 0; k < cnt && !st; k++)
                if (buf[k] != 0.0f && buf[k] != -100.0f) st = mismatch(f, t, s, "it holds values other than 0 and -100", err);
            continue;
        }
        /* row r0/n is (window omega, query token i); window index W fastest, token (d, h, w) */
        uint64_t i = r0 / n % n;
        int a[3];
        window_at(ax, r0 / n / n, a);
        int li = label(ax, a, i);
        for (uint64_t k = 0; k < cnt; k++) {
            float want = label(ax, a, k) == li ? 0.0f : -100.0f;
            if (buf[k] != want) {
                st = mismatch(f, t, s, "an entry differs from the standard mask", err);
                break;
            }
        }
    }
    free(buf);
    return st;
}

/* the largest folded bias + mask read whole (elements): folded constants are small */
#define BIAS_MASK_MAX ((uint64_t)1 << 26)

swin_status swin_attn_bias_mask_check(const struct swin_onnx_file *f, const struct swin_config *cfg, int s,
                                      const struct swin_const_view *v, swin_error *err)
{
    const struct swin_onnx_tensor *t = v->src;
    int r = v->ndim;
    struct axis ax[3];
    uint64_t n, nw;
    if (!cfg->cube[0] || !cfg->cube[1] || !cfg->cube[2])
        return mismatch(f, t, s, "a folded bias and mask need the export's fixed size", err);
    stage_windows(cfg, s, ax, &n, &nw);
    if (r < 4 || (uint64_t)v->dims[r - 4] != nw || (uint64_t)v->dims[r - 1] != n || (uint64_t)v->dims[r - 2] != n)
        return mismatch(f, t, s, "its shape is not windows x heads x tokens x tokens", err);
    if (t->numel > BIAS_MASK_MAX) return mismatch(f, t, s, "too large for a folded bias and mask", err);
    float *buf = malloc((size_t)t->numel * sizeof *buf);
    if (!buf) return swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of host memory checking '%s'", f->path, t->name);
    swin_status st = swin_onnx_tensor_read_f32(f, t, 0, t->numel, buf, err);
    const int64_t *sd = v->strides + r - 4;   /* window, head, query, key */
    const uint64_t heads = (uint64_t)v->dims[r - 3];
    for (uint64_t omega = 0; omega < nw && !st; omega++) {
        int a[3];
        window_at(ax, omega, a);
        for (uint64_t i = 0; i < n && !st; i++) {
            int li = label(ax, a, i);
            for (uint64_t k = 0; k < n && !st; k++) {
                bool masked = label(ax, a, k) != li;
                for (uint64_t h = 0; h < heads; h++) {
                    float bias = buf[h * (uint64_t)sd[1] + i * (uint64_t)sd[2] + k * (uint64_t)sd[3]];
                    float got = buf[omega * (uint64_t)sd[0] + h * (uint64_t)sd[1] + i * (uint64_t)sd[2] + k * (uint64_t)sd[3]];
                    /* an entry the mask leaves is the bias exactly; a masked one bias - 100 as
                     * float16 or bfloat16 storage keeps it (a step of 0.0625 or 0.5 there) */
                    if (masked ? !(fabsf(got - (bias - 100.0f)) <= 1.0f) : got != bias) {
                        st = mismatch(f, t, s, "a window's entry is not the bias plus the standard mask", err);
                        break;
                    }
                }
            }
        }
    }
    free(buf);
    return st;
}
