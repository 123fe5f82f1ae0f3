/* The device path of the sliding cubes (pipeline/sliding.h) against the host path, through
 * the whole pipeline in its memory form (swin_pipeline_volume): preprocessing, the cubes,
 * blending, argmax or softmax, both ways back to the input grid. The model is fake (the
 * function below, as tests/pipeline/probe.c's): the host path gets its logits from the
 * predictor; the device path computes the same logits, packs them into a device volume of the
 * CUDA backend (emulated) and adds them into its ring (kernels/cuda/ring_blend.cu). The logits
 * are equal, so any difference is the blending's: the labels on the input grid must be equal,
 * the probabilities too (to the bit under the emulator: kernels/cuda/test_ring_blend.c says
 * why, and the bound on a GPU, 2^-22).
 *
 * Geometries: LPS with anisotropic voxels and several slabs, a volume smaller than the cube
 * on every axis (one cube, padding), permuted axes, an oblique affine, gaussian weights, half
 * storage of the logits on the device, a one-channel (sigmoid) model whose logit crosses 0
 * inside the volume; each with the nearest and the linear way back. The
 * first and the last keep the open rows in the sliding ring (core/ring_geom.h), the others in
 * the plain one. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/cuda_backend.h"
#include "kernels/op_check.h"
#include "pipeline/segment.h"
#include "tests/common/check.h"

struct fake {
    int roi[3], co;
    bool half; /* logits rounded to float16 (what the half backend stores) */
};

static float fake_logit(const struct fake *f, const float *in, int c, int a, int b, int d)
{
    const size_t i = ((size_t)a * f->roi[1] + b) * f->roi[2] + d;
    const float s = (c % 2 ? 1.0f : -1.0f) * (float)(c + 1);
    const float v = f->co == 1 ? 0.5f - in[i] + 0.05f * cosf(0.37f * a + 0.23f * d)
                               : s * in[i] + 0.05f * (float)c * cosf(0.37f * a + 0.11f * c * b + 0.23f * d);
    return f->half ? (float)(_Float16)v : v;
}

/* (co, roi0, roi1, roi2) logits, channels first: what a predictor hands back. */
static void fake_logits(const struct fake *f, const float *in, float *out)
{
    const size_t n = (size_t)f->roi[0] * f->roi[1] * f->roi[2];
    for (int c = 0; c < f->co; c++)
        for (int a = 0; a < f->roi[0]; a++)
            for (int b = 0; b < f->roi[1]; b++)
                for (int d = 0; d < f->roi[2]; d++)
                    out[c * n + ((size_t)a * f->roi[1] + b) * f->roi[2] + d] = fake_logit(f, in, c, a, b, d);
}

static swin_status host_predict(void *user, const float *in, float *out, swin_error *err)
{
    fake_logits(user, in, out);
    return SWIN_OK;
}

/* The fake model on the device: its logits packed into a device cube, blended in the ring. */
struct fake_device {
    struct fake *f;
    struct swin_cuda_backend *be;
    const struct swin_ops *ops;
    struct swin_ring_geom g;
    struct swin_ring_layout layout; /* where the ring kept the open rows */
    void *ring, *cube;
    float *logits; /* host, channels first */
};

static swin_status fail(struct fake_device *d, int rc, swin_error *err)
{
    return swin_error_set(err, (swin_status)rc, "%s", d->ops->last_error(d->be));
}

static swin_status dev_begin(void *user, const struct swin_cubes *w, int ax, int label_bytes, bool probs,
                             struct swin_blend_info *info, swin_error *err)
{
    struct fake_device *d = user;
    d->g = (struct swin_ring_geom){.ax = ax, .classes = d->f->co, .label_bytes = label_bytes, .probs = probs};
    for (int k = 0; k < 3; k++) {
        d->g.size[k] = w->size[k];
        d->g.roi[k] = w->roi[k];
        d->g.padded[k] = w->padded[k];
        d->g.pad_lo[k] = w->pad_lo[k];
        d->g.interval[k] = w->interval[k];
        d->g.n[k] = w->n[k];
    }
    swin_ring_layout_of(&d->g, &d->layout);
    info->ring_bytes = d->ops->ring_bytes(d->be, &d->g);
    if (cudaMalloc(&d->ring, info->ring_bytes)) return swin_error_set(err, SWIN_ERR_NOMEM, "cudaMalloc of the ring");
    int rc = swin_op_ring_start(d->ops, d->be, d->ring, &d->g, w->importance);
    if (rc) return fail(d, rc, err);
    info->on_device = true;
    return SWIN_OK;
}

static swin_status dev_predict_blend(void *user, const float *in, const int64_t p[3], swin_error *err)
{
    struct fake_device *d = user;
    fake_logits(d->f, in, d->logits);
    const struct swin_vol v = {d->cube, d->g.roi[0], d->g.roi[1], d->g.roi[2], d->f->co, d->f->co, d->ops->act_dtype};
    int rc = swin_op_pack_input(d->ops, d->be, v, d->logits);
    if (!rc) rc = swin_op_ring_add(d->ops, d->be, d->ring, &d->g, v, p);
    return rc ? fail(d, rc, err) : SWIN_OK;
}

static swin_status dev_finish_rows(void *user, int64_t plane, int64_t row_lo, int64_t row_hi, void *labels,
                                   float *probs, swin_error *err)
{
    struct fake_device *d = user;
    long long nonfinite = 0;
    int rc = swin_op_ring_finish(d->ops, d->be, d->ring, &d->g, plane, row_lo, row_hi, labels, probs, &nonfinite);
    if (rc) return fail(d, rc, err);
    return nonfinite ? swin_error_set(err, SWIN_ERR_BACKEND, "%lld logits not finite", nonfinite) : SWIN_OK;
}

static void dev_end(void *user)
{
    struct fake_device *d = user;
    cudaFree(d->ring);
    d->ring = NULL;
}

struct dev_case {
    const char *name;
    long long dim[3];
    double affine[4][4];
    int roi[3], co;
    bool gaussian, half;
};

/* Blobs of tissue-like HU values (structure, not noise), deterministic. */
static float *make_volume(const long long dim[3])
{
    const size_t n = (size_t)(dim[0] * dim[1] * dim[2]);
    float *v = malloc(n * sizeof *v);
    for (long long k = 0, i = 0; k < dim[2]; k++)
        for (long long y = 0; y < dim[1]; y++)
            for (long long x = 0; x < dim[0]; x++, i++) {
                const double u = 2.0 * x / dim[0] - 1, w = 2.0 * y / dim[1] - 1, z = 2.0 * k / dim[2] - 1;
                double hu = u * u + w * w / 0.8 + z * z / 1.2 < 0.8 ? 30.0 : -800.0;
                hu += 300.0 * sin(3.1 * u + 1.7 * w) * cos(2.3 * z) + 15.0 * sin(17.0 * (u + w + z));
                v[i] = (float)hu;
            }
    return v;
}

static bool run_case(const struct dev_case *c, swin_invert invert, bool with_probs)
{
    char what[160];
    snprintf(what, sizeof what, "%s, %s way back%s", c->name, invert == SWIN_INVERT_LINEAR ? "linear" : "nearest",
             with_probs ? ", probabilities" : "");
    struct fake f = {{c->roi[0], c->roi[1], c->roi[2]}, c->co, c->half};
    float *hu = make_volume(c->dim);
    swin_volume v = {.voxels = hu, .type = SWIN_VOXELS_F32};
    memcpy(v.dim, c->dim, sizeof v.dim);
    memcpy(v.affine, c->affine, sizeof v.affine);
    const size_t n = (size_t)(c->dim[0] * c->dim[1] * c->dim[2]);
    uint16_t *labels[2] = {malloc(n * sizeof(uint16_t)), malloc(n * sizeof(uint16_t))};
    float *probs[2] = {NULL, NULL};
    if (with_probs)
        for (int i = 0; i < 2; i++) probs[i] = malloc(n * (size_t)c->co * sizeof(float));

    /* the CUDA backend of the device path: no weights (the model is fake) */
    static float flat[64];
    struct swin_model model = {.flat = flat, .flat_bytes = sizeof flat};
    struct fake_device d = {.f = &f, .ops = swin_cuda_ops_for(c->half ? SWIN_F16 : SWIN_F32)};
    swin_error err = {0};
    const size_t cube = (size_t)c->roi[0] * c->roi[1] * c->roi[2];
    d.logits = malloc(cube * (size_t)c->co * sizeof *d.logits);
    bool ok = !swin_cuda_backend_create(0, &model, c->half ? SWIN_F16 : SWIN_F32, &d.be, &err) &&
              !cudaMalloc(&d.cube, cube * (size_t)c->co * 4);
    if (!ok) check_true("the CUDA backend and a device cube", false);
    const struct swin_device_blend dev = {.user = &d, .begin = dev_begin, .predict_blend = dev_predict_blend,
                                          .finish_rows = dev_finish_rows, .end = dev_end};

    swin_segment_report rep[2];
    for (int path = 0; path < 2 && ok; path++) { /* 0: host, 1: device */
        struct swin_pipeline p = swin_pipeline_defaults();
        p.params.invert = invert;
        p.params.blend = c->gaussian ? SWIN_BLEND_GAUSSIAN : SWIN_BLEND_CONSTANT;
        memcpy(p.cube, c->roi, sizeof p.cube);
        p.out_channels = c->co;
        p.predict = host_predict;
        p.predict_user = &f;
        p.device = path ? &dev : NULL;
        p.threads = 2;
        swin_status st = swin_pipeline_volume(&v, 1, &p, labels[path], probs[path], &rep[path], &err);
        if (st) fprintf(stderr, "  %s: %s\n", what, err.msg);
        if (st || rep[path].blended_on_device != (path == 1))
            ok = check_true(path ? "the device path ran" : "the host path ran", false);
    }
    if (ok) {
        size_t differ = 0;
        for (size_t i = 0; i < n; i++) differ += labels[0][i] != labels[1][i];
        char msg[320];
        const int64_t grid[3] = {rep[1].grid_dim[0], rep[1].grid_dim[1], rep[1].grid_dim[2]};
        snprintf(msg, sizeof msg, "%s: %lld cubes over a %lldx%lldx%lld grid (slab axis %d, %s ring), labels on the "
                 "%lldx%lldx%lld input equal (%zu differ)", what, rep[1].cubes, rep[1].grid_dim[0], rep[1].grid_dim[1],
                 rep[1].grid_dim[2], swin_ring_slab_axis(grid, c->roi),
                 d.layout.span > grid[swin_ring_o1(&d.g)] ? "sliding" : "plain", c->dim[0], c->dim[1], c->dim[2],
                 differ);
        ok &= check_true(msg, differ == 0 && rep[0].cubes == rep[1].cubes);
        if (c->co == 1) { /* the sigmoid model's logit crosses 0 inside the volume: both labels */
            size_t ones = 0;
            for (size_t i = 0; i < n; i++) ones += labels[1][i] == 1;
            snprintf(msg, sizeof msg, "%s: labels 0 and 1 both present (%zu of %zu are 1)", what, ones, n);
            ok &= check_true(msg, ones > 0 && ones < n);
        }
        if (with_probs) {
            snprintf(msg, sizeof msg, "%s: probabilities", what);
            ok &= check_close(msg, probs[1], probs[0], n * (size_t)c->co, 0.0, 0.0);
        }
    }
    cudaFree(d.cube);
    swin_cuda_backend_free(d.be);
    free(d.logits);
    free(hu);
    for (int i = 0; i < 2; i++) {
        free(labels[i]);
        free(probs[i]);
    }
    return ok;
}

int main(void)
{
    const double c12 = cos(12 * M_PI / 180), s12 = sin(12 * M_PI / 180), c5 = cos(5 * M_PI / 180),
                 s5 = sin(5 * M_PI / 180);
    /* oblique: 12 degrees about z, then 5 about x, voxels 1.1 x 1.1 x 3.0 mm */
    const double rot[3][3] = {{c12, -s12 * c5, s12 * s5}, {s12, c12 * c5, -c12 * s5}, {0, s5, c5}};
    struct dev_case cases[] = {
        {"LPS 0.9 x 0.9 x 2.5 mm, several slabs", {80, 63, 29},
         {{-0.9, 0, 0, 40}, {0, -0.9, 0, 30}, {0, 0, 2.5, -50}, {0, 0, 0, 1}}, {16, 16, 16}, 5, false, false},
        {"smaller than the cube on every axis", {12, 10, 9},
         {{1.5, 0, 0, 0}, {0, 1.5, 0, 0}, {0, 0, 2.0, 0}, {0, 0, 0, 1}}, {16, 16, 16}, 4, false, false},
        {"permuted axes, one flipped", {23, 41, 37},
         {{0, 1.3, 0, -20}, {0, 0, 1.7, 5}, {-2.2, 0, 0, 60}, {0, 0, 0, 1}}, {16, 16, 16}, 3, false, false},
        {"oblique, gaussian weights", {45, 39, 17},
         {{1.1 * rot[0][0], 1.1 * rot[0][1], 3.0 * rot[0][2], 10},
          {1.1 * rot[1][0], 1.1 * rot[1][1], 3.0 * rot[1][2], -20},
          {1.1 * rot[2][0], 1.1 * rot[2][1], 3.0 * rot[2][2], 30}, {0, 0, 0, 1}},
         {16, 16, 16}, 5, true, false},
        {"half storage on the device, a 16 x 24 x 6 cube", {40, 30, 20},
         {{1.5, 0, 0, 0}, {0, 1.5, 0, 0}, {0, 0, 2.0, 0}, {0, 0, 0, 1}}, {16, 24, 6}, 6, false, true},
        {"one output channel (a sigmoid model)", {37, 33, 21},
         {{-1.2, 0, 0, 20}, {0, -1.2, 0, 15}, {0, 0, 2.5, -30}, {0, 0, 0, 1}}, {16, 16, 16}, 1, false, false},
    };
    const size_t ncases = sizeof cases / sizeof *cases;
    bool ok = true;
    for (size_t i = 0; i < ncases; i++) {
        ok &= run_case(&cases[i], SWIN_INVERT_NEAREST, i == 0 || i == ncases - 1);
        ok &= run_case(&cases[i], SWIN_INVERT_LINEAR, i == 3 || i == ncases - 1);
    }
    return test_exit(ok);
}
