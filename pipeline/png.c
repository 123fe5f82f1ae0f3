#include "pipeline/png.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static void be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

/* length, type, data, CRC-32 of type and data */
static void chunk(FILE *f, const char *type, const uint8_t *data, uint32_t n)
{
    uint8_t b[4];
    be32(b, n);
    fwrite(b, 1, 4, f);
    fwrite(type, 1, 4, f);
    if (n) fwrite(data, 1, n, f);
    uLong crc = crc32(0, (const Bytef *)type, 4);
    if (n) crc = crc32(crc, data, n);
    be32(b, (uint32_t)crc);
    fwrite(b, 1, 4, f);
}

swin_status swin_png_finish_rgb(struct swin_atomic_file *af, const char *path, const uint8_t *rgb, int width, int height,
                                swin_error *err)
{
    size_t stride = (size_t)width * 3, raw_n = (stride + 1) * (size_t)height;
    uint8_t *raw = malloc(raw_n);
    uLongf zn = compressBound((uLong)raw_n);
    uint8_t *z = malloc(zn);
    if (!raw || !z) {
        free(raw);
        free(z);
        return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for the preview");
    }
    for (int y = 0; y < height; y++) { /* filter type 0 (none) before each row */
        raw[(size_t)y * (stride + 1)] = 0;
        memcpy(raw + (size_t)y * (stride + 1) + 1, rgb + (size_t)y * stride, stride);
    }
    int zrc = compress2(z, &zn, raw, (uLong)raw_n, 6);
    free(raw);
    if (zrc != Z_OK) {
        free(z);
        return zrc == Z_MEM_ERROR ? swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for the preview")
                                  : swin_error_set(err, SWIN_ERR_INTERNAL, "zlib compress failed for the preview");
    }
    swin_status st = swin_atomic_file_open(af, path, err);
    if (st) {
        free(z);
        return st;
    }
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    uint8_t ihdr[13];
    be32(ihdr, (uint32_t)width);
    be32(ihdr + 4, (uint32_t)height);
    ihdr[8] = 8, ihdr[9] = 2, ihdr[10] = ihdr[11] = ihdr[12] = 0; /* 8-bit RGB, deflate, no interlace */
    fwrite(sig, 1, 8, af->f);
    chunk(af->f, "IHDR", ihdr, 13);
    chunk(af->f, "IDAT", z, (uint32_t)zn);
    chunk(af->f, "IEND", NULL, 0);
    free(z);
    return swin_atomic_file_finish(af, err); /* checks every write; removes the file on failure */
}
