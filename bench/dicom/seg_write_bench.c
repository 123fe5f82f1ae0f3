/* The two forms of swinrun's DICOM SEG, binary and label map, written from one synthetic
 * label map on a CT series' grid: the time to build and write each, and its size.
 *
 *     seg_write_bench SERIES_DIR OUT_DIR [REPS]
 *
 * The label map: the 13 BTCV organs as ellipsoids side by side in the plane (4 x 4 grid,
 * radii an eighth of the plane, the liver twice that), each spanning 20 to 60 % of the
 * slices. Prints one line per form: frames, bytes, the best of REPS (default 3) writes. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include "formats/dicom/classes.h"
#include "formats/dicom/series.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void organs(uint16_t *lab, int nx, int ny, int nz)
{
    for (int l = 1; l <= 13; l++) {
        double cx = ((l - 1) % 4 + 0.5) / 4 * nx, cy = ((l - 1) / 4 + 0.5) / 4 * ny;
        double r = (l == 6 ? 0.25 : 0.125) * (nx < ny ? nx : ny) / 2, span = (0.2 + 0.4 * (l % 5) / 4) * nz;
        double cz = 0.5 * nz;
        for (int k = 0; k < nz; k++)
            for (int j = 0; j < ny; j++)
                for (int i = 0; i < nx; i++) {
                    double u = (i - cx) / r, v = (j - cy) / r, w = (k - cz) / (span / 2);
                    if (u * u + v * v + w * w <= 1) lab[(size_t)i + (size_t)nx * ((size_t)j + (size_t)ny * k)] = l;
                }
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: seg_write_bench SERIES_DIR OUT_DIR [REPS]\n");
        return 2;
    }
    int reps = argc > 3 ? atoi(argv[3]) : 3;
    swin_error err;
    struct swin_dcm_series s;
    const char *in = argv[1];
    double t = now();
    if (swin_dcm_series_read(&in, 1, 0, &s, &err)) {
        fprintf(stderr, "seg_write_bench: %s\n", err.msg);
        return 1;
    }
    printf("series: %lld x %lld x %lld, headers read in %.2f s\n", (long long)s.dim[0], (long long)s.dim[1],
           (long long)s.dim[2], now() - t);
    int nx = (int)s.dim[0], ny = (int)s.dim[1], nz = (int)s.dim[2];
    uint16_t *lab = calloc((size_t)nx * ny * nz, sizeof *lab);
    if (!lab) return 1;
    organs(lab, nx, ny, nz);
    int nt;
    const swin_dicom_class *table = swin_dicom_btcv_classes(&nt);
    struct swin_dcm_ref ref = {.slices = s.order, .nz = nz};
    char notice[256];
    if (swin_dcm_ref_identity(&ref, notice, sizeof notice, &err)) {
        fprintf(stderr, "seg_write_bench: %s\n", err.msg);
        return 1;
    }
    const char *names[2] = {"binary", "labelmap"};
    for (int form = 0; form < 2; form++) {
        struct swin_dcm_content c = {.classes = table, .nclasses = 13, .labels = lab, .software_version = "bench",
                                     .seg_type = form ? SWIN_SEG_LABELMAP : SWIN_SEG_BINARY};
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.dcm", argv[2], names[form]);
        double best = 1e30;
        for (int r = 0; r < reps; r++) {
            t = now();
            if (swin_dcm_write_seg(&ref, &c, path, &err)) {
                fprintf(stderr, "seg_write_bench: %s\n", err.msg);
                return 1;
            }
            t = now() - t;
            if (t < best) best = t;
        }
        struct stat sb;
        stat(path, &sb);
        printf("%-8s %s: %lld bytes, written in %.3f s (best of %d)\n", names[form], path, (long long)sb.st_size,
               best, reps);
    }
    free(lab);
    swin_dcm_series_free(&s);
    return 0;
}
