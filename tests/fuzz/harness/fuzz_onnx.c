/* libFuzzer harness: the whole ONNX loader (swin_onnx_load) on the fuzzed bytes as
 * model.onnx. The seeds keep their weights in external-data files (tools/ci/fuzz_seeds.py),
 * linked next to the input from the folder $SWIN_FUZZ_ONNX_DATA, so the fuzzed bytes are
 * the graph and a graph that still matches gets its weights bound. */
#include <stdint.h>
#include <stdlib.h>

#include "core/model.h"
#include "tests/fuzz/harness/fuzz_input.h"
#include "tests/fuzz/harness/fuzz_status.h"
#include "weights/onnx/onnx_loader.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_input_link_all(getenv("SWIN_FUZZ_ONNX_DATA"));
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
    const char *path = fuzz_input_write("model.onnx", bytes, size);
    struct swin_model m;
    swin_error err = {SWIN_OK, ""};
    swin_status st = swin_onnx_load(path, &m, &err);
    fuzz_check_error(st, &err);
    if (st == SWIN_OK) swin_model_release(&m);
    return 0;
}
