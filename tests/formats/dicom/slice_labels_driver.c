/* Puts labels of its own making through the DICOM format's outputs for a series with missing
 * slices, so that a label can sit where no model output can be steered: only on a plane the
 * reader interpolated between two slices. slice_labels_test.py checks the SEG and RT
 * Structure Set written against pydicom and highdicom.
 *
 *     slice_labels_driver SERIES_DIR SEG.dcm RT.dcm {organs|between}
 *
 * organs:  label 1 (a 6 x 6 square) on every plane, label 6 (4 x 4) on slice 0's plane only,
 *          label 3 (4 x 4) on the first interpolated plane only;
 * between: label 3 on the first interpolated plane and nothing else.
 * Prints one JSON line: the first interpolated plane, the slices' planes, dicom_written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "formats/dicom/series.h"
#include "formats/format.h"
#include "pipeline/segment_params.h"

extern const struct swin_format swin_format_dicom;

static void square(uint16_t *plane, int64_t nx, int x0, int y0, int side, uint16_t label)
{
    for (int y = y0; y < y0 + side; y++)
        for (int x = x0; x < x0 + side; x++) plane[(size_t)y * (size_t)nx + (size_t)x] = label;
}

static int fail(const char *what, const swin_error *err)
{
    fprintf(stderr, "slice_labels_driver: %s: %s\n", what, err->msg);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 5 || (strcmp(argv[4], "organs") && strcmp(argv[4], "between"))) {
        fprintf(stderr, "usage: slice_labels_driver SERIES_DIR SEG.dcm RT.dcm {organs|between}\n");
        return 2;
    }
    const struct swin_format *f = &swin_format_dicom;
    const char *paths[1] = {argv[1]};
    bool organs = !strcmp(argv[4], "organs");
    swin_segment_params p = swin_segment_default_params();
    p.rtstruct_path = argv[3];
    swin_segment_report rep = {0};
    swin_error err = {0};
    struct swin_format_input in = {0};
    if (f->check(paths, 1, argv[2], &p, &err)) return fail("check", &err);
    if (f->read(paths, 1, argv[2], &p, 1, &in, &rep, &err)) return fail("read", &err);
    const struct swin_dcm_series *s = in.state;
    if (!s->grid.plane_of || !s->grid.filled) {
        fprintf(stderr, "slice_labels_driver: %s has no interpolated plane\n", argv[1]);
        return 1;
    }
    int64_t nx = in.dim[0], ny = in.dim[1], nz = in.dim[2];
    char *on_slice = calloc((size_t)nz, 1);
    uint16_t *plane = malloc((size_t)(nx * ny) * sizeof *plane);
    if (!on_slice || !plane || nx < 16 || ny < 16) return 1;
    for (int k = 0; k < s->nslices; k++) on_slice[s->grid.plane_of[k]] = 1;
    int64_t between = 0;
    while (on_slice[between]) between++;

    void *out = NULL;
    if (f->open_outputs(&in, argv[2], &p, 14, 1, &out, &err)) return fail("open_outputs", &err);
    for (int64_t k = 0; k < nz; k++) {
        memset(plane, 0, (size_t)(nx * ny) * sizeof *plane);
        if (organs) square(plane, nx, 2, 2, 6, 1);
        if (organs && k == s->grid.plane_of[0]) square(plane, nx, 2, 10, 4, 6);
        if (k == between) square(plane, nx, 10, 10, 4, 3);
        if (f->put_labels(out, k, plane, &err)) return fail("put_labels", &err);
    }
    if (f->finish(out, &rep, &err)) {
        f->discard(out);
        return fail("finish", &err);
    }
    if (f->publish(out, &rep, &err)) return fail("publish", &err);
    printf("{\"between\": %lld, \"slice_planes\": [", (long long)between);
    for (int k = 0; k < s->nslices; k++) printf("%s%lld", k ? ", " : "", (long long)s->grid.plane_of[k]);
    printf("], \"dicom_written\": %s}\n", rep.dicom_written ? "true" : "false");
    f->close(&in);
    free(on_slice);
    free(plane);
    return 0;
}
