/* Files decoded side by side (decode_files.h) through ordered_work.h, a file an item. With
 * fewer files than threads (an Enhanced CT), each file gets a share of the threads for its
 * frames (swin_dcm_read_pixels). */
#include "formats/dicom/decode_files.h"

#include <stdlib.h>
#include <string.h>

#include "formats/dicom/ordered_work.h"

struct files {
    const struct swin_dcm_slice *const *s;
    float *const *out;
    const int *start; /* file f: slices start[f] .. start[f + 1] - 1 */
    int per_file;     /* the threads each file's frames may use */
};

static swin_status decode_file(void *user, int f, swin_error *err)
{
    const struct files *j = user;
    const int a = j->start[f];
    return swin_dcm_read_pixels(j->s + a, j->out + a, j->start[f + 1] - a, j->per_file, err);
}

swin_status swin_dcm_decode_files(const struct swin_dcm_slice *const *s, float *const *out, int n, int threads,
                                  swin_error *err)
{
    int *start = malloc(((size_t)n + 1) * sizeof *start);
    if (!start) return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for %d slices", n);
    int files = 0;
    for (int k = 0; k < n; k++)
        if (!k || strcmp(s[k]->path, s[k - 1]->path)) start[files++] = k;
    start[files] = n;
    struct files j = {.s = s, .out = out, .start = start, .per_file = files < threads ? threads / files : 1};
    swin_status st = swin_dcm_run_ordered(files, threads, decode_file, &j, err);
    free(start);
    return st;
}
