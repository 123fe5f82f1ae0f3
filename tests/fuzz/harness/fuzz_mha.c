/* libFuzzer harness: the MetaImage reader (swin_mha_header_read, then swin_raw_read: the
 * voxels read, inflated and widened) on the fuzzed bytes as image.mha; a header naming a voxel
 * file beside it finds none but image.mha itself. */
#include <stdint.h>

#include "formats/metaimage/mha_header.h"
#include "formats/rawvol/raw_read.h"
#include "tests/fuzz/harness/fuzz_input.h"
#include "tests/fuzz/harness/fuzz_status.h"

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
    const char *path = fuzz_input_write("image.mha", bytes, size);
    struct swin_raw_header h;
    struct swin_raw_image img;
    swin_error err = {SWIN_OK, ""};
    swin_status st = swin_mha_header_read(path, &h, &err);
    if (st == SWIN_OK) st = swin_raw_read(path, &h, &img, &err);
    fuzz_check_error(st, &err);
    if (st == SWIN_OK) swin_raw_image_free(&img);
    return 0;
}
