/* libFuzzer harness: the pipeline's NIfTI reader (swin_image_read: swinrun's header check,
 * then nifti_clib) on the fuzzed bytes as a file named FUZZ_NIFTI_NAME: image.nii for
 * fuzz_nifti, image.nii.gz (the bytes are the compressed file) for fuzz_nifti_gz. */
#include <stdint.h>

#include "formats/nifti/nifti_io.h"
#include "tests/fuzz/harness/fuzz_input.h"
#include "tests/fuzz/harness/fuzz_status.h"

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
    const char *path = fuzz_input_write(FUZZ_NIFTI_NAME, bytes, size);
    struct swin_image img;
    swin_error err = {SWIN_OK, ""};
    swin_status st = swin_image_read(path, &img, &err);
    fuzz_check_error(st, &err);
    if (st == SWIN_OK) swin_image_free(&img);
    return 0;
}
