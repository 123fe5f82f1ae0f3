/* The two forms of swinrun's DICOM SEG, binary and label map, written from one synthetic
 * label map on a CT series' grid: the time to build and write each, and its size.
 *
 *     seg_write_bench SERIES_DIR OUT_DIR [REPS [LABELS]]
 *
 * The label map: the 13 BTCV organs as ellipsoids side by side in the plane (4 x 4 grid,
 * radii an eighth of the plane, the liver twice that), each spanning 20 to 60 % of the
 * slices; labels 14..LABELS (default 13) one voxel each, label l at the flat index
 * (l * 7919) mod the voxel count (labelmap_test.py's 16-bit case). Writes OUT_DIR/binary.dcm
 * and OUT_DIR/labelmap.dcm; prints one line per form: bytes, the best of REPS (default 3)
 * writes. */
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

static void organs(uint16_t *lab, int nx, int ny, int nz, int nlabels)
{
    const size_t n = (size_t)nx * ny * nz;
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
    for (int l = 14; l <= nlabels; l++) lab[(size_t)l * 7919 % n] = (uint16_t)l;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: seg_write_bench SERIES_DIR OUT_DIR [REPS [LABELS]]\n");
        return 2;
    }
    int reps = argc > 3 ? atoi(argv[3]) : 3, nlabels = argc > 4 ? atoi(argv[4]) : 13;
    if (reps < 1 || nlabels < 13 || nlabels > 65535) {
        fprintf(stderr, "seg_write_bench: REPS >= 1, LABELS 13..65535\n");
        return 2;
    }
    swin_error err;
    struct swin_dcm_series s;
    const char *in = argv[1];
    double t = now();
    if (swin_dcm_series_read(&in, 1, NULL, 0, &s, &err)) {
        fprintf(stderr, "seg_write_bench: %s\n", err.msg);
        return 1;
    }
    printf("series: %lld x %lld x %lld, headers read in %.2f s\n", (long long)s.dim[0], (long long)s.dim[1],
           (long long)s.dim[2], now() - t);
    int nx = (int)s.dim[0], ny = (int)s.dim[1], nz = (int)s.dim[2];
    uint16_t *lab = calloc((size_t)nx * ny * nz, sizeof *lab);
    if (!lab) return 1;
    organs(lab, nx, ny, nz, nlabels);
    int nt;
    const swin_dicom_class *btcv = swin_dicom_btcv_classes(&nt);
    swin_dicom_class *table = calloc((size_t)nlabels, sizeof *table);
    char (*class_names)[32] = calloc((size_t)nlabels, sizeof *class_names);
    if (!table || !class_names) return 1;
    for (int l = 1; l <= nlabels; l++) table[l - 1] = swin_dicom_class_for(btcv, nt, l, class_names[l - 1]);
    struct swin_dcm_ref ref = {.slices = s.order, .nz = nz};
    char notice[256];
    if (swin_dcm_ref_identity(&ref, notice, sizeof notice, &err)) {
        fprintf(stderr, "seg_write_bench: %s\n", err.msg);
        return 1;
    }
    const char *names[2] = {"binary", "labelmap"};
    for (int form = 0; form < 2; form++) {
        struct swin_dcm_content c = {.classes = table, .nclasses = nlabels, .labels = lab, .software_version = "bench",
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
    free(table);
    free(class_names);
    swin_dcm_series_free(&s);
    return 0;
}
