/* libFuzzer harness: a MONAI bundle folder whose configs/inference.EXT and configs/metadata.EXT
 * are both the fuzzed bytes (and whose models/ is empty): the JSON reader (fuzz_bundle, EXT json)
 * or the YAML reader (fuzz_bundle_yaml, EXT yaml), reference resolution, network_def, the recipe
 * and metadata's keys (monai_version, channel_def) read whole, then the load stops at the
 * missing weights. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/fuzz/harness/fuzz_input.h"
#include "tests/fuzz/harness/fuzz_status.h"
#include "weights/bundle/bundle.h"

#ifndef FUZZ_BUNDLE_EXT
#define FUZZ_BUNDLE_EXT "json"
#endif
#define INFERENCE "inference." FUZZ_BUNDLE_EXT
#define METADATA "metadata." FUZZ_BUNDLE_EXT

static char dir[4096];
static size_t n; /* the length of fuzz_input's folder path, with its '/' */

/* Runs before fuzz_input's own clean-up (atexit order), which then removes its folder. */
static void remove_bundle(void)
{
    strcpy(dir + n, "b/configs/" INFERENCE);
    unlink(dir);
    strcpy(dir + n, "b/configs/" METADATA);
    unlink(dir);
    strcpy(dir + n, "b/configs");
    rmdir(dir);
    strcpy(dir + n, "b");
    rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
    const char *path = fuzz_input_write(INFERENCE, bytes, size);
    /* the bundle: <folder>/b/configs/{inference,metadata}.EXT -> the fuzzed file */
    static bool registered;
    n = strlen(path) - strlen(INFERENCE);
    if (n + 32 > sizeof dir) abort();
    memcpy(dir, path, n);
    if (!registered) registered = !atexit(remove_bundle);
    strcpy(dir + n, "b");
    mkdir(dir, 0700);
    strcpy(dir + n, "b/configs");
    mkdir(dir, 0700);
    static const char *const configs[] = {"b/configs/" INFERENCE, "b/configs/" METADATA};
    for (int i = 0; i < 2; i++) {
        strcpy(dir + n, configs[i]);
        unlink(dir);
        if (symlink(path, dir)) abort();
    }
    dir[n + 1] = 0;
    struct swin_model m;
    swin_error err = {SWIN_OK, ""};
    swin_status st = swin_bundle_load(dir, NULL, &m, &err);
    fuzz_check_error(st, &err);
    if (st == SWIN_OK) swin_model_release(&m);
    return 0;
}
