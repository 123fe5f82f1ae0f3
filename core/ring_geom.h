/* The ring of a sliding-window run as a backend blends it in its own memory (the device
 * path of pipeline/sliding.h; the ops ring_* of kernels/ops.h): the volume, the layout of
 * the cubes along each axis, the planes held along the slab axis, and what each finished
 * plane gives back. Here, at the bottom, because the pipeline fills it, the runtime plans
 * with it and the backends compute with it.
 *
 * Glossary: (d0, d1, d2) the volume, d2 fastest; ax the slab axis, o1 < o2 the other two;
 * a plane is the d_o1 x d_o2 voxels with one coordinate along ax.
 *
 * Cubes: the volume is padded with zeros to at least the cube (pad_lo before it); along
 * axis k, cube start i (0 <= i < n[k], padded coordinates) is min(i * interval[k],
 * padded[k] - roi[k]) (MONAI's dense_patch_slices, pipeline/cubes.h). Cubes run in the
 * order of their starts (i along ax, then along o1, then along o2), and every voxel adds
 * the cubes that reach it in that order.
 *
 * Rows: the d_o2 voxels of one plane a and one index b along o1. A row is open from the
 * first cube that reaches it to the last; it is final once the cubes of the slab row i_last(a)
 * and their sub-row j_last(b) along o1 have all run. swin_ring_layout_of says where a backend
 * keeps the open rows (core/ring_geom.c). */
#ifndef SWIN_CORE_RING_GEOM_H
#define SWIN_CORE_RING_GEOM_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct swin_ring_geom {
    int64_t size[3];     /* the volume */
    int roi[3];          /* the cube */
    int64_t padded[3];   /* max(size, roi) */
    int64_t pad_lo[3];   /* zeros before the volume: (padded - size) / 2 */
    int64_t interval[3]; /* between consecutive cube starts (>= 1) */
    int n[3];            /* cube starts per axis */
    int ax;              /* the slab axis */
    int classes;         /* logits per voxel: the model's output channels */
    int label_bytes;     /* a finished plane's labels: 1 (uint8, classes <= 256) or 2 (uint16) */
    bool probs;          /* finished planes give back softmax probabilities too */
};

/* The slab axis for a volume and a cube: the axis with the most volume per cube (the first
 * of equals), so that the ring, one cube deep along it, holds the least. */
static inline int swin_ring_slab_axis(const int64_t size[3], const int roi[3])
{
    int best = 0;
    for (int k = 1; k < 3; k++) /* maximise size / roi: the slab is roi * (volume / size) */
        if ((double)size[k] / roi[k] > (double)size[best] / roi[best]) best = k;
    return best;
}

/* The two axes other than the slab axis, in order. */
static inline int swin_ring_o1(const struct swin_ring_geom *g) { return g->ax == 0 ? 1 : 0; }
static inline int swin_ring_o2(const struct swin_ring_geom *g) { return g->ax == 2 ? 1 : 2; }
/* Planes held along the slab axis: one cube deep, or the whole volume when it is thinner. */
static inline int64_t swin_ring_depth(const struct swin_ring_geom *g)
{
    return g->roi[g->ax] < g->size[g->ax] ? g->roi[g->ax] : g->size[g->ax];
}
/* Voxels of one plane: d_o1 * d_o2. */
static inline int64_t swin_ring_plane_voxels(const struct swin_ring_geom *g)
{
    return g->size[swin_ring_o1(g)] * g->size[swin_ring_o2(g)];
}
/* MONAI's scan interval along an axis (monai.inferers.utils._get_scan_interval: the cube when
 * it is the whole padded size, else int(roi * (1 - overlap)), at least 1) and the number of
 * starts (dense_patch_slices: up to the first that reaches the end). */
static inline int64_t swin_ring_interval(int64_t padded, int roi, double overlap)
{
    const int64_t i = roi == padded ? roi : (int64_t)((double)roi * (1.0 - overlap));
    return i > 0 ? i : 1;
}
static inline int swin_ring_starts(int64_t padded, int roi, int64_t interval)
{
    return padded <= roi ? 1 : (int)((padded - roi + interval - 1) / interval) + 1;
}

/* Where the open rows live: plane a's row b in slot a % slots, at position
 * (b + (a / slots) * d_o1) % span of the slot; a backend's ring holds slots * span rows.
 *   - the plain ring: slots = depth, span = d_o1 (every row of `depth` planes);
 *   - the sliding ring: span = d_o1 + roi[o1], and the fewest slots such that two planes
 *     of one slot are open together only while the older one is in its last slab row and
 *     the newer in its first. The older one's open rows are then b >= t_j (those no earlier
 *     sub-row finished), the newer one's b < t_j + roi[o1] (those some cube reached), t_j the
 *     current sub-row's start along o1 in volume coordinates; shifted by d_o1 against each
 *     other on a span of d_o1 + roi[o1], they never meet. A row's position is freed (zeroed
 *     by the finish) before its next owner's first cube, since rows finish after their last
 *     sub-row and before the next one runs.
 * The smaller of the two; for 96^3 cubes over a 267 x 267 x 375 grid the sliding ring holds
 * 48 x 363 rows at overlap 0.25 and 57 x 363 at 0.5 (the pulled-back last start keeps a few
 * planes open for three slab rows) against the plain ring's 96 x 267: 68 and 81 %. */
struct swin_ring_layout {
    int64_t slots, span;
};
void swin_ring_layout_of(const struct swin_ring_geom *g, struct swin_ring_layout *out);

/* Start i along axis k, padded coordinates. */
static inline int64_t swin_ring_start(const struct swin_ring_geom *g, int k, int64_t i)
{
    const int64_t s = i * g->interval[k], last = g->padded[k] - g->roi[k];
    return s < last ? s : last;
}

#ifdef __cplusplus
}
#endif

#endif
