/* Text-header volumes' voxels (raw_read.h): read whole, inflated when compressed, widened to
 * float32 and de-interleaved (the file holds a voxel's components together, i fastest, then
 * j, k, the fourth axis last); 1- and 2-byte values also kept as they are, for the planes
 * wanted after the float32 copy is gone. */
#include "formats/rawvol/raw_read.h"

#include "formats/gzip_read.h"

#include <errno.h>
#include <fcntl.h>
#include <libdeflate.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static swin_status read_at(int fd, const char *path, void *buf, size_t n, int64_t at, swin_error *err)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(at + (int64_t)got));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return swin_error_set(err, SWIN_ERR_IO, "%s: cannot read: %s", path, strerror(errno));
        if (r == 0)
            return swin_error_set(err, SWIN_ERR_FORMAT, "%s: truncated: %zu of the %zu bytes of voxels", path,
                                  got, n);
        got += (size_t)r;
    }
    return SWIN_OK;
}

/* The compressed stream (zlib, as ITK's MetaImage writes it, or gzip) inflated into exactly n
 * bytes. A gzip stream may be several members one after the other (RFC 1952 2.2; concatenated
 * or block-wise gzip tools write them), which teem and ITK read as one stream through zlib's
 * gzread: it goes through formats/gzip_read.h, member after member, since
 * libdeflate_gzip_decompress alone stops after the first. */
static swin_status inflate_voxels(const char *path, const uint8_t *in, size_t in_n, void *out, size_t n,
                                  swin_error *err)
{
    size_t got = 0;
    const char *why;
    if (in_n >= 2 && in[0] == 0x1f && in[1] == 0x8b) {
        enum swin_gz_result r = swin_gz_read(in, in_n, out, n, &got);
        if (r == SWIN_GZ_NOMEM) return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
        if (r == SWIN_GZ_OK) return SWIN_OK;
        why = r == SWIN_GZ_SHORT ? "fewer than the header's size" : "corrupt or truncated";
    } else {
        struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
        if (!d) return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
        enum libdeflate_result r = libdeflate_zlib_decompress(d, in, in_n, out, n, &got);
        libdeflate_free_decompressor(d);
        if (r == LIBDEFLATE_SUCCESS && got == n) return SWIN_OK;
        why = r == LIBDEFLATE_INSUFFICIENT_SPACE ? "more than the header's size"
              : r == LIBDEFLATE_SUCCESS          ? "fewer than the header's size"
                                                 : "corrupt or truncated";
    }
    return swin_error_set(err, SWIN_ERR_FORMAT,
                          "%s: the compressed voxels are %s (the header's sizes and type need %zu bytes)", path, why, n);
}

static double value_at(const uint8_t *p, enum swin_raw_type t, int bytes, bool swap)
{
    uint8_t b[8];
    for (int i = 0; i < bytes; i++) b[i] = swap ? p[bytes - 1 - i] : p[i];
    switch (t) {
    case SWIN_RAW_UINT8: return b[0];
    case SWIN_RAW_INT8: return (int8_t)b[0];
    case SWIN_RAW_UINT16: { uint16_t v; memcpy(&v, b, 2); return v; }
    case SWIN_RAW_INT16: { int16_t v; memcpy(&v, b, 2); return v; }
    case SWIN_RAW_UINT32: { uint32_t v; memcpy(&v, b, 4); return v; }
    case SWIN_RAW_INT32: { int32_t v; memcpy(&v, b, 4); return v; }
    case SWIN_RAW_UINT64: { uint64_t v; memcpy(&v, b, 8); return (double)v; }
    case SWIN_RAW_INT64: { int64_t v; memcpy(&v, b, 8); return (double)v; }
    case SWIN_RAW_FLOAT32: { float v; memcpy(&v, b, 4); return v; }
    case SWIN_RAW_FLOAT64: { double v; memcpy(&v, b, 8); return v; }
    }
    return 0;
}

#define WIDEN_RUN(T)                                                                                          \
    for (size_t i = 0; i < count; i++) out[i] = (float)((const T *)raw)[i];                                   \
    return true;

/* count values of this host's byte order and one component each, widened without a switch per
 * value (int16 CTs are most inputs); false where the general path must go (64-bit values, or a
 * float32 NaN / infinity, which it names). raw is malloc'd: aligned for any type. */
static bool widen_native(const uint8_t *raw, enum swin_raw_type t, size_t count, float *out)
{
    switch (t) {
    case SWIN_RAW_UINT8: WIDEN_RUN(uint8_t)
    case SWIN_RAW_INT8: WIDEN_RUN(int8_t)
    case SWIN_RAW_UINT16: WIDEN_RUN(uint16_t)
    case SWIN_RAW_INT16: WIDEN_RUN(int16_t)
    case SWIN_RAW_UINT32: WIDEN_RUN(uint32_t)
    case SWIN_RAW_INT32: WIDEN_RUN(int32_t)
    case SWIN_RAW_FLOAT32: {
        bool finite = true;
        for (size_t i = 0; i < count; i++) {
            const float x = ((const float *)raw)[i];
            finite &= isfinite(x) != 0;
            out[i] = x;
        }
        return finite;
    }
    default: return false;
    }
}

/* raw (the file's values; in host order where swap is false) -> img->data, channel after channel. */
static swin_status widen(const char *path, const uint8_t *raw, bool swap, struct swin_raw_image *img, swin_error *err)
{
    const struct swin_raw_header *h = &img->h;
    const size_t n = (size_t)(h->dim[0] * h->dim[1] * h->dim[2]), comps = (size_t)h->components;
    /* one component: the file's order is data's, volume after volume */
    if (!swap && comps == 1 && widen_native(raw, h->type, n * (size_t)h->dim[3], img->data)) return SWIN_OK;
    for (size_t t = 0; t < (size_t)h->dim[3]; t++)
        for (size_t v = 0; v < n; v++)
            for (size_t c = 0; c < comps; c++) {
                const size_t at = (t * n + v) * comps + c;
                const double x = value_at(raw + at * (size_t)h->type_bytes, h->type, h->type_bytes, swap);
                if (!isfinite(x) || fabs(x) > 3.0e38)
                    return swin_error_set(err, SWIN_ERR_FORMAT,
                                          "%s: voxel %zu holds %s: not an image swinrun can segment", path, v,
                                          isnan(x) ? "NaN" : "an infinite value");
                img->data[(t * comps + c) * n + v] = (float)x;
            }
    return SWIN_OK;
}

/* The file's values, raw (raw_n bytes) from the data file. */
static swin_status read_raw(const struct swin_raw_header *h, uint8_t *raw, size_t raw_n, size_t *held,
                            swin_error *err)
{
    const char *path = h->data_path;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return swin_error_set(err, SWIN_ERR_IO, "%s: cannot open the voxels' file: %s", path, strerror(errno));
    struct stat sb;
    swin_status st = fstat(fd, &sb) ? swin_error_set(err, SWIN_ERR_IO, "%s: %s", path, strerror(errno)) : SWIN_OK;
    const int64_t size = st ? 0 : (int64_t)sb.st_size;
    int64_t at = h->data_offset;
    if (!st && !h->compressed) {
        if (at < 0) at = size - (int64_t)raw_n; /* HeaderSize = -1: the voxels end the file */
        if (at < 0 || at > size)
            st = swin_error_set(err, SWIN_ERR_FORMAT, "%s: truncated: %lld bytes, the voxels need %zu", path,
                                (long long)size, raw_n);
        else
            st = read_at(fd, path, raw, raw_n, at, err);
    } else if (!st) {
        int64_t left = size - at, csize = h->compressed_size < 0 ? left : h->compressed_size;
        if (at > size || csize > left)
            st = swin_error_set(err, SWIN_ERR_FORMAT, "%s: truncated: the header says %lld compressed bytes, %lld are there",
                                path, (long long)csize, (long long)(at > size ? 0 : left));
        uint8_t *z = st ? NULL : malloc((size_t)csize + 1);
        if (!st && !z) st = swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for %s's compressed voxels", path);
        if (!st) st = read_at(fd, path, z, (size_t)csize, at, err);
        if (!st) st = inflate_voxels(path, z, (size_t)csize, raw, raw_n, err);
        *held = (size_t)csize;
        free(z);
    }
    close(fd);
    return st;
}

/* Before anything large is allocated: the data file can hold raw_n bytes of voxels (deflate
 * shrinks data at most 1032-fold). */
static swin_status plausible(const struct swin_raw_header *h, size_t raw_n, swin_error *err)
{
    struct stat sb;
    if (stat(h->data_path, &sb))
        return swin_error_set(err, SWIN_ERR_IO, "%s: cannot open the voxels' file: %s", h->data_path, strerror(errno));
    const double there = (double)sb.st_size - (double)(h->data_offset > 0 ? h->data_offset : 0);
    const double need = h->compressed ? (double)raw_n / 1032.0 : (double)raw_n;
    if (there < need)
        return swin_error_set(err, SWIN_ERR_FORMAT,
                              "%s: truncated: %.0f bytes of voxels, the header's sizes and type need %s%zu",
                              h->data_path, there > 0 ? there : 0.0, h->compressed ? "(inflated) " : "", raw_n);
    return SWIN_OK;
}

swin_status swin_raw_read(const char *path, const struct swin_raw_header *header, struct swin_raw_image *img,
                          swin_error *err)
{
    memset(img, 0, sizeof *img);
    img->h = *header;
    swin_status st;
    const struct swin_raw_header *h = &img->h;
    img->channels = (int)h->dim[3] * h->components;
    const size_t values = (size_t)(h->dim[0] * h->dim[1] * h->dim[2]) * (size_t)img->channels;
    const size_t raw_n = values * (size_t)h->type_bytes;
    if ((st = plausible(h, raw_n, err))) return st;
    uint8_t *raw = malloc(raw_n);
    img->data = malloc(values * sizeof *img->data);
    if (!raw || !img->data) st = swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for %s's voxels", path);
    size_t compressed = 0;
    if (!st) st = read_raw(h, raw, raw_n, &compressed, err);
    /* 1- or 2-byte values of one component stay (in host order) beside their float32 copy */
    const bool keep = h->type_bytes <= 2 && h->components == 1;
    bool swap = h->msb; /* swinrun's hosts are little-endian */
    if (!st && keep && swap) {
        for (size_t i = 0; h->type_bytes == 2 && i < values; i++) {
            const uint8_t b = raw[2 * i];
            raw[2 * i] = raw[2 * i + 1], raw[2 * i + 1] = b;
        }
        swap = false;
    }
    if (!st) st = widen(path, raw, swap, img, err);
    img->read_peak = raw_n + values * sizeof *img->data + compressed;
    if (!st && keep) {
        const size_t first = values / (size_t)img->channels * (size_t)h->type_bytes;
        uint8_t *kept = realloc(raw, first); /* the first channel; where the shrink fails, all of raw */
        img->narrow = kept ? kept : raw;
        raw = NULL;
    }
    free(raw);
    if (st) swin_raw_image_free(img);
    return st;
}

size_t swin_raw_narrow_bytes(const struct swin_raw_image *img)
{
    return img->narrow ? (size_t)(img->h.dim[0] * img->h.dim[1] * img->h.dim[2]) * (size_t)img->h.type_bytes : 0;
}

void swin_raw_image_plane(const struct swin_raw_image *img, int64_t k, float *out)
{
    const size_t np = (size_t)(img->h.dim[0] * img->h.dim[1]), at = (size_t)k * np;
    const uint8_t *v = (const uint8_t *)img->narrow + at * (size_t)img->h.type_bytes;
    widen_native(v, img->h.type, np, out); /* 1- or 2-byte values: always widened here */
}

void swin_raw_image_drop_data(struct swin_raw_image *img)
{
    if (!img->narrow) return;
    free(img->data);
    img->data = NULL;
}

void swin_raw_image_free(struct swin_raw_image *img)
{
    free(img->data);
    free(img->narrow);
    img->data = NULL;
    img->narrow = NULL;
}

swin_mat4 swin_raw_affine(const struct swin_raw_header *h)
{
    swin_mat4 a = swin_mat4_identity();
    for (int r = 0; r < 3; r++) {
        const double ras = r < 2 ? -1.0 : 1.0; /* LPS -> RAS */
        for (int ax = 0; ax < 3; ax++) a.m[r][ax] = ras * h->direction[ax][r] * h->spacing[ax];
        a.m[r][3] = ras * h->offset[r];
    }
    return a;
}
