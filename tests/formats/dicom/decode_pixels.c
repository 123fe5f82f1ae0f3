/* One DICOM file's pixels in HU, as the series reader decodes them (swin_dcm_read_header,
 * swin_dcm_read_pixels), for decoders_test.py to compare with the pixels it encoded.
 *
 *   dicom_decode_pixels FILE OUT.f32 [THREADS]   frames x rows x cols float32 HU, every frame of
 *   the file (at most 64) in order, row by row, decoded on THREADS threads (default 1); exit 0;
 *   on a refusal: its one-line message on stderr, exit 2 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "formats/dicom/dcm.h"

int main(int argc, char **argv)
{
    if ((argc != 3 && argc != 4) || (argc == 4 && atoi(argv[3]) < 1)) {
        fprintf(stderr, "usage: dicom_decode_pixels FILE OUT.f32 [THREADS]\n");
        return 1;
    }
    struct swin_dcm_slice *frames = NULL;
    int nframes = 0;
    swin_error err = {SWIN_OK, ""};
    bool is_dicom = false;
    if (swin_dcm_init(&err) || swin_dcm_read_header(argv[1], &frames, &nframes, &is_dicom, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 2;
    }
    const struct swin_dcm_slice *s = frames; /* the first frame */
    if (!is_dicom || s->rows <= 0 || s->cols <= 0 || s->rows > 4096 || s->cols > 4096 || nframes > 64) {
        fprintf(stderr, "%s: not a DICOM image of at most 64 frames of 4096 x 4096\n", argv[1]);
        free(frames);
        return 2;
    }
    const size_t n = (size_t)s->rows * (size_t)s->cols;
    float *hu = malloc(n * (size_t)nframes * sizeof *hu);
    const struct swin_dcm_slice *in[64];
    float *out[64];
    if (!hu) return 1;
    for (int f = 0; f < nframes; f++) in[f] = &frames[f], out[f] = hu + n * (size_t)f;
    if (swin_dcm_read_pixels(in, out, nframes, argc == 4 ? atoi(argv[3]) : 1, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        free(hu);
        free(frames);
        return 2;
    }
    free(frames);
    FILE *f = fopen(argv[2], "wb");
    const size_t total = n * (size_t)nframes;
    bool ok = f && fwrite(hu, sizeof *hu, total, f) == total;
    if (f && fclose(f)) ok = false;
    free(hu);
    return ok ? 0 : 1;
}
