#include "pipeline/normalize.h"

#include <math.h>

#include "pipeline/parallel.h"

#define SLICES 64 /* partial sums: fixed, so the result does not depend on the thread count */

/* Three passes over x in SLICES slices: the sum, the squared deviations from the mean (not
 * E[x^2] - mean^2, which cancels badly for MRI intensities in the thousands), the z-scores. */
struct zscore_job {
    float *x;
    int64_t n;
    bool nonzero;
    int pass;
    double mean, sd;
    double part[SLICES];
    int64_t count[SLICES];
};

static void zscore_slices(void *user, int tid, int64_t s0, int64_t s1)
{
    (void)tid;
    struct zscore_job *z = user;
    for (int64_t s = s0; s < s1; s++) {
        const int64_t lo = z->n * s / SLICES, hi = z->n * (s + 1) / SLICES;
        double part = 0;
        int64_t count = 0;
        for (int64_t i = lo; i < hi; i++) {
            if (z->nonzero && z->x[i] == 0) continue;
            const double d = z->x[i] - z->mean;
            if (z->pass == 0) part += z->x[i], count++;
            else if (z->pass == 1) part += d * d;
            else z->x[i] = (float)(d / z->sd);
        }
        z->part[s] = part, z->count[s] = count;
    }
}

static double total(const struct zscore_job *z)
{
    double t = 0;
    for (int s = 0; s < SLICES; s++) t += z->part[s];
    return t;
}

void swin_zscore(float *x, int64_t n, bool nonzero, int threads)
{
    struct zscore_job z = {.x = x, .n = n, .nonzero = nonzero};
    swin_parallel_for(threads, SLICES, zscore_slices, &z);
    int64_t count = 0;
    for (int s = 0; s < SLICES; s++) count += z.count[s];
    if (!count) return;
    z.mean = total(&z) / (double)count;
    z.pass = 1;
    swin_parallel_for(threads, SLICES, zscore_slices, &z);
    z.sd = sqrt(total(&z) / (double)count);
    if (!(z.sd > 0)) z.sd = 1;
    z.pass = 2;
    swin_parallel_for(threads, SLICES, zscore_slices, &z);
}
