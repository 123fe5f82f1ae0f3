/* The .mha writer (mha_write.h). The header goes first with CompressedDataSize left as a
 * run of spaces; the voxels are deflated as they come; finish writes the stream's size into
 * that run (MetaIO reads the number and ignores the spaces after it). */
#include "formats/metaimage/mha_write.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fileio/atomic_file.h"

#define SIZE_FIELD 20 /* characters kept for CompressedDataSize's digits */
#define CHUNK (1 << 18)

struct swin_mha_writer {
    struct swin_atomic_file af;
    z_stream z;
    bool z_open;
    long size_at;          /* file offset of CompressedDataSize's value */
    uint64_t compressed;   /* bytes of the stream written */
    uint8_t out[CHUNK];
};

static const char *type_name(enum swin_mha_type t)
{
    return t == SWIN_MHA_UCHAR ? "MET_UCHAR" : t == SWIN_MHA_USHORT ? "MET_USHORT" : "MET_FLOAT";
}

/* The header of like's grid with `volumes` volumes. */
static void header(FILE *f, const struct swin_mha_header *like, enum swin_mha_type type, int64_t volumes,
                   long *size_at)
{
    const int nd = volumes > 1 ? 4 : 3;
    fprintf(f, "ObjectType = Image\nNDims = %d\nBinaryData = True\nBinaryDataByteOrderMSB = False\n"
               "CompressedData = True\nCompressedDataSize = ", nd);
    *size_at = ftell(f);
    fprintf(f, "%*s\nTransformMatrix =", SIZE_FIELD, "");
    for (int a = 0; a < nd; a++)
        for (int b = 0; b < nd; b++) fprintf(f, " %.17g", a < 3 && b < 3 ? like->direction[a][b] : (double)(a == b));
    fprintf(f, "\nOffset =");
    for (int a = 0; a < nd; a++) fprintf(f, " %.17g", a < 3 ? like->offset[a] : 0.0);
    fprintf(f, "\nElementSpacing =");
    for (int a = 0; a < nd; a++) fprintf(f, " %.17g", a < 3 ? like->spacing[a] : 1.0);
    fprintf(f, "\nDimSize =");
    for (int a = 0; a < nd; a++) fprintf(f, " %lld", (long long)(a < 3 ? like->dim[a] : volumes));
    fprintf(f, "\nElementType = %s\nElementDataFile = LOCAL\n", type_name(type));
}

void swin_mha_writer_abort(struct swin_mha_writer *w)
{
    if (!w) return;
    if (w->z_open) deflateEnd(&w->z);
    swin_atomic_file_abort(&w->af);
    free(w);
}

swin_status swin_mha_writer_open(struct swin_mha_writer **out, const char *path, const struct swin_mha_header *like,
                                 enum swin_mha_type type, int64_t volumes, swin_error *err)
{
    *out = NULL;
    struct swin_mha_writer *w = calloc(1, sizeof *w);
    if (!w) return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
    swin_status st = swin_atomic_file_open(&w->af, path, err);
    if (st) {
        free(w);
        return st;
    }
    header(w->af.f, like, type, volumes, &w->size_at);
    /* level 1: labels and probabilities compress well at the fastest level */
    if (deflateInit(&w->z, 1) != Z_OK) {
        swin_mha_writer_abort(w);
        return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for the compressor");
    }
    w->z_open = true;
    *out = w;
    return SWIN_OK;
}

static swin_status pump(struct swin_mha_writer *w, int flush, swin_error *err)
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

swin_status swin_mha_writer_write(struct swin_mha_writer *w, const void *data, size_t bytes, swin_error *err)
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

swin_status swin_mha_writer_finish(struct swin_mha_writer *w, swin_error *err)
{
    swin_status st = pump(w, Z_FINISH, err);
    deflateEnd(&w->z);
    w->z_open = false;
    char digits[SIZE_FIELD + 1];
    snprintf(digits, sizeof digits, "%llu", (unsigned long long)w->compressed);
    if (!st && (fseek(w->af.f, w->size_at, SEEK_SET) || fwrite(digits, 1, strlen(digits), w->af.f) != strlen(digits)))
        st = swin_atomic_file_write_failed(&w->af, errno, err);
    if (st) {
        swin_atomic_file_abort(&w->af);
        return st;
    }
    return swin_atomic_file_finish(&w->af, err);
}

swin_status swin_mha_writer_publish(struct swin_mha_writer *w, swin_error *err)
{
    swin_status st = swin_atomic_file_publish(&w->af, err);
    free(w);
    return st;
}
