#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cli/cli.h"

/* "2G", "1.5GiB", "512M", "300MB", "123456" -> bytes. */
int cli_parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || v <= 0) return -1;
    double mul = 1;
    switch (*end) {
    case 'k': case 'K': mul = 1024.0; end++; break;
    case 'm': case 'M': mul = 1024.0 * 1024; end++; break;
    case 'g': case 'G': mul = 1024.0 * 1024 * 1024; end++; break;
    case 't': case 'T': mul = 1024.0 * 1024 * 1024 * 1024; end++; break;
    default: break;
    }
    if (!strcmp(end, "iB") || !strcmp(end, "B") || (*end == 'i' && end[1] == 0)) end += strlen(end);
    if (*end) return -1;
    *out = (size_t)(v * mul);
    return 0;
}

int cli_parse_precision(const char *s, swin_precision *out)
{
    const swin_precision all[] = {SWIN_PRECISION_FP32, SWIN_PRECISION_FP16, SWIN_PRECISION_BF16};
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, swin_precision_name(all[i]))) {
            *out = all[i];
            return 0;
        }
    return -1;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

/* The options every verb that opens a context shares. Returns 0 when argv[*i] is not one
 * of them, 1 when it was consumed (with its value), 2 after printing a one-line error. */
int cli_parse_context_option(const char *verb, int argc, char **argv, int *i, swin_context_params *ctx)
{
    const char *o = argv[*i];
    if (!strcmp(o, "--half")) {  /* the one flag without a value: --precision fp16 */
        ctx->precision = SWIN_PRECISION_FP16;
        return 1;
    }
    bool known = !strcmp(o, "--threads") || !strcmp(o, "--device") || !strcmp(o, "--backend") ||
                 !strcmp(o, "--mem-limit") || !strcmp(o, "--precision");
    if (!known) return 0;
    if (*i + 1 >= argc) {
        fprintf(stderr, "swinrun %s: option %s needs a value (try swinrun %s --help)\n", verb, o, verb);
        return 2;
    }
    const char *v = argv[++*i];
    const char *why = NULL;
    if (!strcmp(o, "--threads")) {
        if (parse_int(v, 0, 4096, &ctx->threads)) why = "takes an integer 0..4096 (0 = every core)";
    } else if (!strcmp(o, "--device")) {
        if (parse_int(v, 0, 64, &ctx->device)) why = "takes a CUDA device index 0..64";
    } else if (!strcmp(o, "--mem-limit")) {
        if (cli_parse_size(v, &ctx->mem_limit)) why = "takes a size such as 2G, 512M or a byte count";
    } else if (!strcmp(o, "--precision")) {
        if (cli_parse_precision(v, &ctx->precision)) why = "takes fp32, fp16 (CUDA) or bf16 (CPU)";
    } else if (!strcmp(v, "cpu")) {
        ctx->backend = SWIN_BACKEND_CPU;
    } else if (!strcmp(v, "cuda")) {
        ctx->backend = SWIN_BACKEND_CUDA;
    } else if (!strcmp(v, "auto")) {
        ctx->backend = SWIN_BACKEND_AUTO;
    } else {
        why = "takes cpu, cuda or auto";
    }
    if (!why) return 1;
    fprintf(stderr, "swinrun %s: %s %s, not '%s'\n", verb, o, why, v);
    return 2;
}

int cli_parse(int argc, char **argv, struct cli_args *a)
{
    memset(a, 0, sizeof *a);
    a->ctx = swin_context_default_params();
    a->runs = 1;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        int rc = cli_parse_context_option(argv[0], argc, argv, &i, &a->ctx);
        if (rc == 2) return 2;
        if (rc == 1) continue;
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            a->help = true;
        } else if (!strcmp(o, "--json")) {
            a->json = true;
        } else if (!strcmp(o, "--cube")) {
            if (i + 3 >= argc) goto missing;
            for (int k = 0; k < 3; k++)
                if (parse_int(argv[++i], 1, 1 << 20, &a->ctx.cube[k])) {
                    fprintf(stderr, "swinrun: --cube takes three positive integers D H W\n");
                    return 2;
                }
        } else if (!strcmp(o, "--runs")) {
            if (i + 1 >= argc) goto missing;
            if (parse_int(argv[++i], 1, 100000, &a->runs)) {
                fprintf(stderr, "swinrun: --runs takes a positive integer\n");
                return 2;
            }
        } else if (o[0] == '-' && o[1]) {
            fprintf(stderr, "swinrun %s: unknown option '%s' (try swinrun --help)\n", argv[0], o);
            return 2;
        } else {
            if (a->npos == CLI_MAX_POS) {
                fprintf(stderr, "swinrun %s: too many arguments (try swinrun --help)\n", argv[0]);
                return 2;
            }
            a->pos[a->npos++] = o;
        }
        continue;
    missing:
        fprintf(stderr, "swinrun %s: option %s needs a value (try swinrun --help)\n", argv[0], o);
        return 2;
    }
    return 0;
}

int cli_exit_code(swin_status st)
{
    switch (st) {
    case SWIN_OK: return 0;
    case SWIN_ERR_ARG: case SWIN_ERR_IO: case SWIN_ERR_FORMAT: case SWIN_ERR_MODEL: case SWIN_ERR_SHAPE:
        return 2;
    default: return 1;
    }
}

swin_model_t *cli_load_model(const char *path, int *exit_code)
{
    swin_error err = {0};
    swin_model_t *m = NULL;
    swin_status st = swin_model_load(path, &m, &err);
    if (st) {
        fprintf(stderr, "swinrun: %s\n", err.msg);
        *exit_code = cli_exit_code(st);
        return NULL;
    }
    return m;
}
