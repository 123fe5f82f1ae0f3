/* Contour tracing (formats/dicom/contour.h) against an even-odd rasteriser written here:
 * on random masks of several densities (holes, single pixels, pixels touching only at a
 * corner, labels touching the border), every label's loops, filled at pixel centres by the
 * even-odd rule, give the mask back exactly; every loop is closed, axis-aligned and keeps
 * only corners where it turns. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/dicom/contour.h"

/* pixel (x, y) has its centre at corner coordinates (x + 0.5, y + 0.5) */
static void fill_even_odd(const struct swin_loops *l, int cols, int rows, unsigned char *mask)
{
    memset(mask, 0, (size_t)cols * rows);
    for (int lp = 0; lp < l->nloops; lp++) {
        int a = l->start[lp], b = l->start[lp + 1];
        for (int q = a; q < b; q++) {
            int x1 = l->xy[2 * q], y1 = l->xy[2 * q + 1];
            int n = q + 1 < b ? q + 1 : a;
            int y2 = l->xy[2 * n + 1];
            if (y1 == y2) continue; /* horizontal edges never cross a centre's row */
            int ylo = y1 < y2 ? y1 : y2, yhi = y1 < y2 ? y2 : y1;
            /* vertical edge at x1: the ray to the right from centres left of it crosses it */
            for (int y = ylo; y < yhi; y++)
                for (int x = 0; x < x1 && x < cols; x++) mask[y * cols + x] ^= 1;
        }
    }
}

int main(void)
{
    srand(16);
    int failures = 0, cases = 0;
    struct swin_loops l = {0};
    swin_error err;
    const int sizes[][2] = {{1, 1}, {2, 3}, {7, 5}, {16, 16}, {33, 20}, {64, 48}};
    for (int si = 0; si < 6; si++)
        for (int density = 1; density <= 9; density += 2)
            for (int rep = 0; rep < 20; rep++) {
                int cols = sizes[si][0], rows = sizes[si][1];
                uint16_t *sl = malloc(sizeof *sl * cols * rows);
                unsigned char *m = malloc((size_t)cols * rows);
                for (int i = 0; i < cols * rows; i++) sl[i] = rand() % 10 < density ? (uint16_t)(1 + rand() % 3) : 0;
                for (uint16_t lab = 1; lab <= 3; lab++) {
                    cases++;
                    if (swin_trace_slice(sl, cols, rows, lab, &l, &err)) {
                        printf("trace failed: %s\n", err.msg);
                        failures++;
                        continue;
                    }
                    int bad = 0;
                    for (int lp = 0; lp < l.nloops && !bad; lp++) {
                        int a = l.start[lp], b = l.start[lp + 1];
                        if (b - a < 4 || (b - a) % 2) bad = 1; /* rectilinear loops turn an even number of times */
                        for (int q = a; q < b && !bad; q++) {
                            int n = q + 1 < b ? q + 1 : a, p = q > a ? q - 1 : b - 1;
                            int dx = l.xy[2 * n] - l.xy[2 * q], dy = l.xy[2 * n + 1] - l.xy[2 * q + 1];
                            int px = l.xy[2 * q] - l.xy[2 * p];
                            if ((dx != 0) == (dy != 0)) bad = 2;          /* axis-aligned, not empty */
                            else if ((px != 0) == (dx != 0)) bad = 3;     /* a turn at every kept corner */
                        }
                    }
                    fill_even_odd(&l, cols, rows, m);
                    for (int i = 0; i < cols * rows && !bad; i++)
                        if (m[i] != (sl[i] == lab)) bad = 4;
                    if (bad) {
                        if (failures < 5)
                            printf("FAIL %d x %d density %d label %d: %s\n", cols, rows, density, lab,
                                   bad == 4 ? "even-odd fill differs from the mask" : "malformed loop");
                        failures++;
                    }
                }
                free(sl);
                free(m);
            }
    swin_loops_free(&l);
    printf("%d of %d traced slices fill back exactly\n", cases - failures, cases);
    return failures != 0;
}
