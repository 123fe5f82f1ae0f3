/* Host helpers for the emulator's tests: device allocation and copies that abort the
 * test on a CUDA error (these are set-up steps, not the thing under test). */
#ifndef TESTS_EMU_UTIL_H
#define TESTS_EMU_UTIL_H

#include <stddef.h>

void *emu_alloc(size_t bytes);
void *emu_upload(const void *host, size_t bytes);
void emu_download(void *host, const void *dev, size_t bytes);
void emu_free(void *dev);

#endif
