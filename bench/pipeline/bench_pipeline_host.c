/* The host's share of a whole-CT segmentation: swin_pipeline_file (read, preprocess, the
 * sliding cubes, write) with a predictor that costs next to nothing, so that every second
 * reported is spent around the forward pass. Prints each phase as the CLI's --json does.
 *
 *   bench_pipeline_host CT.nii[.gz] OUT.nii[.gz] [--classes N] [--cube L] [--threads N]
 *                       [--runs N] [--json FILE]
 *
 * The predictor: logits[c] = a_c * x + b_c, x the cube's windowed intensity in [0, 1] (one
 * multiply-add a value). Lines with slopes 0, 1, 2, ... cross at the thresholds T below, so
 * the argmax is the intensity band x falls in (class c for T[c-1] <= x < T[c]); classes past
 * the bands get b = -1000 and never win. On the synthetic CT (tools/export/make_ct_phantom.py)
 * the bands make a label map like an organ segmentation's: background (air, fat, muscle,
 * liver, spleen: below 80 HU), then the vena cava, the kidneys, the aorta and bone, with
 * thin partial-volume rims between them. The averaged logits of overlapping cubes are those
 * of one cube (the same line at every position), so the labels do not depend on the cube. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "pipeline/segment.h"

/* band edges in windowed intensity ([-175, 250] HU -> [0, 1]): 80, 135, 175, 229 HU */
static const float T[] = {0.60f, 0.73f, 0.82f, 0.95f};
enum { BANDS = sizeof T / sizeof T[0] + 1 };

struct band_model {
    int64_t n; /* voxels of a cube */
    int classes;
    float a[256], b[256];
};

static void band_model_init(struct band_model *m, const int cube[3], int classes)
{
    m->n = (int64_t)cube[0] * cube[1] * cube[2];
    m->classes = classes;
    float b = 0;
    for (int c = 0; c < classes; c++) {
        if (c > 0 && c < BANDS) b -= T[c - 1]; /* line c meets line c-1 at T[c-1] */
        m->a[c] = c < BANDS ? (float)c : 0.0f;
        m->b[c] = c < BANDS ? b : -1000.0f;
    }
}

static swin_status band_predict(void *user, const float *in, float *out, swin_error *err)
{
    (void)err;
    const struct band_model *m = user;
    for (int c = 0; c < m->classes; c++) {
        float *o = out + (size_t)c * (size_t)m->n;
        const float a = m->a[c], b = m->b[c];
        for (int64_t i = 0; i < m->n; i++) o[i] = a * in[i] + b;
    }
    return SWIN_OK;
}

/* The phases of one run, in the CLI's --json names. */
enum { P_READ, P_PREP, P_CUT, P_FORWARD, P_BLEND, P_ARGMAX, P_WRITE, P_OVERLAP, P_HOST, P_TOTAL, NPHASE };
static const char *const PHASE[NPHASE] = {"read",   "preprocess", "cut",     "forward", "blend",
                                          "argmax", "write",      "write_overlapped", "host", "total"};

static void phases(const swin_segment_report *r, double total, double s[NPHASE])
{
    s[P_READ] = r->seconds_read, s[P_PREP] = r->seconds_preprocess, s[P_CUT] = r->seconds_cut;
    s[P_FORWARD] = r->seconds_forward, s[P_BLEND] = r->seconds_blend, s[P_ARGMAX] = r->seconds_argmax;
    s[P_WRITE] = r->seconds_write, s[P_OVERLAP] = r->seconds_write_overlapped;
    s[P_HOST] = r->seconds_read + r->seconds_preprocess + r->seconds_cut + r->seconds_write;
    s[P_TOTAL] = total;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int usage(void)
{
    fprintf(stderr, "usage: bench_pipeline_host CT.nii[.gz] OUT.nii[.gz] [--classes N] [--cube L] [--threads N] "
                    "[--runs N] [--json FILE]\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 3) return usage();
    const char *ct = argv[1], *out = argv[2], *json = NULL;
    int classes = 14, cube = 96, threads = 2, runs = 3;
    for (int i = 3; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) return usage();
        if (!strcmp(argv[i], "--classes")) classes = atoi(v);
        else if (!strcmp(argv[i], "--cube")) cube = atoi(v);
        else if (!strcmp(argv[i], "--threads")) threads = atoi(v);
        else if (!strcmp(argv[i], "--runs")) runs = atoi(v);
        else if (!strcmp(argv[i], "--json")) json = v;
        else return usage();
        i++;
    }
    if (classes < 1 || classes > 256 || cube < 1 || runs < 1 || runs > 100) return usage();
    struct band_model m;
    struct swin_pipeline p = swin_pipeline_defaults();
    p.cube[0] = p.cube[1] = p.cube[2] = cube;
    band_model_init(&m, p.cube, classes);
    p.out_channels = classes;
    p.predict = band_predict;
    p.predict_user = &m;
    p.threads = threads;

    double (*s)[NPHASE] = calloc((size_t)runs, sizeof *s);
    swin_segment_report *rep = malloc(sizeof *rep);
    if (!s || !rep) return 1;
    for (int r = 0; r < runs; r++) {
        swin_error err = {0};
        double t0 = swin_clock_seconds();
        if (swin_pipeline_file(ct, out, &p, rep, &err)) {
            fprintf(stderr, "bench_pipeline_host: %s\n", err.msg);
            return 1;
        }
        phases(rep, swin_clock_seconds() - t0, s[r]);
    }
    printf("%s: %lld x %lld x %lld -> grid %lld x %lld x %lld, %lld cubes of %d^3, %d classes, %d threads, %d runs\n",
           ct, rep->input_dim[0], rep->input_dim[1], rep->input_dim[2], rep->grid_dim[0], rep->grid_dim[1],
           rep->grid_dim[2], rep->cubes, cube, classes, threads, runs);
    printf("%-16s %8s %8s %8s\n", "phase (s)", "median", "min", "max");
    double med[NPHASE];
    for (int k = 0; k < NPHASE; k++) {
        double v[100];
        for (int r = 0; r < runs; r++) v[r] = s[r][k];
        qsort(v, (size_t)runs, sizeof *v, cmp_double);
        med[k] = runs % 2 ? v[runs / 2] : (v[runs / 2 - 1] + v[runs / 2]) / 2;
        printf("%-16s %8.3f %8.3f %8.3f\n", PHASE[k], med[k], v[0], v[runs - 1]);
    }
    printf("host = read + preprocess + cut + write (write_overlapped: the label planes written while the cubes ran)\n");
    if (json) {
        FILE *f = fopen(json, "w");
        if (!f) {
            perror(json);
            return 1;
        }
        fprintf(f, "{\"input\": \"%s\", \"input_dim\": [%lld, %lld, %lld], \"grid_dim\": [%lld, %lld, %lld], "
                   "\"cubes\": %lld, \"cube\": %d, \"classes\": %d, \"threads\": %d,\n \"median\": {",
                ct, rep->input_dim[0], rep->input_dim[1], rep->input_dim[2], rep->grid_dim[0], rep->grid_dim[1],
                rep->grid_dim[2], rep->cubes, cube, classes, threads);
        for (int k = 0; k < NPHASE; k++) fprintf(f, "%s\"%s\": %.3f", k ? ", " : "", PHASE[k], med[k]);
        fprintf(f, "},\n \"runs\": [");
        for (int r = 0; r < runs; r++) {
            fprintf(f, "%s\n  {", r ? "," : "");
            for (int k = 0; k < NPHASE; k++) fprintf(f, "%s\"%s\": %.3f", k ? ", " : "", PHASE[k], s[r][k]);
            fprintf(f, "}");
        }
        fprintf(f, "]}\n");
        fclose(f);
    }
    free(s);
    free(rep);
    return 0;
}
