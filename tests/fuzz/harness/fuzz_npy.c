/* libFuzzer harness: the .npy reader (swin_npy_read_f32) on the fuzzed bytes as input.npy. */
#include <stdint.h>
#include <stdlib.h>

#include "fileio/npy.h"
#include "tests/fuzz/harness/fuzz_input.h"
#include "tests/fuzz/harness/fuzz_status.h"

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
    const char *path = fuzz_input_write("input.npy", bytes, size);
    struct swin_npy_array a;
    swin_error err = {SWIN_OK, ""};
    swin_status st = swin_npy_read_f32(path, &a, &err);
    fuzz_check_error(st, &err);
    if (st == SWIN_OK) free(a.data);
    return 0;
}
