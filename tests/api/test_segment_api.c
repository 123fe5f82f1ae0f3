/* The public segmentation API (pipeline/segment_api.h) on an in-memory volume:
 *   - swin_segment's labels equal, voxel for voxel, those the CLI writes for the same volume
 *     saved as NIfTI (`swinrun CT.nii.gz OUT.nii.gz --model M`, run here as a child process);
 *     the label map must hold more than one class, so that agreement means something;
 *   - the probabilities sum to 1 per voxel, and int16 and float32 inputs give the same labels;
 *   - a cancel (after two polls) returns SWIN_ERR_CANCELLED, leaves the label buffer and the
 *     output path untouched and no temporary file in the folder;
 *   - progress: stages in order, fractions never decreasing, ending at exactly 1 once with
 *     SWIN_STAGE_DONE, one report per cube;
 *   - the report: cube count, classes, planned bytes, the backend and why;
 *   - swin_segment_channels, with MODEL4 (a model of four input channels): int16 and float32
 *     channels mixed give the labels of all float32; a count other than the model's, channels
 *     on different grids (size, affine) and a channel without voxels are refused, naming why.
 *
 *     test_segment_api MODEL.onnx SWINRUN WORKDIR [MODEL4.onnx] */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nifti2_io.h>

#include "pipeline/swinrun.h"
#include "tests/common/check.h"

enum { NX = 40, NY = 30, NZ = 20, N = NX * NY * NZ };

/* LPS-like axes (x and y flipped), 1.5 x 1.5 x 2 mm: every value exact in float32, so the
 * NIfTI-1 file holds the same affine as memory. */
static const double affine[4][4] = {
    {-1.5, 0, 0, 29.25}, {0, -1.5, 0, 21.75}, {0, 0, 2.0, -19.0}, {0, 0, 0, 1}};

/* A bright ellipsoid and a dense slab in soft tissue, with noise: HU as int16. */
static void make_volume(int16_t *hu)
{
    test_rng r = {0xC7};
    for (int k = 0; k < NZ; k++)
        for (int j = 0; j < NY; j++)
            for (int i = 0; i < NX; i++) {
                double x = (i - 18.0) / 11.0, y = (j - 14.0) / 8.0, z = (k - 9.0) / 6.0;
                double v = x * x + y * y + z * z < 1 ? 180 : (i > 30 ? 700 : -60);
                hu[i + NX * (j + NY * k)] = (int16_t)lround(v + test_rng_uniform(&r, -40.0f, 40.0f));
            }
}

static bool write_nifti(const char *path, const int16_t *hu)
{
    int64_t dims[8] = {3, NX, NY, NZ, 1, 1, 1, 1};
    nifti_image *nim = nifti_make_new_nim(dims, DT_INT16, 0);
    if (!nim) return false;
    nim->pixdim[1] = nim->dx = 1.5;
    nim->pixdim[2] = nim->dy = 1.5;
    nim->pixdim[3] = nim->dz = 2.0;
    nim->sform_code = NIFTI_XFORM_SCANNER_ANAT;
    nim->qform_code = 0;
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) nim->sto_xyz.m[a][b] = affine[a][b];
    nim->data = malloc((size_t)N * sizeof *hu);
    memcpy(nim->data, hu, (size_t)N * sizeof *hu);
    if (nifti_set_filenames(nim, path, 0, 1)) return false;
    nifti_image_write(nim);
    nifti_image_free(nim);
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* The CLI's label map (uint8 for this model), as uint16. */
static bool read_labels(const char *path, uint16_t *out)
{
    nifti_image *nim = nifti_image_read(path, 1);
    if (!nim || nim->nvox != N || (nim->datatype != DT_UINT8 && nim->datatype != DT_UINT16)) return false;
    for (int i = 0; i < N; i++)
        out[i] = nim->datatype == DT_UINT8 ? ((uint8_t *)nim->data)[i] : ((uint16_t *)nim->data)[i];
    nifti_image_free(nim);
    return true;
}

static int run_cli(const char *swinrun, const char *model, const char *in, const char *out)
{
    pid_t pid = fork();
    if (pid == 0) {
        execl(swinrun, swinrun, in, out, "--model", model, "--backend", "cpu", "--threads", "2", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

struct progress_log {
    int n, cube_reports, bad_order, done_count;
    swin_stage last_stage;
    double last, first;
};

static void on_progress(void *user, swin_stage stage, double f)
{
    struct progress_log *l = user;
    if (l->n == 0) l->first = f;
    if (l->n && (f < l->last || stage < l->last_stage)) l->bad_order++;
    if (stage == SWIN_STAGE_DONE) l->done_count++;
    if (stage == SWIN_STAGE_INFER) l->cube_reports++;
    l->last = f;
    l->last_stage = stage;
    l->n++;
}

static int polls;
static bool cancel_after_two(void *user)
{
    return ++polls > 2;
}

static bool no_temporary_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return false;
    int extra = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strstr(e->d_name, ".tmp") || strstr(e->d_name, "cancelled")) extra++;
    closedir(d);
    return extra == 0;
}

/* swin_segment_channels returns want, with a message holding what. */
static bool refused(swin_context_t *ctx, const swin_volume *ch, int n, swin_status want, const char *what,
                    const char *name)
{
    static uint16_t labels[N];
    swin_segment_params sp = swin_segment_default_params();
    swin_error err = {0};
    swin_status st = swin_segment_channels(ctx, ch, n, &sp, labels, NULL, NULL, &err);
    printf("%s: %s\n", name, err.msg);
    return check_true(name, st == want && strstr(err.msg, what));
}

/* The model at path and a context of two CPU threads on it; false (said on stderr) if either fails. */
static bool open_cpu(const char *path, swin_model_t **m, swin_context_t **ctx)
{
    swin_error err = {0};
    swin_context_params cp = swin_context_default_params();
    cp.backend = SWIN_BACKEND_CPU;
    cp.threads = 2;
    *m = NULL;
    *ctx = NULL;
    if (!swin_model_load(path, m, &err) && !swin_context_create(*m, &cp, ctx, &err)) return true;
    fprintf(stderr, "test_segment_api: %s\n", err.msg);
    swin_model_free(*m);
    return false;
}

/* A model of four input channels: channel c is the CT plus 100 c HU, as float32 or int16. */
static bool check_channels(const char *model4, const int16_t *hu)
{
    swin_error err = {0};
    swin_model_t *m;
    swin_context_t *ctx;
    if (!open_cpu(model4, &m, &ctx)) return false;
    static float f[4][N];
    static int16_t h[4][N];
    static uint16_t all_f32[N], mixed[N];
    swin_volume ch[4];
    for (int c = 0; c < 4; c++) {
        for (int i = 0; i < N; i++) h[c][i] = (int16_t)(hu[i] + 100 * c), f[c][i] = (float)h[c][i];
        ch[c] = (swin_volume){.voxels = f[c], .type = SWIN_VOXELS_F32, .dim = {NX, NY, NZ}};
        memcpy(ch[c].affine, affine, sizeof ch[c].affine);
    }
    swin_segment_params sp = swin_segment_default_params();
    swin_segment_report rep;
    bool ok = check_true("four float32 channels", swin_segment_channels(ctx, ch, 4, &sp, all_f32, NULL, &rep, &err) == SWIN_OK);
    int present = rep.labels_present;
    ch[1] = (swin_volume){.voxels = h[1], .type = SWIN_VOXELS_I16, .dim = {NX, NY, NZ}};
    ch[3] = (swin_volume){.voxels = h[3], .type = SWIN_VOXELS_I16, .dim = {NX, NY, NZ}};
    memcpy(ch[1].affine, affine, sizeof ch[1].affine);
    memcpy(ch[3].affine, affine, sizeof ch[3].affine);
    ok &= check_true("int16 and float32 channels mixed",
                     swin_segment_channels(ctx, ch, 4, &sp, mixed, NULL, NULL, &err) == SWIN_OK);
    printf("four channels: %d labels besides 0\n", present);
    ok &= check_true("mixed voxel types give the labels of all float32, more than one class",
                     !memcmp(all_f32, mixed, sizeof mixed) && present > 0);
    ok &= refused(ctx, ch, 3, SWIN_ERR_SHAPE, "3 channels, but the model takes 4", "three channels are refused");
    ok &= refused(ctx, ch, 1, SWIN_ERR_SHAPE, "1 channel, but the model takes 4", "one channel is refused");
    ch[2].affine[1][3] += 0.01;
    ok &= refused(ctx, ch, 4, SWIN_ERR_SHAPE, "channel 2's affine differs", "a channel's affine 0.01 mm off is refused");
    ch[2].affine[1][3] -= 0.01;
    ch[1].dim[2] = NZ - 1;
    ok &= refused(ctx, ch, 4, SWIN_ERR_SHAPE, "share one grid", "a channel of another size is refused");
    ch[1].dim[2] = NZ;
    ch[3].voxels = NULL;
    ok &= refused(ctx, ch, 4, SWIN_ERR_ARG, "channel 3: no voxels", "a channel without voxels is refused");
    swin_context_free(ctx);
    swin_model_free(m);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: test_segment_api MODEL.onnx SWINRUN WORKDIR [MODEL4.onnx]\n");
        return 2;
    }
    const char *model_path = argv[1], *swinrun = argv[2], *dir = argv[3];
    mkdir(dir, 0755);
    char ct[4096], cli_out[4096], cancelled[4096];
    snprintf(ct, sizeof ct, "%s/ct.nii.gz", dir);
    snprintf(cli_out, sizeof cli_out, "%s/cli_labels.nii.gz", dir);
    snprintf(cancelled, sizeof cancelled, "%s/cancelled.nii.gz", dir);
    unlink(cli_out);
    unlink(cancelled);

    static int16_t hu[N];
    static float huf[N];
    static uint16_t labels[N], labels_f32[N], cli[N];
    make_volume(hu);
    for (int i = 0; i < N; i++) huf[i] = hu[i];
    bool ok = check_true("write the CT as NIfTI", write_nifti(ct, hu));
    ok &= check_true("swinrun CT OUT exits 0", run_cli(swinrun, model_path, ct, cli_out) == 0);
    ok &= check_true("read the CLI's labels", read_labels(cli_out, cli));

    swin_error err = {0};
    swin_model_t *m;
    swin_context_t *ctx;
    if (!open_cpu(model_path, &m, &ctx)) return 1;
    swin_model_info mi;
    swin_model_get_info(m, &mi);

    /* int16, with probabilities and progress */
    swin_volume v = {.voxels = hu, .type = SWIN_VOXELS_I16, .dim = {NX, NY, NZ}};
    memcpy(v.affine, affine, sizeof v.affine);
    swin_segment_params sp = swin_segment_default_params();
    struct progress_log log = {0};
    sp.progress = on_progress;
    sp.user = &log;
    float *probs = malloc((size_t)mi.out_channels * N * sizeof *probs);
    swin_segment_report rep;
    swin_status st = swin_segment(ctx, &v, &sp, labels, probs, &rep, &err);
    if (st) fprintf(stderr, "test_segment_api: %s\n", err.msg);
    ok &= check_true("swin_segment (int16) succeeds", st == SWIN_OK);
    int differ = 0, counts[256] = {0}, classes_seen = 0;
    for (int i = 0; i < N; i++) {
        differ += labels[i] != cli[i];
        if (labels[i] < 256 && !counts[labels[i]]++) classes_seen++;
    }
    printf("labels: %d of %d voxels differ from the CLI's; %d classes present; %lld cubes\n", differ, N,
           classes_seen, rep.cubes);
    ok &= check_true("labels equal the CLI's, voxel for voxel", differ == 0);
    ok &= check_true("more than one class in the label map", classes_seen > 1);
    double worst = 0;
    for (int i = 0; i < N; i++) {
        double s = 0;
        for (int c = 0; c < mi.out_channels; c++) s += probs[(size_t)c * N + i];
        if (!(fabs(s - 1) <= worst)) worst = fabs(s - 1);
    }
    ok &= check_true("probabilities sum to 1 (within 1e-5) per voxel", worst <= 1e-5);
    ok &= check_true("report: cubes, classes, bytes, grid", rep.cubes > 0 && rep.classes == mi.out_channels &&
                                                              rep.pipeline_bytes > 0 && rep.grid_dim[0] > 0 &&
                                                              !strcmp(rep.input_axcodes, "LPS"));
    ok &= check_true("report: the backend and why", rep.plan.backend == SWIN_BACKEND_CPU &&
                                                       !strcmp(rep.plan.backend_reason, "requested"));
    printf("progress: %d reports, %d during the cubes, first %.3f, last %.3f\n", log.n, log.cube_reports, log.first,
           log.last);
    ok &= check_true("progress: stages and fractions never go back", log.bad_order == 0);
    ok &= check_true("progress: ends at 1 with SWIN_STAGE_DONE, once",
                     log.last == 1.0 && log.last_stage == SWIN_STAGE_DONE && log.done_count == 1);
    ok &= check_true("progress: one report per cube (and the stage's start)", log.cube_reports == rep.cubes + 1);

    /* float32: the same labels */
    v.voxels = huf;
    v.type = SWIN_VOXELS_F32;
    sp = swin_segment_default_params();
    st = swin_segment(ctx, &v, &sp, labels_f32, NULL, NULL, &err);
    ok &= check_true("swin_segment (float32) succeeds", st == SWIN_OK);
    ok &= check_true("float32 and int16 inputs give the same labels", !memcmp(labels, labels_f32, sizeof labels));

    /* cancel: in memory and to a file */
    for (int i = 0; i < N; i++) labels_f32[i] = 0xBEEF;
    sp.cancel = cancel_after_two;
    polls = 0;
    st = swin_segment(ctx, &v, &sp, labels_f32, NULL, NULL, &err);
    bool untouched = true;
    for (int i = 0; i < N; i++) untouched &= labels_f32[i] == 0xBEEF;
    ok &= check_true("cancel: SWIN_ERR_CANCELLED", st == SWIN_ERR_CANCELLED);
    ok &= check_true("cancel: the label buffer is untouched", untouched);
    polls = 0;
    st = swin_segment_file(ctx, ct, cancelled, &sp, NULL, &err);
    struct stat sb;
    ok &= check_true("cancel (file): SWIN_ERR_CANCELLED", st == SWIN_ERR_CANCELLED);
    ok &= check_true("cancel (file): no output, no temporary file",
                     stat(cancelled, &sb) != 0 && errno == ENOENT && no_temporary_files(dir));

    /* bad arguments are refused, with the limits of the header */
    sp = swin_segment_default_params();
    sp.overlap = 1.0;
    ok &= check_true("overlap 1 is refused", swin_segment(ctx, &v, &sp, labels, NULL, NULL, &err) == SWIN_ERR_ARG);
    sp = swin_segment_default_params();
    sp.spacing_mm[1] = 0;
    ok &= check_true("spacing 0 is refused", swin_segment(ctx, &v, &sp, labels, NULL, NULL, &err) == SWIN_ERR_ARG);
    swin_volume two[2] = {v, v};
    ok &= refused(ctx, two, 2, SWIN_ERR_SHAPE, "2 channels, but the model takes 1", "two channels for one are refused");
    if (argc == 5) ok &= check_channels(argv[4], hu);

    free(probs);
    swin_context_free(ctx);
    swin_model_free(m);
    return test_exit(ok);
}
