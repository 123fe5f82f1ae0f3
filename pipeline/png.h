/* Minimal PNG writer: 8-bit RGB, zlib-compressed, into a temporary file that the caller
 * publishes (fileio/atomic_file.h). */
#ifndef SWIN_PIPELINE_PNG_H
#define SWIN_PIPELINE_PNG_H

#include <stdint.h>

#include "fileio/atomic_file.h"
#include "core/status.h"

/* rgb: height rows of width * 3 bytes, top row first. Leaves *af finished, for the caller
 * to publish or abort (swin_atomic_file_publish, swin_atomic_file_abort); on failure nothing. */
swin_status swin_png_finish_rgb(struct swin_atomic_file *af, const char *path, const uint8_t *rgb, int width, int height,
                                swin_error *err);

#endif
