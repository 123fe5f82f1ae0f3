#include "pipeline/parallel.h"

#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>

struct range_job {
    swin_range_fn fn;
    void *user;
    int tid;
    int64_t begin, end;
};

static void *range_main(void *p)
{
    struct range_job *j = p;
    j->fn(j->user, j->tid, j->begin, j->end);
    return NULL;
}

int swin_parallel_threads(int threads)
{
    if (threads <= 0) {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        threads = online > 0 ? (int)online : 1;
    }
    return threads < SWIN_PARALLEL_MAX ? threads : SWIN_PARALLEL_MAX;
}

void swin_parallel_for(int threads, int64_t n, swin_range_fn fn, void *user)
{
    threads = swin_parallel_threads(threads);
    if (threads > n) threads = (int)(n > 0 ? n : 1);
    if (threads <= 1) {
        fn(user, 0, 0, n);
        return;
    }
    struct range_job jobs[SWIN_PARALLEL_MAX];
    pthread_t th[SWIN_PARALLEL_MAX];
    bool started[SWIN_PARALLEL_MAX];
    for (int t = 0; t < threads; t++)
        jobs[t] = (struct range_job){fn, user, t, n * t / threads, n * (t + 1) / threads};
    for (int t = 1; t < threads; t++) started[t] = pthread_create(&th[t], NULL, range_main, &jobs[t]) == 0;
    range_main(&jobs[0]);
    for (int t = 1; t < threads; t++) {
        if (started[t]) pthread_join(th[t], NULL);
        else range_main(&jobs[t]);
    }
}
