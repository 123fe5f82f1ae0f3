/* libFuzzer harness: the DICOM series reader (formats/dicom/series.h) on the fuzzed bytes as
 * one file of a folder: DCMTK's parse of the header, the attribute checks, then the pixel
 * decoding (uncompressed, deflate, RLE, JPEG, JPEG-LS with DCMTK; JPEG 2000 and HTJ2K with
 * OpenJPEG, formats/dicom/j2k_decode.c) of its first and last frame, and the whole reader on
 * the folder (which refuses a one-slice series after its checks) with the references the
 * DICOM outputs need; then the same bytes as a DICOMDIR (its records, the files they name). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/dicom/series.h"
#include "tests/fuzz/harness/fuzz_input.h"
#include "tests/fuzz/harness/fuzz_status.h"

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
    const char *path = fuzz_input_write("slice.dcm", bytes, size);
    swin_error err = {SWIN_OK, ""};
    struct swin_dcm_slice *s = NULL;
    int nframes = 0;
    bool is_dicom = false;
    swin_status st = swin_dcm_init(&err);
    fuzz_check_error(st, &err);
    if (st) return 0;
    st = swin_dcm_read_header(path, &s, &nframes, &is_dicom, &err);
    fuzz_check_error(st, &err);
    if (!st && is_dicom && s[0].rows > 0 && s[0].cols > 0 && s[0].rows <= 1024 && s[0].cols <= 1024) {
        static float px[2][1024 * 1024];
        const struct swin_dcm_slice *frames[2] = {&s[0], &s[nframes - 1]}; /* the first and last frame */
        float *out[2] = {px[0], px[1]};
        /* one thread: JPEG 2000 frames are decoded in forked children, and clang 14's sanitizer
         * allocator is not fork-safe while a second thread allocates (a child can hang on its
         * lock); glibc's malloc, which the product runs on, is (fork locks it) */
        st = swin_dcm_read_pixels(frames, out, nframes > 1 ? 2 : 1, 1, &err);
        fuzz_check_error(st, &err);
    }
    free(s);
    char dir[4096];
    strncpy(dir, path, sizeof dir - 1);
    dir[sizeof dir - 1] = 0;
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    const char *in = dir;
    struct swin_dcm_series series;
    st = swin_dcm_series_read(&in, 1, NULL, 1, &series, &err);
    fuzz_check_error(st, &err);
    if (!st) {
        st = swin_dcm_series_check_references(&series, &err);
        fuzz_check_error(st, &err);
        swin_dcm_series_free(&series);
    }
    const char *dicomdir = fuzz_input_write("DICOMDIR", bytes, size);
    st = swin_dcm_series_read(&dicomdir, 1, NULL, 0, &series, &err);
    fuzz_check_error(st, &err);
    if (!st) swin_dcm_series_free(&series);
    unlink(dicomdir); /* else the next input's folder would be read through it */
    return 0;
}
