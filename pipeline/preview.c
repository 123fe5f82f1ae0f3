#include "pipeline/preview.h"

#include <math.h>
#include <stdlib.h>

#include "pipeline/png.h"

/* Distinct colours for labels 1..N (cycled beyond). */
static const uint8_t palette[][3] = {
    {230, 25, 75},  {60, 180, 75},   {255, 225, 25}, {0, 130, 200},  {245, 130, 48}, {145, 30, 180},
    {70, 240, 240}, {240, 50, 230},  {210, 245, 60}, {250, 190, 212}, {0, 128, 128}, {220, 190, 255},
    {170, 110, 40}, {255, 250, 200}, {128, 0, 0},    {170, 255, 195}, {128, 128, 0}, {255, 215, 180},
    {0, 0, 128},    {128, 128, 128},
};
#define NPAL (int)(sizeof palette / sizeof palette[0])

struct panel {
    int ax_x, ax_y; /* volume axes along image x and y; both drawn reversed (see preview.h) */
    int w, h;       /* pixels */
};

static void draw(uint8_t *rgb, int img_w, int x_off, const struct panel *p, int fixed_ax, int64_t fixed,
                 const float *vol, float black, float white, const void *labels, int lb, const int64_t d[3],
                 const double sp[3], double px)
{
    for (int y = 0; y < p->h; y++)
        for (int x = 0; x < p->w; x++) {
            int64_t u[3];
            u[fixed_ax] = fixed;
            int64_t ux = (int64_t)((x + 0.5) * px / sp[p->ax_x]), uy = (int64_t)((y + 0.5) * px / sp[p->ax_y]);
            if (ux >= d[p->ax_x]) ux = d[p->ax_x] - 1;
            if (uy >= d[p->ax_y]) uy = d[p->ax_y] - 1;
            u[p->ax_x] = d[p->ax_x] - 1 - ux;
            u[p->ax_y] = d[p->ax_y] - 1 - uy;
            int64_t v = (u[0] * d[1] + u[1]) * d[2] + u[2];
            float g = (vol[v] - black) / (white - black);
            g = g < 0 ? 0 : (g > 1 ? 1 : g);
            unsigned l = lb == 1 ? ((const uint8_t *)labels)[v] : ((const uint16_t *)labels)[v];
            uint8_t *o = rgb + ((size_t)y * img_w + x_off + x) * 3;
            for (int c = 0; c < 3; c++) {
                double grey = 255.0 * g;
                o[c] = (uint8_t)(l ? 0.55 * grey + 0.45 * palette[(l - 1) % NPAL][c] : grey);
            }
        }
}

swin_status swin_preview_finish(struct swin_atomic_file *af, const char *path, const float *vol, float black,
                                float white, const void *labels, int label_bytes, const int64_t d[3],
                                const double sp[3], swin_error *err)
{
    double px = fmin(sp[0], fmin(sp[1], sp[2])); /* mm per pixel */
    /* axial (fixed u2): x = R..L, y = A..P; coronal (fixed u1): x = R..L, y = S..I;
     * sagittal (fixed u0): x = A..P, y = S..I */
    struct panel p[3] = {{0, 1, 0, 0}, {0, 2, 0, 0}, {1, 2, 0, 0}};
    const int fixed[3] = {2, 1, 0};
    int w = 0, h = 0, gap = 4;
    for (int i = 0; i < 3; i++) {
        p[i].w = (int)ceil((double)d[p[i].ax_x] * sp[p[i].ax_x] / px);
        p[i].h = (int)ceil((double)d[p[i].ax_y] * sp[p[i].ax_y] / px);
        w += p[i].w + (i ? gap : 0);
        if (p[i].h > h) h = p[i].h;
    }
    if ((int64_t)w * h > 64 << 20) return swin_error_set(err, SWIN_ERR_ARG, "the preview would be %d x %d pixels", w, h);
    uint8_t *rgb = calloc((size_t)w * h * 3, 1);
    if (!rgb) return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for the preview");
    for (int i = 0, x = 0; i < 3; x += p[i].w + gap, i++)
        draw(rgb, w, x, &p[i], fixed[i], d[fixed[i]] / 2, vol, black, white, labels, label_bytes, d, sp, px);
    swin_status st = swin_png_finish_rgb(af, path, rgb, w, h, err);
    free(rgb);
    return st;
}
