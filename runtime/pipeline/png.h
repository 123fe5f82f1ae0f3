/* Minimal PNG writer: 8-bit RGB, zlib-compressed, through a temporary file renamed at the
 * end (runtime/atomic_file.h). */
#ifndef SWIN_PIPELINE_PNG_H
#define SWIN_PIPELINE_PNG_H

#include <stdint.h>

#include "runtime/status.h"

/* rgb: height rows of width * 3 bytes, top row first. */
swin_status swin_png_write_rgb(const char *path, const uint8_t *rgb, int width, int height, swin_error *err);

#endif
