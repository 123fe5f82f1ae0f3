/* The swinrun verbs and their shared argument parsing. */
#ifndef SWIN_CLI_H
#define SWIN_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "runtime/swinrun.h"

#define CLI_MAX_POS 4

struct cli_args {
    const char *pos[CLI_MAX_POS];  /* positional arguments after the verb */
    int npos;
    swin_context_params ctx;
    bool json, help;
    int runs;                      /* forward: timed repetitions (default 1) */
};

/* argv[0] is the verb. Prints a one-line error and returns nonzero on bad arguments. */
int cli_parse(int argc, char **argv, struct cli_args *a);
/* The context options shared by every verb (--threads, --device, --backend, --mem-limit):
 * 0 when argv[*i] is none of them, 1 when consumed (with its value), 2 after printing an
 * error. */
int cli_parse_context_option(const char *verb, int argc, char **argv, int *i, swin_context_params *ctx);
/* Maps a library status to the exit code: 2 for bad arguments or inputs, 1 otherwise. */
int cli_exit_code(swin_status st);
/* Loads the model or prints the loader's one-line error. */
swin_model_t *cli_load_model(const char *path, int *exit_code);

int cli_info(const struct cli_args *a);
int cli_plan(const struct cli_args *a);
int cli_forward(const struct cli_args *a);
/* segment (runtime/cli/segment.c) parses its own options; argv[0] is the verb or the program. */
int cli_segment(int argc, char **argv);
/* "2G", "512M", "123456" -> bytes; nonzero when not a size. */
int cli_parse_size(const char *s, size_t *out);
/* "fp32", "fp16", "bf16" -> the precision; -1 for anything else. */
int cli_parse_precision(const char *s, swin_precision *out);

#ifdef SWINRUN_EMULATED_CUDA
/* swinrun_emu (runtime/cli/emu_device.c): SWIN_ERR_BACKEND unless the emulated device's
 * high-water mark equals p->total_bytes; prints one line on stderr when it does. */
swin_status cli_emu_check_device_bytes(const swin_plan_info *p, swin_error *err);
#endif

#endif
