/* Targets for the sanitizer detectors (registered only in -DSWIN_SANITIZE builds):
 *   test_emu_sanitize oob_global | oob_shared | misaligned | race | clean | overflow
 * The first four must make ASan, UBSan or TSan report (CTest matches the report);
 * `clean` must run without any report. `overflow` overflows a fiber stack, which the
 * emulator (or ASan) must name in any build. */
#include <stdio.h>
#include <string.h>

#include "tests/common/check.h"
#include "tests/cuemu/selftest/emu_util.h"
#include "tests/cuemu/selftest/k_detect.h"

int main(int argc, char **argv)
{
    static const char *const modes[] = {"clean", "oob_global", "oob_shared", "misaligned", "race", "overflow"};
    int mode = -1;
    for (int i = 0; i < 6 && argc > 1; i++)
        if (!strcmp(argv[1], modes[i]))
            mode = i;
    if (mode < 0) {
        fprintf(stderr, "usage: %s clean|oob_global|oob_shared|misaligned|race|overflow\n", argv[0]);
        return 2;
    }
    if (mode == 5) {
        float *d = emu_alloc(32 * sizeof(float));
        kd_stack_overflow(d); /* does not return */
        return 0;
    }
    float in[68], out[64];
    for (int i = 0; i < 68; i++)
        in[i] = (float)i;
    float *din = emu_upload(in, sizeof in), *dout = emu_alloc(sizeof out);
    bool ok = check_true("launch", kd_sanitize(din, dout, mode) == cudaSuccess);
    emu_download(out, dout, sizeof out);
    if (mode == 0) {
        int bad = 0;
        for (int i = 0; i < 64; i++)
            bad += out[i] != in[i];
        ok &= check_true("clean kernel output", bad == 0);
    }
    emu_free(din), emu_free(dout);
    return test_exit(ok);
}
