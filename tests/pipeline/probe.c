/* A test driver for the pipeline's parts, checked from Python against nibabel and MONAI
 * (the Python scripts beside it). Every output is a file; nothing here decides pass or fail.
 *
 *   probe read IN.nii OUT.npy AFFINE.txt        float32 data (nz, ny, nx) and the affine
 *   probe write IN.nii OUT.nii[.gz] u8|u16|f32 V [THREADS]  the data cast to a type (V volumes) on
 *                                               IN's grid, .gz compressed by THREADS threads (2)
 *   probe prep IN.nii OUT.npy GRID.txt [key=value...]   the preprocessed volume (d0, d1, d2)
 *   probe sliding VOL.npy OUT.npy roi0 roi1 roi2 overlap constant|gaussian channels
 *                                               averaged logits (channels, d0, d1, d2) of fake()
 *   probe segment IN.nii OUT.nii.gz [key=value...]  the whole pipeline with fake() as the model;
 *                                               prints the report's organ statistics, one line each:
 *                                               stat LABEL VOXELS ML HU_MEAN HU_STD, and
 *                                               "overlapped SECONDS" (seconds_write_overlapped)
 *   probe segment_mem IN.nii LABELS.npy [PROBS.npy] [key=value...]   its memory form
 *                                               (swin_pipeline_volume): labels (nz, ny, nx) and
 *                                               probabilities (channels, nz, ny, nx), float32;
 *                                               key thin=A: only IN's first plane across axis
 *                                               A (0..2), a volume one voxel thick (files have 2+)
 * keys: spacing=X,Y,Z noresample=1 noreorient=1 window=LO,HI nowindow=1 roi=D,H,W overlap=F
 *       blend=constant|gaussian channels=N probs=FILE preview=FILE invert=nearest|linear
 *       in_channels=N (the model's; segment's IN then N files joined by commas, or a 4D file)
 *       norm=range|zscore|zscore-nonzero masks=1 (a sigmoid mask per channel)
 *
 * fake(): logits[c](w) = s_c * (c + 1) * x(w) + 0.05 * c * cos(0.37 w0 + 0.11 c w1 + 0.23 w2),
 * s_c = -1 for even c, with w the position inside the window and x input channel c mod
 * in_channels; with one channel (a sigmoid
 * model) 0.5 - x(w) + 0.05 cos(0.37 w0 + 0.23 w2), which crosses 0 inside soft tissue;
 * tests/pipeline/fake_model.py is the same function in torch. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio/npy.h"
#include "formats/nifti/nifti_io.h"
#include "pipeline/normalize.h"
#include "pipeline/resample.h"
#include "pipeline/segment.h"
#include "pipeline/cubes.h"

struct fake {
    int roi[3], co;
    int ci; /* input channels (0: 1) */
};

static swin_status fake_predict(void *user, const float *in, float *out, swin_error *err)
{
    const struct fake *f = user;
    size_t n = (size_t)f->roi[0] * f->roi[1] * f->roi[2];
    const int ci = f->ci > 1 ? f->ci : 1;
    for (int c = 0; c < f->co; c++) {
        const float *x = in + (size_t)(c % ci) * n; /* output c reads input channel c mod ci */
        for (int a = 0; a < f->roi[0]; a++)
            for (int b = 0; b < f->roi[1]; b++)
                for (int d = 0; d < f->roi[2]; d++) {
                    size_t i = ((size_t)a * f->roi[1] + b) * f->roi[2] + d;
                    float s = (c % 2 ? 1.0f : -1.0f) * (float)(c + 1);
                    out[c * n + i] = f->co == 1 ? 0.5f - x[i] + 0.05f * cosf(0.37f * a + 0.23f * d)
                                                : s * x[i] + 0.05f * (float)c * cosf(0.37f * a + 0.11f * c * b + 0.23f * d);
                }
    }
    return SWIN_OK;
}

/* the sliding sink: averaged logits into (channels, d0, d1, d2) */
struct collect {
    float *out;
    size_t n;
    int co;
};

static void sink(void *u, int64_t v, const float *l)
{
    struct collect *c = u;
    for (int k = 0; k < c->co; k++) c->out[(size_t)k * c->n + (size_t)v] = l[k];
}

static int fail(const swin_error *e)
{
    fprintf(stderr, "probe: %s\n", e->msg);
    return 1;
}

static void parse_kv(int argc, char **argv, struct swin_pipeline *p, struct fake *f)
{
    swin_segment_params *o = &p->params;
    for (int i = 0; i < argc; i++) {
        char *v = strchr(argv[i], '=');
        if (!v) continue;
        *v++ = 0;
        const char *k = argv[i];
        if (!strcmp(k, "spacing")) sscanf(v, "%lf,%lf,%lf", &o->spacing_mm[0], &o->spacing_mm[1], &o->spacing_mm[2]);
        else if (!strcmp(k, "noresample")) o->resample = false;
        else if (!strcmp(k, "noreorient")) o->reorient = false;
        else if (!strcmp(k, "nowindow")) o->intensity_clip = false;
        else if (!strcmp(k, "window")) sscanf(v, "%f,%f", &o->intensity_range[0], &o->intensity_range[1]);
        else if (!strcmp(k, "roi")) sscanf(v, "%d,%d,%d", &f->roi[0], &f->roi[1], &f->roi[2]);
        else if (!strcmp(k, "overlap")) o->overlap = atof(v);
        else if (!strcmp(k, "blend")) o->blend = strcmp(v, "gaussian") ? SWIN_BLEND_CONSTANT : SWIN_BLEND_GAUSSIAN;
        else if (!strcmp(k, "channels")) f->co = atoi(v);
        else if (!strcmp(k, "in_channels")) f->ci = p->in_channels = atoi(v);
        else if (!strcmp(k, "masks")) o->activation = SWIN_ACTIVATION_SIGMOID;
        else if (!strcmp(k, "norm"))
            o->normalize = !strcmp(v, "zscore")           ? SWIN_NORM_ZSCORE
                           : !strcmp(v, "zscore-nonzero") ? SWIN_NORM_ZSCORE_NONZERO
                                                          : SWIN_NORM_RANGE;
        else if (!strcmp(k, "probs")) o->probabilities_path = v;
        else if (!strcmp(k, "preview")) o->preview_path = v;
        else if (!strcmp(k, "invert")) o->invert = strcmp(v, "linear") ? SWIN_INVERT_NEAREST : SWIN_INVERT_LINEAR;
    }
}

static void write_mat(FILE *t, const swin_mat4 *m)
{
    for (int i = 0; i < 4; i++) fprintf(t, "%.17g %.17g %.17g %.17g\n", m->m[i][0], m->m[i][1], m->m[i][2], m->m[i][3]);
}

int main(int argc, char **argv)
{
    swin_error e = {0};
    if (argc < 2) return 2;
    const char *cmd = argv[1];
    if (!strcmp(cmd, "read") && argc == 5) {
        struct swin_image img;
        if (swin_image_read(argv[2], &img, &e)) return fail(&e);
        size_t shape[3] = {(size_t)img.dim[2], (size_t)img.dim[1], (size_t)img.dim[0]};
        if (swin_npy_write_f32(argv[3], img.data, 3, shape, &e)) return fail(&e);
        FILE *t = fopen(argv[4], "w");
        write_mat(t, &img.affine);
        fclose(t);
        swin_image_free(&img);
        return 0;
    }
    if (!strcmp(cmd, "write") && (argc == 6 || argc == 7)) {
        struct swin_image img;
        if (swin_image_read(argv[2], &img, &e)) return fail(&e);
        int dt = !strcmp(argv[4], "u8") ? DT_UINT8 : !strcmp(argv[4], "u16") ? DT_UINT16 : DT_FLOAT32;
        int64_t vols = atoi(argv[5]), n = img.dim[0] * img.dim[1] * img.dim[2];
        struct swin_nifti_writer *w;
        if (swin_nifti_writer_open(&w, argv[3], img.hdr, dt, vols, NIFTI_INTENT_LABEL, "probe", argc == 7 ? atoi(argv[6]) : 2, &e)) return fail(&e);
        for (int64_t v = 0; v < vols; v++)
            for (int64_t i = 0; i < n; i++) {
                float x = img.data[i] + (float)v;
                uint8_t b = (uint8_t)x;
                uint16_t s = (uint16_t)x;
                const void *p = dt == DT_UINT8 ? (const void *)&b : dt == DT_UINT16 ? (const void *)&s : (const void *)&x;
                if (swin_nifti_writer_write(w, p, dt == DT_UINT8 ? 1 : dt == DT_UINT16 ? 2 : 4, &e)) return fail(&e);
            }
        if (swin_nifti_writer_commit(w, &e)) return fail(&e);
        swin_image_free(&img);
        return 0;
    }
    if (!strcmp(cmd, "prep") && argc >= 5) {
        struct swin_pipeline pl = swin_pipeline_defaults();
        const swin_segment_params *o = &pl.params;
        struct fake f = {.roi = {32, 32, 32}, .co = 2};
        parse_kv(argc - 5, argv + 5, &pl, &f);
        struct swin_image img;
        if (swin_image_read(argv[2], &img, &e)) return fail(&e);
        struct swin_grid g;
        char msg[256];
        if (!swin_resample_grid_plan(img.affine, img.dim, o->reorient, o->resample ? o->spacing_mm : NULL, SWIN_VOLUME_MAX_VOXELS, &g, msg,
                       sizeof msg)) {
            fprintf(stderr, "probe: %s\n", msg);
            return 1;
        }
        const int64_t n = g.dim[0] * g.dim[1] * g.dim[2], in_n = img.dim[0] * img.dim[1] * img.dim[2];
        struct swin_forward fwd;
        if (swin_forward_init(&g, img.dim, &fwd)) {
            fprintf(stderr, "probe: no way into the grid\n");
            return 1;
        }
        float *vol = malloc((size_t)(n * img.channels) * sizeof *vol);
        const bool range = o->normalize == SWIN_NORM_RANGE;
        struct swin_intensity window = {range && o->intensity_clip, o->intensity_range[0], o->intensity_range[1]};
        for (int c = 0; c < img.channels; c++) {
            swin_resample_in(img.data + c * in_n, &fwd, window, vol + c * n, 2);
            if (!range) swin_zscore(vol + c * n, n, o->normalize == SWIN_NORM_ZSCORE_NONZERO, 2);
        }
        /* one channel: (d0, d1, d2); several: (channels, d0, d1, d2) */
        size_t shape[4] = {(size_t)img.channels, (size_t)g.dim[0], (size_t)g.dim[1], (size_t)g.dim[2]};
        const int multi = img.channels > 1;
        if (swin_npy_write_f32(argv[3], vol, 3 + multi, shape + !multi, &e)) return fail(&e);
        FILE *t = fopen(argv[4], "w");
        write_mat(t, &g.affine);
        fclose(t);
        swin_forward_free(&fwd);
        free(vol);
        swin_image_free(&img);
        return 0;
    }
    if (!strcmp(cmd, "sliding") && argc == 10) {
        struct swin_npy_array x;
        if (swin_npy_read_f32(argv[2], &x, &e)) return fail(&e);
        struct fake f = {.roi = {atoi(argv[4]), atoi(argv[5]), atoi(argv[6])}, .co = atoi(argv[9])};
        int64_t size[3] = {(int64_t)x.shape[0], (int64_t)x.shape[1], (int64_t)x.shape[2]};
        struct swin_cubes w;
        if (swin_cubes_plan(size, f.roi, atof(argv[7]), strcmp(argv[8], "gaussian") ? SWIN_BLEND_CONSTANT : SWIN_BLEND_GAUSSIAN,
                              0.125, &w, &e))
            return fail(&e);
        /* collect the sink's averaged logits into (channels, d0, d1, d2); -1e30 marks unset */
        size_t n = x.count;
        float *out = malloc((size_t)f.co * n * sizeof *out);
        for (size_t i = 0; i < (size_t)f.co * n; i++) out[i] = -1e30f;
        struct collect col = {out, n, f.co};
        struct swin_sliding s = {.layout = &w, .in_channels = 1, .out_channels = f.co, .predict = fake_predict, .predict_user = &f,
                                 .sink = sink, .sink_user = &col};
        if (swin_sliding_run(&s, x.data, &e)) return fail(&e);
        size_t shape[4] = {(size_t)f.co, x.shape[0], x.shape[1], x.shape[2]};
        if (swin_npy_write_f32(argv[3], out, 4, shape, &e)) return fail(&e);
        printf("windows %lld slab_axis %d\n", (long long)swin_cubes_count(&w), swin_sliding_axis(&w));
        swin_cubes_free(&w);
        free(out);
        free(x.data);
        return 0;
    }
    if (!strcmp(cmd, "segment") && argc >= 4) {
        struct swin_pipeline pl = swin_pipeline_defaults();
        struct fake f = {.roi = {32, 32, 32}, .co = 3};
        parse_kv(argc - 4, argv + 4, &pl, &f);
        memcpy(pl.cube, f.roi, sizeof pl.cube);
        pl.out_channels = f.co;
        pl.predict = fake_predict;
        pl.predict_user = &f;
        swin_segment_report r;
        /* IN: one file, or the files of one volume's channels separated by commas */
        const char *paths[SWIN_VOLUME_MAX_CHANNELS];
        int npaths = 0;
        for (char *t = strtok(argv[2], ","); t && npaths < SWIN_VOLUME_MAX_CHANNELS; t = strtok(NULL, ","))
            paths[npaths++] = t;
        if (swin_pipeline_inputs(swin_format_for(paths[0]), paths, npaths, argv[3], &pl, &r, &e)) return fail(&e);
        printf("windows %lld grid %lld %lld %lld bytes %zu\n", r.cubes, r.grid_dim[0], r.grid_dim[1], r.grid_dim[2],
               r.pipeline_bytes);
        for (int i = 0; i < r.nstats; i++)
            printf("stat %d %lld %.17g %.17g %.17g\n", r.stats[i].label, r.stats[i].voxels, r.stats[i].volume_ml,
                   r.stats[i].hu_mean, r.stats[i].hu_std);
        printf("overlapped %.6f\n", r.seconds_write_overlapped);
        return 0;
    }
    if (!strcmp(cmd, "segment_mem") && argc >= 4) {
        struct swin_pipeline pl = swin_pipeline_defaults();
        struct fake f = {.roi = {32, 32, 32}, .co = 3};
        const char *probs_path = argc > 4 && !strchr(argv[4], '=') ? argv[4] : NULL;
        int first = probs_path ? 5 : 4, thin = -1;
        for (int i = first; i < argc; i++)
            if (!strncmp(argv[i], "thin=", 5)) thin = atoi(argv[i] + 5);
        parse_kv(argc - first, argv + first, &pl, &f);
        memcpy(pl.cube, f.roi, sizeof pl.cube);
        pl.out_channels = f.co;
        pl.predict = fake_predict;
        pl.predict_user = &f;
        struct swin_image img;
        if (swin_image_read(argv[2], &img, &e)) return fail(&e);
        if (thin >= 0 && thin < 3) { /* keep plane 0 across axis thin, in place (i fastest) */
            int64_t at = 0, *d = img.dim;
            for (int64_t k = 0; k < (thin == 2 ? 1 : d[2]); k++)
                for (int64_t j = 0; j < (thin == 1 ? 1 : d[1]); j++)
                    for (int64_t i = 0; i < (thin == 0 ? 1 : d[0]); i++)
                        img.data[at++] = img.data[(k * d[1] + j) * d[0] + i];
            d[thin] = 1;
        }
        swin_volume v = {.voxels = img.data, .type = SWIN_VOXELS_F32};
        for (int k = 0; k < 3; k++) v.dim[k] = img.dim[k];
        memcpy(v.affine, img.affine.m, sizeof v.affine);
        size_t n = (size_t)(img.dim[0] * img.dim[1] * img.dim[2]);
        uint16_t *labels = malloc(n * sizeof *labels);
        float *probs = probs_path ? malloc((size_t)f.co * n * sizeof *probs) : NULL, *lf = malloc(n * sizeof *lf);
        swin_segment_report r;
        if (swin_pipeline_volume(&v, 1, &pl, labels, probs, &r, &e)) return fail(&e);
        for (size_t i = 0; i < n; i++) lf[i] = labels[i];
        size_t shape[4] = {(size_t)f.co, (size_t)img.dim[2], (size_t)img.dim[1], (size_t)img.dim[0]};
        if (swin_npy_write_f32(argv[3], lf, 3, shape + 1, &e)) return fail(&e);
        if (probs_path && swin_npy_write_f32(probs_path, probs, 4, shape, &e)) return fail(&e);
        printf("windows %lld grid %lld %lld %lld bytes %zu\n", r.cubes, r.grid_dim[0], r.grid_dim[1], r.grid_dim[2],
               r.pipeline_bytes);
        free(labels);
        free(probs);
        free(lf);
        swin_image_free(&img);
        return 0;
    }
    fprintf(stderr, "probe: bad arguments (see the comment at the top of tests/pipeline/probe.c)\n");
    return 2;
}
