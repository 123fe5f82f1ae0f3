/* Items run side by side, the first refusal kept (ordered_work.h): a shared counter hands out
 * the items; first_bad, the lowest failing item so far, gates the ones still to start. */
#include "formats/dicom/ordered_work.h"

#include <pthread.h>
#include <stdatomic.h>

#define MAX_THREADS 64

struct job {
    int n;
    swin_dcm_item_fn fn;
    void *user;
    atomic_int next, first_bad;
    pthread_mutex_t lock;
    swin_error err; /* first_bad's refusal */
};

static void *worker(void *arg)
{
    struct job *j = arg;
    for (int i; (i = atomic_fetch_add(&j->next, 1)) < j->n;) {
        if (i > atomic_load(&j->first_bad)) continue;
        swin_error e = {SWIN_OK, ""};
        if (j->fn(j->user, i, &e) == SWIN_OK) continue;
        pthread_mutex_lock(&j->lock);
        if (i < atomic_load(&j->first_bad)) {
            atomic_store(&j->first_bad, i);
            j->err = e;
        }
        pthread_mutex_unlock(&j->lock);
    }
    return NULL;
}

swin_status swin_dcm_run_ordered(int n, int threads, swin_dcm_item_fn fn, void *user, swin_error *err)
{
    struct job j = {.n = n, .fn = fn, .user = user};
    atomic_init(&j.next, 0);
    atomic_init(&j.first_bad, n);
    pthread_mutex_init(&j.lock, NULL);
    if (threads > n) threads = n;
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    pthread_t tid[MAX_THREADS];
    int started = 0;
    for (int t = 1; t < threads; t++)
        if (!pthread_create(&tid[started], NULL, worker, &j)) started++;
    worker(&j);
    for (int t = 0; t < started; t++) pthread_join(tid[t], NULL);
    pthread_mutex_destroy(&j.lock);
    if (atomic_load(&j.first_bad) < n) {
        *err = j.err;
        return err->status;
    }
    return SWIN_OK;
}
