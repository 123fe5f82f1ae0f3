/* Allocation fault injection through the library, phase by phase: load a model, plan,
 * plan over a memory limit (the search for a window that fits), create a context, run a
 * window, write the logits (.npy), read a .npy, segment a small NIfTI volume with every
 * output (labels .nii.gz, probabilities .nii, preview .png). For each phase,
 * with the earlier phases done and not counted, a first run counts the phase's
 * allocations and records the call stack of each; then allocation N fails, one run per N:
 * every N when the phase makes at most EVERY_N allocations, else (the loader: about 80k,
 * nearly all protobuf-c's) the first EVERY_N, the first from each distinct call stack and
 * the last. Each time:
 *   - the phase returns SWIN_ERR_NOMEM with a one-line message;
 *   - every allocation it made is freed again (alloc_fault.h keeps the books; ASan's leak
 *     check at exit covers what the wrappers do not see);
 *   - the output folder is empty: no output, no temporary file.
 * Prints per phase the allocations, their call stacks and the runs, then the distinct call
 * sites and stacks failed; exits 1 on any failure.
 *
 *     test_alloc_faults MODEL.onnx WORKDIR [--backend cuda] [-v: messages, progress, sites]
 * --backend cuda: the emulated CUDA backend's plan and context (built against swinrun_lib_emu).
 */
#define _GNU_SOURCE /* dladdr */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nifti2_io.h>

#include "fileio/npy.h"
#include "pipeline/segment.h"
#include "pipeline/swinrun.h"
#include "tests/faults/alloc_fault.h"

#define MAX_SITES 8192
#define MAX_RECORD 400000 /* allocations a phase may make (load: about 80k on f=12) */
#define EVERY_N 2000
#define EVERY_N_TEXT "2000"

struct world {
    const char *model_path, *out_dir, *volume;
    char labels[4096], probs[4096], preview[4096], logits_npy[4096], input_npy[4096];
    swin_context_params params;
    swin_model_t *model;
    swin_context_t *ctx;
    float *input, *logits;
    size_t in_n, out_n;
    bool verbose;
    void **rec_site;          /* where allocation n of the counting run was made: return address */
    unsigned long *rec_stack; /* and call stack hash */
    void *sites[MAX_SITES], *stacks[MAX_SITES]; /* failed at least once: distinct ones */
    int n_sites, n_stacks, failures;
};

/* A phase: runs with the world's earlier phases done; undo() frees what a successful
 * run made (or NULL). */
struct phase {
    const char *name;
    swin_status (*run)(struct world *w, swin_error *err);
    void (*undo)(struct world *w);
};

static swin_status do_load(struct world *w, swin_error *err)
{
    return swin_model_load(w->model_path, &w->model, err);
}

static void undo_load(struct world *w)
{
    swin_model_free(w->model);
    w->model = NULL;
}

static swin_status do_plan(struct world *w, swin_error *err)
{
    swin_plan_info info;
    return swin_model_plan(w->model, &w->params, &info, err);
}

/* A limit below the plan: refused (SWIN_ERR_MEM_LIMIT, the phase's success) after a
 * search for a window that fits, which plans again and must not take a failed
 * allocation for a window that does not fit. */
static swin_status do_plan_over_limit(struct world *w, swin_error *err)
{
    swin_context_params p = w->params; /* 32^3 */
    swin_plan_info info;
    swin_status st = swin_model_plan(w->model, &p, &info, err);
    if (st) return st;
    p.cube[0] = p.cube[1] = p.cube[2] = 64;
    p.mem_limit = info.total_bytes; /* the 32^3 window fits, 64^3 does not */
    st = swin_model_plan(w->model, &p, &info, err);
    return st == SWIN_ERR_MEM_LIMIT && strstr(err->msg, "32x32x32") ? SWIN_OK : st ? st : SWIN_ERR_INTERNAL;
}

static swin_status do_context(struct world *w, swin_error *err)
{
    return swin_context_create(w->model, &w->params, &w->ctx, err);
}

static void undo_context(struct world *w)
{
    swin_context_free(w->ctx);
    w->ctx = NULL;
}

static swin_status do_run(struct world *w, swin_error *err)
{
    return swin_context_run(w->ctx, w->input, w->logits, err);
}

static swin_status do_write_npy(struct world *w, swin_error *err)
{
    swin_model_info mi;
    swin_model_get_info(w->model, &mi);
    const size_t shape[5] = {1, (size_t)mi.out_channels, 32, 32, 32};
    return swin_npy_write_f32(w->logits_npy, w->logits, 5, shape, err);
}

static swin_status do_read_npy(struct world *w, swin_error *err)
{
    struct swin_npy_array a;
    swin_status st = swin_npy_read_f32(w->input_npy, &a, err);
    free(a.data);
    return st;
}

static swin_status do_segment(struct world *w, swin_error *err)
{
    swin_segment_params o = swin_segment_default_params();
    o.probabilities_path = w->probs;
    o.preview_path = w->preview;
    swin_segment_report rep;
    return swin_segment_file(w->ctx, w->volume, w->labels, &o, &rep, err);
}

/* The same in two calls, as a batch prefetching its next volume does. */
static swin_status do_segment_prepared(struct world *w, swin_error *err)
{
    swin_segment_params o = swin_segment_default_params();
    o.probabilities_path = w->probs;
    o.preview_path = w->preview;
    swin_segment_report rep;
    swin_segment_prepared *pv = NULL;
    swin_status st = swin_segment_file_prepare(w->ctx, w->volume, w->labels, &o, &pv, &rep, err);
    return st ? st : swin_segment_file_prepared(w->ctx, pv, &o, &rep, err);
}

static void remove_outputs(struct world *w)
{
    unlink(w->labels);
    unlink(w->probs);
    unlink(w->preview);
    unlink(w->logits_npy);
}

/* The names in the output folder, comma-separated ("" when empty). */
static void folder_contents(const char *dir, char *buf, size_t cap)
{
    buf[0] = 0;
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(buf, cap, "(cannot list: %s)", strerror(errno));
        return;
    }
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        size_t len = strlen(buf);
        snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", e->d_name);
    }
    closedir(d);
}

static void fail(struct world *w, const char *phase, long n, const char *what, const char *detail)
{
    fprintf(stderr, "FAIL %s, allocation %ld failed: %s%s%s\n", phase, n, what, detail ? ": " : "", detail ? detail : "");
    w->failures++;
}

/* Adds x to the set; true when it was not there. */
static bool note(void **set, int *n, void *x)
{
    for (int i = 0; i < *n; i++)
        if (set[i] == x) return false;
    if (*n < MAX_SITES) set[(*n)++] = x;
    return true;
}

/* Checks one run of a phase whose allocation n failed. */
static void check_failed_run(struct world *w, const struct phase *p, long n, swin_status st, const swin_error *err)
{
    if (st == SWIN_OK) {
        fail(w, p->name, n, "succeeded anyway (a failure swallowed)", NULL);
        if (p->undo) p->undo(w);
        remove_outputs(w);
    } else if (st != SWIN_ERR_NOMEM) {
        char d[640];
        snprintf(d, sizeof d, "%s: %s", swin_status_name(st), err->msg);
        fail(w, p->name, n, "status is not SWIN_ERR_NOMEM", d);
    } else if (!err->msg[0] || strchr(err->msg, '\n')) {
        fail(w, p->name, n, "the message is not one line", err->msg);
    } else if (w->verbose && n == 1) {
        printf("  %s, first allocation failed: %s\n", p->name, err->msg);
    }
    size_t bytes;
    long live = alloc_fault_live(&bytes);
    if (live) {
        char d[64];
        snprintf(d, sizeof d, "%ld allocations, %zu bytes", live, bytes);
        fail(w, p->name, n, "leaked", d);
    }
    char listing[1024];
    folder_contents(w->out_dir, listing, sizeof listing);
    if (listing[0]) {
        fail(w, p->name, n, "left files in the output folder", listing);
        remove_outputs(w);
    }
}

/* Runs the phase once counting (and recording where each allocation comes from), checks
 * that undoing it frees everything, then fails the chosen allocations one run at a time;
 * leaves the phase done. Returns false when it cannot go on. */
static bool exercise(struct world *w, const struct phase *p)
{
    swin_error err = {0};
    alloc_fault_record(w->rec_site, w->rec_stack, MAX_RECORD);
    alloc_fault_arm(0);
    swin_status st = p->run(w, &err);
    alloc_fault_disarm();
    alloc_fault_record(NULL, NULL, 0);
    long made = alloc_fault_count();
    if (st) {
        fail(w, p->name, 0, "fails with no fault injected", err.msg);
        return false;
    }
    if (made > MAX_RECORD) {
        fail(w, p->name, 0, "makes more allocations than the test records", NULL);
        return false;
    }
    if (p->undo) p->undo(w);
    remove_outputs(w);
    size_t bytes;
    long live = alloc_fault_live(&bytes);
    if (live) {
        char d[64];
        snprintf(d, sizeof d, "%ld allocations, %zu bytes", live, bytes);
        fail(w, p->name, 0, "completed, then undone, but leaked", d);
    }

    /* Which allocations to fail: every one when the phase makes at most EVERY_N, else the
     * first EVERY_N, the first made from each distinct call stack, and the last. */
    long runs = 0;
    int stacks = 0;
    void **seen = calloc(MAX_SITES, sizeof *seen);
    bool *chosen = calloc((size_t)made + 1, sizeof *chosen);
    for (long n = 1; n <= made; n++)
        chosen[n] = note(seen, &stacks, (void *)w->rec_stack[n - 1]) || n <= EVERY_N || n == made;
    for (long n = 1; n <= made && w->failures < 20; n++) {
        if (!chosen[n]) continue;
        runs++;
        alloc_fault_arm(n);
        st = p->run(w, &err);
        alloc_fault_disarm();
        if (alloc_fault_site() != w->rec_site[n - 1]) {
            fail(w, p->name, n, "was not made where the counting run made it (the phase is not deterministic)", NULL);
            break;
        }
        note(w->sites, &w->n_sites, w->rec_site[n - 1]);
        note(w->stacks, &w->n_stacks, (void *)w->rec_stack[n - 1]);
        check_failed_run(w, p, n, st, &err);
    }
    free(seen);
    free(chosen);
    printf("%-11s %6ld allocations from %4d call stacks: %6ld runs, each failing one (%s)\n", p->name, made, stacks,
           runs, made <= EVERY_N ? "every one" : "the first " EVERY_N_TEXT ", each stack's first, the last");
    fflush(stdout);
    if (p->undo && (st = p->run(w, &err))) {
        fail(w, p->name, 0, "fails when redone", err.msg);
        return false;
    }
    remove_outputs(w);
    return true;
}

/* A 40 x 30 x 20 int16 volume, 1.5 x 1.5 x 2 mm: two 32^3 windows after resampling. */
static int write_volume(const char *path)
{
    int64_t dims[8] = {3, 40, 30, 20, 1, 1, 1, 1};
    nifti_image *n = nifti_make_new_nim(dims, DT_INT16, 1);
    if (!n) return 1;
    n->dx = n->pixdim[1] = 1.5f;
    n->dy = n->pixdim[2] = 1.5f;
    n->dz = n->pixdim[3] = 2.0f;
    int16_t *v = n->data;
    for (int64_t i = 0; i < n->nvox; i++) v[i] = (int16_t)((i * 7919) % 1000) - 500;
    int rc = nifti_set_filenames(n, path, 0, 1) ? 1 : 0;
    if (!rc) nifti_image_write(n);
    nifti_image_free(n);
    return rc;
}

/* The window's input and logits, once the model is loaded. */
static int make_buffers(struct world *w)
{
    swin_model_info mi;
    swin_model_get_info(w->model, &mi);
    w->in_n = (size_t)mi.in_channels * 32 * 32 * 32;
    w->out_n = (size_t)mi.out_channels * 32 * 32 * 32;
    w->input = calloc(w->in_n, sizeof *w->input);
    w->logits = calloc(w->out_n, sizeof *w->logits);
    if (!w->input || !w->logits) return 1;
    for (size_t k = 0; k < w->in_n; k++) w->input[k] = (float)(k % 97) / 97.0f;
    const size_t shape[5] = {1, (size_t)mi.in_channels, 32, 32, 32};
    swin_error err;
    if (swin_npy_write_f32(w->input_npy, w->input, 5, shape, &err)) {
        fprintf(stderr, "FAIL %s\n", err.msg);
        return 1;
    }
    return 0;
}

static void print_sites(const struct world *w)
{
    for (int i = 0; i < w->n_sites; i++) {
        Dl_info di;
        if (dladdr(w->sites[i], &di) && di.dli_fname)
            printf("  site %p: %s+0x%lx\n", w->sites[i], di.dli_fname,
                   (unsigned long)((char *)w->sites[i] - (char *)di.dli_fbase));
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_alloc_faults MODEL.onnx WORKDIR [--backend cuda] [-v]\n");
        return 2;
    }
    struct world w = {.model_path = argv[1], .params = swin_context_default_params()};
    w.params.threads = 2; /* a worker thread: its start and its buffers are allocations too */
    w.params.cube[0] = w.params.cube[1] = w.params.cube[2] = 32;
    w.params.backend = SWIN_BACKEND_CPU; /* unless --backend cuda: no device probe among the allocations */
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "-v")) w.verbose = true;
        else if (!strcmp(argv[i], "--backend") && i + 1 < argc && !strcmp(argv[i + 1], "cuda")) {
            w.params.backend = SWIN_BACKEND_CUDA;
            i++;
        }
    }
    char out_dir[3072], volume[3072];
    snprintf(out_dir, sizeof out_dir, "%s/out", argv[2]);
    snprintf(volume, sizeof volume, "%s/ct.nii.gz", argv[2]);
    if (strlen(argv[2]) > 2048) {
        fprintf(stderr, "WORKDIR: path too long\n");
        return 2;
    }
    mkdir(argv[2], 0755);
    mkdir(out_dir, 0755);
    w.out_dir = out_dir;
    w.volume = volume;
    snprintf(w.labels, sizeof w.labels, "%s/labels.nii.gz", out_dir);
    snprintf(w.probs, sizeof w.probs, "%s/probabilities.nii", out_dir);
    snprintf(w.preview, sizeof w.preview, "%s/preview.png", out_dir);
    snprintf(w.logits_npy, sizeof w.logits_npy, "%s/logits.npy", out_dir);
    snprintf(w.input_npy, sizeof w.input_npy, "%s/input.npy", argv[2]);
    remove_outputs(&w);
    if (write_volume(volume)) {
        fprintf(stderr, "cannot write the test volume %s\n", volume);
        return 1;
    }

    /* The emulated CUDA backend (the test built against swinrun_lib_emu): its plan and
     * context creation (weights uploaded, arena and scratch by cudaMalloc, cuBLAS and
     * cuDNN handles); a run would fail the emulator's own kernel-launch machinery, which
     * is no part of the library. */
    const struct phase cpu_phases[] = {
        {"load", do_load, undo_load},          {"plan", do_plan, NULL},
        {"plan>limit", do_plan_over_limit, NULL},
        {"context", do_context, undo_context}, {"forward", do_run, NULL},
        {"write .npy", do_write_npy, NULL},    {"read .npy", do_read_npy, NULL},
        {"segment", do_segment, NULL},         {"segment, prepared", do_segment_prepared, NULL},
    };
    const struct phase cuda_phases[] = {{"plan", do_plan, NULL}, {"context", do_context, undo_context}};
    const bool cuda = w.params.backend == SWIN_BACKEND_CUDA;
    const struct phase *phases = cuda ? cuda_phases : cpu_phases;
    const int np = cuda ? 2 : (int)(sizeof cpu_phases / sizeof cpu_phases[0]);
    w.rec_site = calloc(MAX_RECORD, sizeof *w.rec_site);
    w.rec_stack = calloc(MAX_RECORD, sizeof *w.rec_stack);
    if (!w.rec_site || !w.rec_stack) return 1;
    /* The emulator keeps process-wide state (its table of device allocations, set up on
     * first use and grown by doubling): one context made and freed first sets it up. */
    swin_error err;
    if (cuda && (do_load(&w, &err) || do_context(&w, &err))) {
        fprintf(stderr, "FAIL %s\n", err.msg);
        return 1;
    }
    if (cuda) undo_context(&w);
    for (int i = 0; i < np; i++) {
        if (!exercise(&w, &phases[i])) break;
        if (!w.input && make_buffers(&w)) return 1;
    }
    remove_outputs(&w);
    undo_context(&w);
    undo_load(&w);
    free(w.input);
    free(w.logits);
    free(w.rec_site);
    free(w.rec_stack);
    printf("%d distinct call sites (%d distinct call stacks) failed; %d failures\n", w.n_sites, w.n_stacks,
           w.failures);
    if (w.verbose) print_sites(&w);
    return w.failures ? 1 : 0;
}
