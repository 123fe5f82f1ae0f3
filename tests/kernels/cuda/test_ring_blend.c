/* ring_start, ring_add, ring_finish: the CUDA backend's ring (emulated) against the host
 * ring's arithmetic, restated per voxel below (reference_voxel): pipeline/sliding.c adds each
 * voxel's cubes in their run order in float32, logit * importance rounded, then the sum, the
 * weights likewise; the average is a float32 division, the label the first maximum, the
 * probabilities the softmax of pipeline/segment.c's sink in double (one class, a sigmoid
 * model: the label 1 where the average is >= 0, the probability its sigmoid in double). The CPU backend has no
 * ring ops (its pipeline blends on the host), so this reference is the CPU side.
 *
 * The cubes run and planes finish in the order sliding.c uses (every cube of a slab row, then
 * the planes no later cube reaches). Labels must be equal everywhere. Probabilities: equal to
 * the bit under the emulator (its device exp is the host's, and nothing else rounds
 * differently), within 2^-22 (two float32 ulps below 1) on a GPU, whose double exp is within
 * 1 ulp of double but not glibc's. Shapes: slab axis 0, 1 and 2, a volume thinner than the
 * cube (padding, one cube along the axis), a logits pitch above the class count, gaussian-like
 * random weights, 1 class, 300 classes (two-byte labels), integer logits under constant weights
 * (exact ties: the first maximum must win), a non-finite logit in the padding (counted, labels
 * untouched). Half mode (CT_DTYPE=f16): the logits are float16 values, the ring float32. */
#include "tests/kernels/cuda/cuda_op_test.h"

#include "kernels/op_check.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ring_case {
    const char *name;
    int64_t size[3];
    int roi[3];
    double overlap;
    int classes, pitch;
    bool probs, random_weights, integer_logits, inf_in_padding;
    int sliding; /* the layout core/ring_geom.h must pick: 1 sliding, 0 plain, -1 either */
};

/* MONAI's layout along each axis, as pipeline/cubes.c computes it, and the slab axis of
 * pipeline/sliding.c (the most volume per cube). */
static struct swin_ring_geom make_geom(const struct ring_case *c)
{
    struct swin_ring_geom g = {.classes = c->classes, .label_bytes = c->classes <= 256 ? 1 : 2, .probs = c->probs};
    for (int k = 0; k < 3; k++) {
        g.size[k] = c->size[k];
        g.roi[k] = c->roi[k];
        g.padded[k] = c->size[k] > c->roi[k] ? c->size[k] : c->roi[k];
        g.pad_lo[k] = (g.padded[k] - c->size[k]) / 2;
        int64_t iv = c->roi[k] == g.padded[k] ? c->roi[k] : (int64_t)((double)c->roi[k] * (1.0 - c->overlap));
        g.interval[k] = iv > 0 ? iv : 1;
        int n = 1;
        while ((int64_t)(n - 1) * g.interval[k] + c->roi[k] < g.padded[k]) n++;
        g.n[k] = n;
        if ((double)g.size[k] / g.roi[k] > (double)g.size[g.ax] / g.roi[g.ax]) g.ax = k;
    }
    return g;
}

struct cube {
    int64_t p[3];
    cvol logits;
};

/* Host ring arithmetic for one voxel x of the volume: its averaged logits into avg. */
static void reference_voxel(const struct swin_ring_geom *g, const float *imp, const struct cube *cubes, int ncubes,
                            const int64_t x[3], float *avg, float *acc)
{
    float w = 0.0f;
    for (int k = 0; k < g->classes; k++) acc[k] = 0.0f;
    for (int i = 0; i < ncubes; i++) { /* run order */
        int64_t q[3];
        bool in = true;
        for (int k = 0; k < 3; k++) {
            q[k] = x[k] + g->pad_lo[k] - cubes[i].p[k];
            in &= q[k] >= 0 && q[k] < g->roi[k];
        }
        if (!in) continue;
        const int64_t wi = (q[0] * g->roi[1] + q[1]) * g->roi[2] + q[2];
        const struct swin_vol *l = &cubes[i].logits.host;
        for (int k = 0; k < g->classes; k++) acc[k] += ((const float *)l->data)[wi * l->pitch + k] * imp[wi];
        w += imp[wi];
    }
    for (int k = 0; k < g->classes; k++) avg[k] = acc[k] / w;
}

/* Compares plane `plane` (its labels and probabilities as ring_finish gave them back) with the
 * host ring's; counts into the case's tallies. */
struct tally {
    int64_t mismatched, prob_bad, ties;
    double worst_prob, prob_tol;
};

static void compare_plane(const struct ring_case *c, const struct swin_ring_geom *g, const float *imp,
                          const struct cube *cubes, int ncubes, int64_t plane, const void *labels,
                          const float *probs, float *avg, float *acc, struct tally *t)
{
    const int ax = g->ax, o1 = swin_ring_o1(g), o2 = swin_ring_o2(g), co = c->classes;
    int64_t x[3];
    x[ax] = plane;
    for (x[o1] = 0; x[o1] < g->size[o1]; x[o1]++)
        for (x[o2] = 0; x[o2] < g->size[o2]; x[o2]++) {
            reference_voxel(g, imp, cubes, ncubes, x, avg, acc);
            int best = co == 1 ? avg[0] >= 0.0f : 0; /* one class: a sigmoid model, sigmoid >= 0.5 */
            for (int k = 1; k < co; k++)
                if (avg[k] > avg[best]) best = k;
            for (int k = best + 1; k < co; k++) t->ties += avg[k] == avg[best];
            const int64_t u = x[o1] * g->size[o2] + x[o2];
            const int got = g->label_bytes == 1 ? ((const uint8_t *)labels)[u] : ((const uint16_t *)labels)[u];
            if (got != best && t->mismatched++ < 5)
                fprintf(stderr, "  %s: voxel %lld,%lld,%lld label %d, host ring %d\n", c->name, (long long)x[0],
                        (long long)x[1], (long long)x[2], got, best);
            if (!c->probs) continue;
            const int top = co == 1 ? 0 : best;
            double sum = co == 1 ? 1.0 + exp(-(double)avg[0]) : 0; /* one class: the sigmoid */
            for (int k = 0; k < co && co > 1; k++) sum += exp((double)avg[k] - (double)avg[top]);
            for (int k = 0; k < co; k++) {
                const float p = (float)((co == 1 ? 1.0 : exp((double)avg[k] - (double)avg[top])) / sum);
                const double d = fabs((double)probs[u * co + k] - (double)p);
                if (!(d <= t->prob_tol)) t->prob_bad++;
                if (!(d <= t->worst_prob)) t->worst_prob = d;
            }
        }
}

/* Along axis k: no cube after start index i reaches below the next start (pipeline/sliding.c). */
static int64_t final_below(const struct swin_ring_geom *g, int k, int i)
{
    int64_t upto = i + 1 < g->n[k] ? swin_ring_start(g, k, i + 1) - g->pad_lo[k] : g->size[k];
    return upto < 0 ? 0 : upto > g->size[k] ? g->size[k] : upto;
}

static bool run_case(ct_env *e, test_rng *r, const struct ring_case *c)
{
    const struct swin_ring_geom g = make_geom(c);
    const int ax = g.ax, o1 = swin_ring_o1(&g), o2 = swin_ring_o2(&g), co = c->classes;
    const int64_t plane_n = swin_ring_plane_voxels(&g), cube_n = (int64_t)c->roi[0] * c->roi[1] * c->roi[2];
    const int64_t depth = swin_ring_depth(&g);
    const int ncubes = g.n[0] * g.n[1] * g.n[2];
    struct swin_ring_layout layout;
    swin_ring_layout_of(&g, &layout);
    float *imp = malloc((size_t)cube_n * sizeof *imp);
    struct cube *cubes = calloc((size_t)ncubes, sizeof *cubes);
    /* the planes a slab row finishes (at most depth), as sliding.c's device path holds them */
    void *labels = malloc((size_t)(depth * plane_n) * 2);
    float *probs = malloc((size_t)(depth * plane_n * co) * sizeof *probs);
    float *avg = malloc((size_t)co * sizeof *avg), *acc = malloc((size_t)co * sizeof *acc);
    for (int64_t i = 0; i < cube_n; i++) imp[i] = c->random_weights ? test_rng_uniform(r, 1e-3f, 1.0f) : 1.0f;

    const struct swin_ops *ops = swin_cuda_ops_for(ct_dtype());
    const size_t bytes = ops->ring_bytes(e->gpu, &g);
    void *ring = NULL;
    bool ok = cudaMalloc(&ring, bytes) == cudaSuccess;
    if (!ok) check_true("cudaMalloc of the ring", false);
    ct_rc("ring_start", swin_op_ring_start(ops, e->gpu, ring, &g, imp), ops, e->gpu);

    /* the cubes in run order; after each sub-row along o1 the rows it finished of the planes
     * the slab row finishes, after each slab row those planes */
    int nc = 0;
    int64_t finished = 0, nonfinite = 0;
    struct tally t = {.prob_tol =
#ifdef CT_REAL_GPU
                          0x1p-22
#else
                          0.0
#endif
    };
    for (int i = 0; i < g.n[ax]; i++) {
        const int64_t upto = final_below(&g, ax, i);
        int64_t rows_done = 0;
        for (int j = 0; j < g.n[o1]; j++) {
            for (int l = 0; l < g.n[o2]; l++, nc++) {
                struct cube *cu = &cubes[nc];
                cu->p[ax] = swin_ring_start(&g, ax, i);
                cu->p[o1] = swin_ring_start(&g, o1, j);
                cu->p[o2] = swin_ring_start(&g, o2, l);
                cu->logits = cvol_new(c->roi[0], c->roi[1], c->roi[2], co, c->pitch, r, -4.0f, 4.0f);
                float *h = cu->logits.hmem;
                if (c->integer_logits) {
                    for (int64_t v = 0; v < cube_n; v++)
                        for (int k = 0; k < co; k++) h[v * c->pitch + k] = floorf(h[v * c->pitch + k] / 2.0f);
                }
                if (c->inf_in_padding && nc == 0) h[0] = INFINITY; /* voxel (0,0,0) of the first cube: padding */
                if ((c->integer_logits || (c->inf_in_padding && nc == 0)) && /* float32 cases only */
                    (cudaMemcpy(cu->logits.dmem, h, cu->logits.total * sizeof(float), cudaMemcpyHostToDevice) ||
                     cudaDeviceSynchronize()))
                    ok = check_true("upload of the changed logits", false);
                ct_rc("ring_add", swin_op_ring_add(ops, e->gpu, ring, &g, cu->logits.dev, cu->p), ops, e->gpu);
            }
            const int64_t rows_upto = final_below(&g, o1, j);
            for (int64_t p = finished; p < upto && rows_upto > rows_done; p++) {
                long long nf = 0;
                const int64_t at = (p - finished) * plane_n + rows_done * g.size[o2];
                ct_rc("ring_finish",
                      swin_op_ring_finish(ops, e->gpu, ring, &g, p, rows_done, rows_upto,
                                          (char *)labels + at * g.label_bytes, c->probs ? probs + at * co : NULL, &nf),
                      ops, e->gpu);
                nonfinite = nf;
            }
            if (rows_upto > rows_done) rows_done = rows_upto;
        }
        for (int64_t p = finished; p < upto; p++) {
            const int64_t at = (p - finished) * plane_n;
            compare_plane(c, &g, imp, cubes, nc, p, (char *)labels + at * g.label_bytes, probs + at * co, avg, acc,
                          &t);
        }
        if (upto > finished) finished = upto;
    }
    char msg[320];
    snprintf(msg, sizeof msg,
             "%s: %d cubes, %lld planes along axis %d, %s ring (%lld x %lld rows against %lld x %lld): labels equal to "
             "the host ring's (%lld differ)",
             c->name, ncubes, (long long)g.size[ax], ax, layout.span > g.size[o1] ? "sliding" : "plain",
             (long long)layout.slots, (long long)layout.span, (long long)depth, (long long)g.size[o1],
             (long long)t.mismatched);
    ok &= check_true(msg, t.mismatched == 0 && finished == g.size[ax]);
    if (c->sliding >= 0) {
        snprintf(msg, sizeof msg, "%s: the %s ring", c->name, c->sliding ? "sliding" : "plain");
        ok &= check_true(msg, (layout.span > g.size[o1]) == (c->sliding == 1));
    }
    if (c->integer_logits) {
        snprintf(msg, sizeof msg, "%s: %lld voxels whose highest average ties with a later class", c->name,
                 (long long)t.ties);
        ok &= check_true(msg, t.ties > 0);
    }
    if (c->probs) {
        snprintf(msg, sizeof msg, "%s: probabilities within %g of the host's (%lld outside, worst %g)", c->name,
                 t.prob_tol, (long long)t.prob_bad, t.worst_prob);
        ok &= check_true(msg, t.prob_bad == 0);
    }
    snprintf(msg, sizeof msg, "%s: %lld non-finite logits counted, %d planted", c->name, (long long)nonfinite,
             c->inf_in_padding ? 1 : 0);
    ok &= check_true(msg, nonfinite == (c->inf_in_padding ? 1 : 0));
    for (int i = 0; i < nc; i++) cvol_free(&cubes[i].logits);
    cudaFree(ring);
    free(cubes);
    free(imp);
    free(labels);
    free(probs);
    free(avg);
    free(acc);
    return ok;
}

int main(void)
{
    test_rng r = {0x243f6a8885a308d3ULL};
    ct_env e;
    ct_env_init(&e, 64);
    ct_env_upload(&e);
    const bool f32 = ct_dtype() == SWIN_F32;
    /* name, size, cube, overlap, classes, logits pitch, probabilities, random weights, integer logits,
     * a non-finite logit in the padding, the ring's layout */
    const struct ring_case cases[] = {
        {"slab axis 0, random weights", {28, 13, 11}, {8, 6, 6}, 0.5, 5, 7, true, true, false, false, 1},
        {"slab axis 1, overlap 0.25", {7, 23, 9}, {6, 6, 8}, 0.25, 4, 4, true, true, false, false, 0},
        {"slab axis 2, overlap 0.25", {10, 20, 30}, {8, 6, 6}, 0.25, 4, 5, true, true, false, false, 1},
        {"slab axis 2, overlap 0.6, pitch 9, labels only", {10, 11, 31}, {8, 8, 7}, 0.6, 6, 9, false, false, false,
         false, 0},
        {"slab axis 0, overlap 0.5, last start pulled back", {31, 26, 9}, {8, 8, 6}, 0.5, 3, 3, true, true, false,
         false, 1},
        {"slab axis 0, the last start pulled back past a sliding ring", {29, 13, 11}, {8, 6, 6}, 0.5, 5, 7, true, true,
         false, false, 0},
        {"thinner than the cube along two axes", {5, 21, 3}, {8, 8, 8}, 0.5, 3, 3, true, true, false, false, -1},
        {"one class", {9, 9, 12}, {6, 6, 6}, 0.5, 1, 1, true, false, false, false, -1},
        {"300 classes, two-byte labels", {6, 5, 9}, {4, 4, 4}, 0.5, 300, 301, true, false, false, false, -1},
        /* these two change the logits on the host: float32 only (the device copy is float) */
        {"integer logits, exact ties", {11, 10, 14}, {6, 6, 6}, 0.5, 4, 4, false, false, true, false, -1},
        {"a non-finite logit in the padding", {4, 9, 10}, {6, 6, 6}, 0.5, 3, 3, true, false, false, true, -1},
    };
    bool ok = true;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        if (f32 || (!cases[i].integer_logits && !cases[i].inf_in_padding)) ok &= run_case(&e, &r, &cases[i]);
    ct_env_free(&e);
    return test_exit(ok);
}
