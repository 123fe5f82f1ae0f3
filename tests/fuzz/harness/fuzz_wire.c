/* libFuzzer harness: the ONNX file's wire reader and indexer alone (swin_onnx_file_open, then
 * swin_onnx_index_build over what it indexed), without matching or binding the model; faster than
 * fuzz_onnx, so it gets deeper into the wire format. External data as in fuzz_onnx. */
#include <stdint.h>
#include <stdlib.h>

#include "tests/fuzz/harness/fuzz_input.h"
#include "tests/fuzz/harness/fuzz_status.h"
#include "weights/onnx/graph.h"
#include "weights/onnx/onnx_file.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_input_link_all(getenv("SWIN_FUZZ_ONNX_DATA"));
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
    const char *path = fuzz_input_write("model.onnx", bytes, size);
    struct swin_onnx_file f;
    swin_error err = {SWIN_OK, ""};
    swin_status st = swin_onnx_file_open(path, &f, &err);
    fuzz_check_error(st, &err);
    if (st) return 0;
    struct swin_onnx_index g;
    st = swin_onnx_index_build(&g, &f, &err);
    fuzz_check_error(st, &err);
    if (!st) swin_onnx_index_free(&g);
    swin_onnx_file_close(&f);
    return 0;
}
