/* gzip members into a caller's buffer (gzip_read.h). */
#include "formats/gzip_read.h"

#include <libdeflate.h>
#include <stdbool.h>
#include <string.h>
#include <zlib.h>

static bool gzip_magic(const unsigned char *p, size_t n)
{
    return n >= 2 && p[0] == 0x1f && p[1] == 0x8b;
}

/* The first `want` bytes of the member at in (which holds more than that) through zlib's
 * inflate, which stops when out is full. zlib counts in uInt: at most 1 GiB at a time. */
static enum swin_gz_result inflate_part(const unsigned char *in, size_t in_n, unsigned char *out, size_t want,
                                        size_t *got)
{
    const size_t step = (size_t)1 << 30;
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 15 + 16) != Z_OK) return SWIN_GZ_NOMEM;
    enum swin_gz_result r = SWIN_GZ_OK;
    size_t in_at = 0, out_at = 0;
    while (out_at < want) {
        if (!z.avail_in) {
            z.next_in = (unsigned char *)in + in_at;
            z.avail_in = (uInt)(in_n - in_at < step ? in_n - in_at : step);
            in_at += z.avail_in;
        }
        z.next_out = out + out_at;
        z.avail_out = (uInt)(want - out_at < step ? want - out_at : step);
        const uInt before = z.avail_out;
        int rc = inflate(&z, Z_NO_FLUSH);
        out_at += before - z.avail_out;
        if (rc == Z_STREAM_END) { /* the member ends here: before want only if it was shorter after all */
            if (out_at < want) r = SWIN_GZ_SHORT;
            break;
        }
        if (rc == Z_BUF_ERROR && (z.avail_in || in_at < in_n)) continue; /* more input to give */
        if (rc != Z_OK) { /* corrupt, or the input ran out in the middle of the member */
            r = rc == Z_MEM_ERROR ? SWIN_GZ_NOMEM : SWIN_GZ_CORRUPT;
            break;
        }
    }
    inflateEnd(&z);
    *got = out_at;
    return r;
}

enum swin_gz_result swin_gz_read(const unsigned char *in, size_t in_n, unsigned char *out, size_t want, size_t *got)
{
    *got = 0;
    if (!gzip_magic(in, in_n)) { /* not gzip: the bytes as they are */
        *got = in_n < want ? in_n : want;
        memcpy(out, in, *got);
        return *got == want ? SWIN_GZ_OK : SWIN_GZ_SHORT;
    }
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    if (!d) return SWIN_GZ_NOMEM;
    enum swin_gz_result r = SWIN_GZ_SHORT;
    size_t at = 0;
    while (*got < want && gzip_magic(in + at, in_n - at)) {
        size_t used, made;
        enum libdeflate_result lr =
            libdeflate_gzip_decompress_ex(d, in + at, in_n - at, out + *got, want - *got, &used, &made);
        if (lr == LIBDEFLATE_INSUFFICIENT_SPACE) { /* this member holds the rest and more */
            r = inflate_part(in + at, in_n - at, out + *got, want - *got, &made);
            *got += made;
            break;
        }
        if (lr != LIBDEFLATE_SUCCESS) {
            r = SWIN_GZ_CORRUPT;
            break;
        }
        *got += made;
        at += used;
    }
    if (*got == want && r != SWIN_GZ_CORRUPT) r = SWIN_GZ_OK;
    libdeflate_free_decompressor(d);
    return r;
}
