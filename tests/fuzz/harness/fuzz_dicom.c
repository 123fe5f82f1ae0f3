/* libFuzzer harness: the DICOM series reader (formats/dicom/series.h) on the fuzzed bytes as
 * one file of a folder: DCMTK's parse of the header, the attribute checks, then the pixel
 * decoding (uncompressed, deflate, RLE, JPEG, JPEG-LS with DCMTK; JPEG 2000 and HTJ2K with
 * OpenJPEG, formats/dicom/j2k_decode.c) of that file as if it were a slice,
 * and the whole reader on the folder (which refuses a one-slice series after its checks). */
#include <stdint.h>
#include <string.h>

#include "formats/dicom/series.h"
#include "tests/fuzz/harness/fuzz_input.h"
#include "tests/fuzz/harness/fuzz_status.h"

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
    const char *path = fuzz_input_write("slice.dcm", bytes, size);
    swin_error err = {SWIN_OK, ""};
    static struct swin_dcm_slice s; /* 4 KiB of path: not on libFuzzer's stack */
    bool is_dicom = false;
    swin_status st = swin_dcm_init(&err);
    fuzz_check_error(st, &err, true);
    if (st) return 0;
    st = swin_dcm_read_header(path, &s, &is_dicom, &err);
    fuzz_check_error(st, &err, true);
    if (!st && is_dicom && s.rows > 0 && s.cols > 0 && s.rows <= 1024 && s.cols <= 1024) {
        static float px[1024 * 1024];
        st = swin_dcm_read_pixels(&s, px, &err);
        fuzz_check_error(st, &err, true);
    }
    char dir[4096];
    strncpy(dir, path, sizeof dir - 1);
    dir[sizeof dir - 1] = 0;
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    const char *in = dir;
    struct swin_dcm_series series;
    st = swin_dcm_series_read(&in, 1, 1, &series, &err);
    fuzz_check_error(st, &err, true);
    if (!st) swin_dcm_series_free(&series);
    return 0;
}
