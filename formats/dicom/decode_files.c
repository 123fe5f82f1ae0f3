/* Files decoded side by side (decode_files.h): each thread takes the next file from a shared
 * counter; after a refusal at file f, files past f are skipped, files before it still run,
 * so the earliest refusal wins. With fewer files than threads (an Enhanced CT), each file
 * gets a share of the threads for its frames (swin_dcm_read_pixels). */
#include "formats/dicom/decode_files.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 64

struct job {
    const struct swin_dcm_slice *const *s;
    float *const *out;
    const int *start; /* file f: slices start[f] .. start[f + 1] - 1 */
    int files, per_file; /* per_file: the threads each file's frames may use */
    atomic_int next, first_bad;
    pthread_mutex_t lock;
    swin_error err; /* first_bad's refusal */
};

static void *worker(void *arg)
{
    struct job *j = arg;
    for (int f; (f = atomic_fetch_add(&j->next, 1)) < j->files;) {
        if (f > atomic_load(&j->first_bad)) continue;
        swin_error e = {SWIN_OK, ""};
        const int a = j->start[f];
        if (swin_dcm_read_pixels(j->s + a, j->out + a, j->start[f + 1] - a, j->per_file, &e) == SWIN_OK) continue;
        pthread_mutex_lock(&j->lock);
        if (f < atomic_load(&j->first_bad)) {
            atomic_store(&j->first_bad, f);
            j->err = e;
        }
        pthread_mutex_unlock(&j->lock);
    }
    return NULL;
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
    struct job j = {.s = s, .out = out, .start = start, .files = files,
                    .per_file = files < threads ? threads / files : 1};
    atomic_init(&j.next, 0);
    atomic_init(&j.first_bad, files);
    pthread_mutex_init(&j.lock, NULL);
    if (threads > files) threads = files;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    pthread_t tid[MAX_THREADS];
    int started = 0;
    for (int t = 1; t < threads; t++)
        if (!pthread_create(&tid[started], NULL, worker, &j)) started++;
    worker(&j);
    for (int t = 0; t < started; t++) pthread_join(tid[t], NULL);
    pthread_mutex_destroy(&j.lock);
    free(start);
    if (atomic_load(&j.first_bad) < files) {
        *err = j.err;
        return err->status;
    }
    return SWIN_OK;
}
