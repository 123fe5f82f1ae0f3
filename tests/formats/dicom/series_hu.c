/* A DICOM series' volume as the series reader makes it (swin_dcm_series_read), for
 * decoders_test.py to compare across decoding thread counts and with the pixels it wrote.
 *
 *   dicom_series_hu FOLDER THREADS OUT.f32   the grid's HU, float32, i fastest; its dims on
 *   stdout ("nx ny nz"); exit 0; on a refusal its one-line message on stderr, exit 2 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "formats/dicom/series.h"

int main(int argc, char **argv)
{
    if (argc != 4 || atoi(argv[2]) < 1) {
        fprintf(stderr, "usage: dicom_series_hu FOLDER THREADS OUT.f32\n");
        return 1;
    }
    swin_error err = {SWIN_OK, ""};
    struct swin_dcm_series s;
    const char *in = argv[1];
    if (swin_dcm_init(&err) || swin_dcm_series_read(&in, 1, NULL, atoi(argv[2]), &s, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 2;
    }
    const size_t n = (size_t)s.dim[0] * (size_t)s.dim[1] * (size_t)s.dim[2];
    FILE *f = fopen(argv[3], "wb");
    bool ok = f && fwrite(s.hu, sizeof *s.hu, n, f) == n;
    if (f && fclose(f)) ok = false;
    printf("%lld %lld %lld\n", (long long)s.dim[0], (long long)s.dim[1], (long long)s.dim[2]);
    swin_dcm_series_free(&s);
    return ok ? 0 : 1;
}
