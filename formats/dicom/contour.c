/* Edge-following contour tracing (contour.h). */
#include <stdlib.h>
#include <string.h>

#include "formats/dicom/contour.h"

/* directions in image coordinates (y down): 0 +x, 1 +y, 2 -x, 3 -y */
static const int DX[4] = {1, 0, -1, 0}, DY[4] = {0, 1, 0, -1};

static swin_status add_point(struct swin_loops *l, int x, int y, swin_error *err)
{
    if (l->npoints == l->cap_points) {
        int cap = l->cap_points ? 2 * l->cap_points : 1024;
        int32_t *xy = realloc(l->xy, (size_t)cap * 2 * sizeof *xy);
        if (!xy) return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for contour points");
        l->xy = xy, l->cap_points = cap;
    }
    l->xy[2 * l->npoints] = x;
    l->xy[2 * l->npoints + 1] = y;
    l->npoints++;
    return SWIN_OK;
}

static swin_status close_loop(struct swin_loops *l, swin_error *err)
{
    if (l->nloops + 2 > l->cap_loops) {
        int cap = l->cap_loops ? 2 * l->cap_loops : 64;
        int *s = realloc(l->start, (size_t)cap * sizeof *s);
        if (!s) return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for contours");
        l->start = s, l->cap_loops = cap;
    }
    l->start[++l->nloops] = l->npoints;
    return SWIN_OK;
}

swin_status swin_trace_slice(const uint16_t *slice, int cols, int rows, uint16_t label, struct swin_loops *l,
                             swin_error *err)
{
    const int64_t W = cols + 1, nv = W * (rows + 1);
    if (nv > l->out_cap) {
        uint8_t *o = realloc(l->out, (size_t)nv);
        if (!o) return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for contour tracing");
        l->out = o, l->out_cap = nv;
    }
    if (!l->start && close_loop(l, err)) return SWIN_ERR_NOMEM; /* allocates start[0] */
    l->nloops = 0, l->npoints = 0, l->start[0] = 0;
    memset(l->out, 0, (size_t)nv);
#define IN(x, y) ((x) >= 0 && (y) >= 0 && (x) < cols && (y) < rows && slice[(int64_t)(y) * cols + (x)] == label)
    /* the directed boundary edges of every pixel of the label, clockwise around it */
    for (int y = 0; y < rows; y++)
        for (int x = 0; x < cols; x++) {
            if (slice[(int64_t)y * cols + x] != label) continue;
            if (!IN(x, y - 1)) l->out[y * W + x] |= 1 << 0;             /* top: (x,y) -> (x+1,y) */
            if (!IN(x + 1, y)) l->out[y * W + x + 1] |= 1 << 1;         /* right: (x+1,y) -> (x+1,y+1) */
            if (!IN(x, y + 1)) l->out[(y + 1) * W + x + 1] |= 1 << 2;   /* bottom: (x+1,y+1) -> (x,y+1) */
            if (!IN(x - 1, y)) l->out[(y + 1) * W + x] |= 1 << 3;       /* left: (x,y+1) -> (x,y) */
        }
#undef IN
    /* every corner has as many edges in as out: a walk from a corner can only stop there */
    for (int64_t v0 = 0; v0 < nv; v0++) {
        while (l->out[v0]) {
            int d0 = __builtin_ctz(l->out[v0]), d = d0;
            int64_t v = v0;
            l->out[v] &= (uint8_t)~(1 << d);
            for (;;) {
                v += DX[d] + DY[d] * W;
                if (v == v0) break;
                /* at a corner two pixels touch diagonally: turn right (keeps them apart) */
                int nd = -1;
                for (int t = 0; t < 3 && nd < 0; t++) {
                    int c = (d + (t == 0 ? 1 : t == 1 ? 0 : 3)) & 3;
                    if (l->out[v] & (1 << c)) nd = c;
                }
                if (nd < 0) return swin_error_set(err, SWIN_ERR_INTERNAL, "contour tracing lost its edge");
                l->out[v] &= (uint8_t)~(1 << nd);
                if (nd != d && add_point(l, (int)(v % W), (int)(v / W), err)) return SWIN_ERR_NOMEM;
                d = nd;
            }
            if (d != d0 && add_point(l, (int)(v0 % W), (int)(v0 / W), err)) return SWIN_ERR_NOMEM;
            if (close_loop(l, err)) return SWIN_ERR_NOMEM;
        }
    }
    return SWIN_OK;
}

void swin_loops_free(struct swin_loops *l)
{
    free(l->start);
    free(l->xy);
    free(l->out);
    memset(l, 0, sizeof *l);
}
