/* Peak host memory of swin_onnx_load: the process's peak RSS (getrusage) after loading must
 * stay below its RSS before the load + 1.2 x the model's bytes on disk (model.onnx plus
 * model.onnx.data when present) + a small allowance for the allocator and the graph index.
 *
 *   test_load_rss model.onnx   prints the measurement; exit 0 when within the bound */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "tests/common/check.h"
#include "weights/onnx_loader.h"

#define ALLOWANCE_KB 4096

static long maxrss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;   /* kilobytes on Linux */
}

static long long file_bytes(const char *path)
{
    struct stat sb;
    return stat(path, &sb) ? 0 : (long long)sb.st_size;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_load_rss model.onnx\n");
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
    long bound = before + (long)(bytes * 12 / 10 / 1024) + ALLOWANCE_KB;
    fprintf(stderr, "model %lld bytes on disk (%.1f MiB), weights %zu bytes; peak RSS %ld KiB before load, %ld KiB after "
                    "(load added %ld KiB = %.3f x file size); bound %ld KiB\n",
            bytes, bytes / 1048576.0, m.flat_bytes, before, after, after - before, (after - before) * 1024.0 / (double)bytes, bound);
    ok &= check_true("peak RSS within 1.2 x file size + allowance", after <= bound);
    swin_model_release(&m);
    return test_exit(ok);
}
