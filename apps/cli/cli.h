/* The swinrun verbs and their one option grammar (apps/cli/options.c). */
#ifndef SWIN_CLI_H
#define SWIN_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "pipeline/swinrun.h"

enum cli_verb {
    CLI_INFO = 0,
    CLI_PLAN = 1,
    CLI_FORWARD = 2,
    CLI_SEGMENT = 3,
    CLI_DICOM_LS = 4,
    CLI_FETCH = 5,
    CLI_VERBS = 6
};

/* The model-zoo bundle swinrun fetch gets by default, and the default model lookup finds. */
#define CLI_DEFAULT_BUNDLE "swin_unetr_btcv_segmentation"

/* Everything any verb's command line can say; each verb reads its own part. */
struct cli_args {
    enum cli_verb verb;
    const char **pos;              /* positional arguments after the verb (argc entries allocated) */
    int npos;
    swin_context_params ctx;
    swin_segment_params seg;
    const char *json;              /* --json FILE ('-' = stdout); NULL: none */
    const char *model, *out_dir, *probs, *preview; /* segment */
    const char *classes;           /* segment: --classes FILE for the DICOM outputs */
    bool with_probs, with_preview, no_prefetch, quiet, help;
    int runs;                      /* forward: timed repetitions (default 1) */
    swin_model_load_params load;   /* --merge-order, --no-normalize */
    char **argv;                   /* the command line cli_parse read, from index first */
    int argc, first;
    const char *fetch_version, *fetch_dest, *fetch_from; /* fetch: --version, --dest, --from */
    int fetch_timeout;             /* fetch: --timeout seconds */
    long long volume[3];           /* plan: --volume NX NY NZ (0 0 0: none) */
    double voxel_mm[3];            /* plan: --voxel-size DX DY DZ (0 0 0: the volume is the grid) */
};

/* Parses argv[first..argc) for `verb` against the option table. Prints a one-line error and
 * returns the exit code (2 on bad arguments, 1 out of memory), else 0 (a->help set for
 * -h/--help). Free a->pos after use. */
int cli_parse(enum cli_verb verb, int argc, char **argv, int first, struct cli_args *a);
/* seg = base (a model's recipe, swin_model_segment_params) with the command line's options
 * applied over it again: an option given overrides the recipe, one not given keeps it. */
void cli_seg_over(struct cli_args *a, const swin_segment_params *base);
/* The recipe of a model loaded from a MONAI bundle and the keys it does not follow, one line
 * each to f; nothing for other models. */
void cli_print_recipe(FILE *f, const swin_model_info *i, const swin_segment_params *sp);
/* Each line of lines ('\n'-separated) to f after indent. */
void cli_print_lines(FILE *f, const char *indent, const char *lines);
/* The verb's --help: its usage lines, then every option of the table it takes. */
void cli_help(enum cli_verb verb, FILE *o);
const char *cli_verb_name(enum cli_verb verb);

/* Maps a library status to the exit code: 2 for bad arguments or inputs, 1 otherwise. */
int cli_exit_code(swin_status st);
/* Loads the model or prints the loader's one-line error. */
swin_model_t *cli_load_model(const char *path, const swin_model_load_params *p, int *exit_code);
/* "2G", "512M", "123456" -> bytes; nonzero when not a size. */
int cli_parse_size(const char *s, size_t *out);
/* "cpu" / "cuda" for a plan's backend, and the plan's storage type. */
const char *cli_backend_name(swin_backend b);
const char *cli_dtype_name(const swin_plan_info *p);

/* A JSON report: to stdout for "-", else to a temporary file renamed over the path when
 * complete (fileio/atomic_file.h). */
struct cli_json;
swin_status cli_json_open(struct cli_json **j, const char *path, FILE **f, swin_error *err);
swin_status cli_json_commit(struct cli_json *j, swin_error *err);
void json_string(FILE *f, const char *s);

/* Reads --classes FILE into sp->dicom_classes (apps/cli/classes.c); prints why not and
 * returns the exit code. */
int cli_load_classes(const char *path, swin_segment_params *sp);
void cli_free_classes(void);

int cli_info(const struct cli_args *a);
int cli_plan(const struct cli_args *a);
int cli_forward(const struct cli_args *a);
int cli_segment(const struct cli_args *a);
int cli_dicom_ls(const struct cli_args *a);
int cli_fetch(const struct cli_args *a);
/* $XDG_DATA_HOME/rel (XDG_DATA_HOME defaults to ~/.local/share) into buf; -1 when too long. */
int cli_data_path(char *buf, size_t n, const char *rel);
/* The series of a study input, one line each to f ("*" marks the one a run reads), and the
 * choice's line; the input's format must have list(). Returns the exit code. */
int cli_print_series(FILE *f, const char *const *inputs, int ninputs, const char *pick, const char *indent);

#ifdef SWINRUN_EMULATED_CUDA
/* swinrun_emu (tests/cuemu/swinrun_emu/emu_device.c): SWIN_ERR_BACKEND unless the emulated device's
 * high-water mark equals p->total_bytes plus ring_bytes (the largest ring a segmentation
 * blended in, besides the context); prints one line on stderr when it does. */
swin_status cli_emu_check_device_bytes(const swin_plan_info *p, size_t ring_bytes, swin_error *err);
#endif

#endif
