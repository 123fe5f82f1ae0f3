/* The readers under fuzzing take paths, so each harness writes the fuzzed bytes to a file
 * in a folder of its own process, in /dev/shm (a tmpfs) when there is one. The folder and
 * what was written or linked into it are removed when the process exits normally. */
#ifndef SWIN_FUZZ_INPUT_H
#define SWIN_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>

/* Writes [data, data + size) to the file `name` in the folder and returns its path; aborts
 * (a harness failure, not a finding) when the folder or the file cannot be written. */
const char *fuzz_input_write(const char *name, const uint8_t *data, size_t size);

/* Links every file of the folder `from` into the folder under its own name: side files
 * the fuzzed bytes refer to, such as an ONNX model's external data. Nothing when `from`
 * is NULL. */
void fuzz_input_link_all(const char *from);

#endif
