/* Instance-norm statistics kept by a CPU conv (in_stats.h). */
#include "kernels/cpu/norm/in_stats.h"

int64_t swin_cpu_in_stats_slots(struct swin_vol out, int tile)
{
    const int64_t tiles = (int64_t)((out.d + tile - 1) / tile) * ((out.h + tile - 1) / tile) * ((out.w + tile - 1) / tile);
    return (tiles + 3) / 4;
}

size_t swin_cpu_in_stats_bytes(struct swin_vol out)
{
    return sizeof(struct swin_cpu_in_stats_hdr) +
           (size_t)swin_cpu_in_stats_slots(out, 4) * (size_t)(1 + 3 * (int64_t)out.c) * sizeof(double);
}

void swin_cpu_in_stats_begin(void *stats, int64_t slots, int64_t c)
{
    struct swin_cpu_in_stats_hdr *h = stats;
    h->slots = slots;
    h->c = c;
    for (int64_t s = 0; s < slots; s++) swin_cpu_in_slot(stats, s, c)[0] = 0.0;
}

void swin_cpu_in_stats_none(void *stats)
{
    struct swin_cpu_in_stats_hdr *h = stats;
    h->slots = 0;
    h->c = 0;
}

int swin_cpu_in_stats_moments(const void *stats, int64_t n, int c0, int nc, double *mean, double *var)
{
    const struct swin_cpu_in_stats_hdr *h = stats;
    if (!stats || h->slots <= 0 || c0 < 0 || c0 + nc > h->c) return 0;
    const int64_t c = h->c;
    double count = 0.0;
    for (int i = 0; i < nc; i++) mean[i] = var[i] = 0.0; /* var holds M2 (sum of squared deviations) until the end */
    for (int64_t s = 0; s < h->slots; s++) {
        const double *sl = swin_cpu_in_slot((void *)stats, s, c);
        const double nb = sl[0];
        if (nb <= 0.0) continue;
        const double *k = sl + 1, *s1 = sl + 1 + c, *s2 = sl + 1 + 2 * c;
        const double na = count, nab = na + nb;
        for (int i = 0; i < nc; i++) {
            const double d1 = s1[c0 + i] / nb;
            const double mb = k[c0 + i] + d1, m2b = s2[c0 + i] - s1[c0 + i] * d1;
            const double delta = mb - mean[i];
            mean[i] += delta * (nb / nab);
            var[i] += (m2b > 0.0 ? m2b : 0.0) + delta * delta * (na * nb / nab);
        }
        count = nab;
    }
    if (count != (double)n) return 0;
    for (int i = 0; i < nc; i++) var[i] /= count;
    return 1;
}
