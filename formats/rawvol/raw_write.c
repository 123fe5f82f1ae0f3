/* The text-header volumes' writer (raw_write.h). The header goes first, with the stream's size
 * (where it has one) left as a run of spaces; the voxels are deflated as they come; finish
 * writes the size into that run. */
#include "formats/rawvol/raw_write.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fileio/atomic_file.h"

#define CHUNK (1 << 18)

struct swin_raw_writer {
    struct swin_atomic_file af;
    z_stream z;
    bool z_open;
    long size_at;          /* file offset of the stream's size in the header; -1: none */
    uint64_t compressed;   /* bytes of the stream written */
    uint8_t out[CHUNK];
};

void swin_raw_writer_abort(struct swin_raw_writer *w)
{
    if (!w) return;
    if (w->z_open) deflateEnd(&w->z);
    swin_atomic_file_abort(&w->af);
    free(w);
}

swin_status swin_raw_writer_open(struct swin_raw_writer **out, const char *path, swin_raw_header_writer header,
                                 bool gzip, const struct swin_raw_header *like, enum swin_raw_type type,
                                 int64_t volumes, swin_error *err)
{
    *out = NULL;
    struct swin_raw_writer *w = calloc(1, sizeof *w);
    if (!w) return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
    swin_status st = swin_atomic_file_open(&w->af, path, err);
    if (st) {
        free(w);
        return st;
    }
    header(w->af.f, like, type, volumes, &w->size_at);
    /* level 1: labels and probabilities compress well at the fastest level; window bits + 16:
     * a gzip wrapper instead of zlib's */
    if (deflateInit2(&w->z, 1, Z_DEFLATED, 15 + (gzip ? 16 : 0), 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        swin_raw_writer_abort(w);
        return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for the compressor");
    }
    w->z_open = true;
    *out = w;
    return SWIN_OK;
}

static swin_status pump(struct swin_raw_writer *w, int flush, swin_error *err)
{
    int r;
    do {
        w->z.next_out = w->out;
        w->z.avail_out = CHUNK;
        r = deflate(&w->z, flush);
        if (r == Z_STREAM_ERROR) return swin_error_set(err, SWIN_ERR_INTERNAL, "%s: deflate failed", w->af.dest);
        size_t n = CHUNK - w->z.avail_out;
        if (n && fwrite(w->out, 1, n, w->af.f) != n) return swin_atomic_file_write_failed(&w->af, errno, err);
        w->compressed += n;
    } while (w->z.avail_out == 0 || (flush == Z_FINISH && r != Z_STREAM_END));
    return SWIN_OK;
}

swin_status swin_raw_writer_write(struct swin_raw_writer *w, const void *data, size_t bytes, swin_error *err)
{
    const uint8_t *p = data;
    while (bytes) {
        const uInt n = bytes > (1u << 30) ? 1u << 30 : (uInt)bytes;
        w->z.next_in = (Bytef *)p;
        w->z.avail_in = n;
        swin_status st = pump(w, Z_NO_FLUSH, err);
        if (st) return st;
        p += n, bytes -= n;
    }
    return SWIN_OK;
}

swin_status swin_raw_writer_finish(struct swin_raw_writer *w, swin_error *err)
{
    swin_status st = pump(w, Z_FINISH, err);
    deflateEnd(&w->z);
    w->z_open = false;
    char digits[SWIN_RAW_SIZE_FIELD + 1];
    snprintf(digits, sizeof digits, "%llu", (unsigned long long)w->compressed);
    if (!st && w->size_at >= 0 &&
        (fseek(w->af.f, w->size_at, SEEK_SET) || fwrite(digits, 1, strlen(digits), w->af.f) != strlen(digits)))
        st = swin_atomic_file_write_failed(&w->af, errno, err);
    if (st) {
        swin_atomic_file_abort(&w->af);
        return st;
    }
    return swin_atomic_file_finish(&w->af, err);
}

swin_status swin_raw_writer_publish(struct swin_raw_writer *w, swin_error *err)
{
    swin_status st = swin_atomic_file_publish(&w->af, err);
    free(w);
    return st;
}
