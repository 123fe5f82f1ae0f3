/* Peak host memory of swin_onnx_load: the process's peak RSS (getrusage) after loading must
 * stay below its RSS before the load + 1.2 x the model's bytes on disk (model.onnx plus
 * model.onnx.data when present) + a small allowance for the allocator and the graph index.
 * A model storing its weights in 16 bits is held in float32: WIDEN 2 doubles the file's share.
 *
 *   test_load_rss model.onnx [WIDEN]   prints the measurement; exit 0 when within the bound */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "tests/common/check.h"
#include "weights/onnx/onnx_loader.h"

#define ALLOWANCE_KB 4096

static long maxrss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;   /* kilobytes on Linux */
}

/* Bytes the file occupies: a sparse external-data file (weights placed past 2 GiB) counts
 * what it holds, not its length. */
static long long file_bytes(const char *path)
{
    struct stat sb;
    if (stat(path, &sb)) return 0;
    long long held = (long long)sb.st_blocks * 512;
    return held < (long long)sb.st_size ? held : (long long)sb.st_size;
}

int main(int argc, char **argv)
{
    int widen = argc == 3 ? atoi(argv[2]) : 1;
    if (argc < 2 || argc > 3 || widen < 1 || widen > 2) {
        fprintf(stderr, "usage: test_load_rss model.onnx [WIDEN: 1 or 2]\n");
        return 2;
    }
    char data[4096];
    snprintf(data, sizeof data, "%s.data", argv[1]);
    long long bytes = file_bytes(argv[1]) + file_bytes(data);
    long before = maxrss_kb();
    struct swin_model m;
    swin_error err = {SWIN_OK, ""};
    swin_status st = swin_onnx_load(argv[1], &m, &err);
    long after = maxrss_kb();
    bool ok = check_true("model loads", st == SWIN_OK);
    if (st) fprintf(stderr, "  %s\n", err.msg);
    long bound = before + (long)(bytes * widen * 12 / 10 / 1024) + ALLOWANCE_KB;
    fprintf(stderr, "model %lld bytes on disk (%.1f MiB), weights %zu bytes; peak RSS %ld KiB before load, %ld KiB after "
                    "(load added %ld KiB = %.3f x file size); bound %ld KiB\n",
            bytes, bytes / 1048576.0, m.flat_bytes, before, after, after - before, (after - before) * 1024.0 / (double)bytes, bound);
    ok &= check_true("peak RSS within 1.2 x file size (x WIDEN) + allowance", after <= bound);
    swin_model_release(&m);
    return test_exit(ok);
}
