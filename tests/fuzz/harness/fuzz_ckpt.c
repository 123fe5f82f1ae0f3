/* libFuzzer harness: swin_ckpt_load, the whole checkpoint path on the fuzzed bytes as a file:
 * content detection, the zip reader, the pickle interpreter, the safetensors header, the state
 * dict walk and the binding of whatever matches; a TorchScript module holding a bundle's
 * configs (extra/inference.json) goes through swin_bundle_load, as swin_model_load sends it. */
#include <stdint.h>

#include "tests/fuzz/harness/fuzz_input.h"
#include "tests/fuzz/harness/fuzz_status.h"
#include "weights/bundle/bundle.h"
#include "weights/checkpoint/ckpt_loader.h"

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
    const char *path = fuzz_input_write("model.pt", bytes, size);
    struct swin_model m;
    swin_error err = {SWIN_OK, ""};
    swin_status st = swin_bundle_detect(path) ? swin_bundle_load(path, NULL, &m, &err) : swin_ckpt_load(path, NULL, &m, &err);
    fuzz_check_error(st, &err);
    if (st == SWIN_OK) swin_model_release(&m);
    return 0;
}
