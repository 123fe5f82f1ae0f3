/* Bad-input tests for swin_onnx_load: every failure must be a nonzero status with one
 * non-empty line of message, a zeroed *out, no crash and no leak (run under ASan with
 * -DSWIN_SANITIZE=address,undefined).
 *
 *   test_bad_files expect FILE STATUS SUBSTRING   FILE must fail with STATUS and a message containing SUBSTRING
 *   test_bad_files generated VALID.onnx TMPDIR    VALID must load; empty, random and truncated copies must not
 *   test_bad_files mutated VALID.onnx TMPDIR N    N copies with a few random bytes changed: each either loads or
 *                                                 fails cleanly (a payload-only change may still load) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/common/check.h"
#include "weights/onnx/onnx_loader.h"

static bool all_zero(const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i]) return false;
    return true;
}

/* Loads path; checks a failure's shape. want: the expected status or -1 for "any nonzero". */
static bool expect_fail(const char *path, int want, const char *substr)
{
    struct swin_model m;
    memset(&m, 0xab, sizeof m);
    swin_error err = {SWIN_OK, ""};
    swin_status st = swin_onnx_load(path, &m, &err);
    char what[600];
    snprintf(what, sizeof what, "%s -> %s: %s", path, swin_status_name(st), err.msg);
    bool ok = check_true(what, st != SWIN_OK && (want < 0 || (int)st == want) && err.status == st);
    ok &= check_true("  message is one non-empty line", err.msg[0] && !strchr(err.msg, '\n'));
    if (substr) {
        snprintf(what, sizeof what, "  message names the problem ('%s')", substr);
        /* look after the leading path, which may itself contain the word */
        size_t pl = strlen(path);
        const char *body = strncmp(err.msg, path, pl) ? err.msg : err.msg + pl;
        ok &= check_true(what, strstr(body, substr) != NULL);
    }
    ok &= check_true("  *out is zeroed", all_zero(&m, sizeof m));
    if (st == SWIN_OK) swin_model_release(&m);
    return ok;
}

static int status_by_name(const char *name)
{
    for (int s = 0; s <= SWIN_ERR_INTERNAL; s++)
        if (!strcmp(name, swin_status_name((swin_status)s))) return s;
    return -2;
}

static bool write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(data, 1, n, f) == n;
    if (f) ok &= fclose(f) == 0;
    return check_true(path, ok);
}

static bool generated(const char *valid, const char *dir)
{
    struct swin_model m;
    swin_error err = {SWIN_OK, ""};
    bool ok = check_true("the valid model loads", swin_onnx_load(valid, &m, &err) == SWIN_OK);
    if (!ok) fprintf(stderr, "  %s\n", err.msg);
    swin_model_release(&m);

    FILE *f = fopen(valid, "rb");
    struct stat sb;
    if (!f || fstat(fileno(f), &sb)) return check_true("read the valid model", false);
    size_t n = (size_t)sb.st_size;
    unsigned char *data = malloc(n);
    ok &= check_true("read the valid model", data && fread(data, 1, n, f) == n);
    fclose(f);
    if (!ok) { free(data); return false; }

    char path[4096];
    snprintf(path, sizeof path, "%s/empty.onnx", dir);
    ok &= write_file(path, "", 0) && expect_fail(path, SWIN_ERR_FORMAT, "empty");

    test_rng rng = {0x5eed};
    size_t rn = 1 << 20;
    unsigned char *rnd = malloc(rn);
    for (size_t i = 0; i < rn; i++) rnd[i] = (unsigned char)test_rng_uniform(&rng, 0, 256);
    const size_t rsizes[] = {1, 7, 4096, 1 << 20};
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/random_%zu.onnx", dir, rsizes[i]);
        ok &= write_file(path, rnd, rsizes[i]) && expect_fail(path, -1, NULL);
    }
    /* a valid prefix followed by garbage */
    memcpy(rnd, data, 4096 < n ? 4096 : n);
    snprintf(path, sizeof path, "%s/prefix_garbage.onnx", dir);
    ok &= write_file(path, rnd, rn) && expect_fail(path, -1, NULL);
    free(rnd);

    const size_t cuts[] = {1, 2, 16, 100, 4096, n / 3, n / 2, 2 * n / 3, n - 4096, n - 100, n - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        snprintf(path, sizeof path, "%s/truncated_%zu.onnx", dir, cuts[i]);
        ok &= write_file(path, data, cuts[i]) && expect_fail(path, SWIN_ERR_FORMAT, "truncated");
    }
    free(data);

    snprintf(path, sizeof path, "%s/does_not_exist.onnx", dir);
    ok &= expect_fail(path, SWIN_ERR_IO, "cannot open");
    ok &= expect_fail(dir, SWIN_ERR_IO, "not a regular file");
    ok &= check_true("NULL path -> SWIN_ERR_ARG", swin_onnx_load(NULL, &m, &err) == SWIN_ERR_ARG);
    return ok;
}

/* Flips 1-8 bytes per copy, half of them in the first 2 MiB where the graph's nodes and tags are dense. */
static bool mutated(const char *valid, const char *dir, int count)
{
    FILE *f = fopen(valid, "rb");
    struct stat sb;
    if (!f || fstat(fileno(f), &sb)) return check_true("read the valid model", false);
    size_t n = (size_t)sb.st_size;
    unsigned char *data = malloc(n), *copy = malloc(n);
    bool ok = check_true("read the valid model", data && copy && fread(data, 1, n, f) == n);
    fclose(f);
    test_rng rng = {0xf22};
    char path[4096];
    snprintf(path, sizeof path, "%s/mutated.onnx", dir);
    int loaded = 0, failed = 0;
    for (int it = 0; ok && it < count; it++) {
        memcpy(copy, data, n);
        int flips = 1 + (int)test_rng_uniform(&rng, 0, 8);
        for (int k = 0; k < flips; k++) {
            size_t span = (k & 1) && n > (2u << 20) ? (2u << 20) : n;
            size_t pos = (size_t)test_rng_uniform(&rng, 0, (float)span) % n;
            copy[pos] = (unsigned char)test_rng_uniform(&rng, 0, 256);
        }
        if (!write_file(path, copy, n)) break;
        struct swin_model m;
        swin_error err = {SWIN_OK, ""};
        swin_status st = swin_onnx_load(path, &m, &err);
        if (st == SWIN_OK) {
            loaded++;
            swin_model_release(&m);
            continue;
        }
        failed++;
        if (!err.msg[0] || strchr(err.msg, '\n') || !all_zero(&m, sizeof m)) {
            fprintf(stderr, "FAIL mutation %d: status %s, message '%s'\n", it, swin_status_name(st), err.msg);
            ok = false;
        }
    }
    fprintf(stderr, "%d mutated copies: %d loaded, %d rejected cleanly\n", count, loaded, failed);
    free(data);
    free(copy);
    return check_true("every mutated copy loads or fails cleanly", ok);
}

int main(int argc, char **argv)
{
    if (argc == 5 && !strcmp(argv[1], "expect")) {
        int want = status_by_name(argv[3]);
        if (want < 0) {
            fprintf(stderr, "unknown status %s\n", argv[3]);
            return 2;
        }
        return test_exit(expect_fail(argv[2], want, argv[4]));
    }
    if (argc == 4 && !strcmp(argv[1], "generated")) return test_exit(generated(argv[2], argv[3]));
    if (argc == 5 && !strcmp(argv[1], "mutated")) return test_exit(mutated(argv[2], argv[3], atoi(argv[4])));
    fprintf(stderr, "usage: test_bad_files expect FILE STATUS SUBSTRING | generated VALID.onnx TMPDIR | mutated VALID.onnx TMPDIR N\n");
    return 2;
}
