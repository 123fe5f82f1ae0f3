/* The start of a .gz file held in memory, as zlib's gzread delivers it: the data of its gzip
 * members one after the other (RFC 1952 2.2: however many members, written by any tool), bytes
 * that do not start with the gzip magic as they are (gzread's transparent mode), and whatever
 * follows the last member that is not another member ignored. Each member is decompressed
 * whole by libdeflate straight into the caller's buffer; a member that holds more than is
 * still wanted goes through zlib's inflate, which can stop in the middle. A member's stored
 * size (ISIZE: its length mod 2^32) sizes nothing: the caller says how many bytes it wants and
 * holds room for them; libdeflate and zlib check ISIZE and the CRC of every member they
 * finish. */
#ifndef SWIN_FORMATS_GZIP_READ_H
#define SWIN_FORMATS_GZIP_READ_H

#include <stddef.h>

enum swin_gz_result {
    SWIN_GZ_OK,      /* out[0, want) filled */
    SWIN_GZ_SHORT,   /* the data end after *got bytes */
    SWIN_GZ_CORRUPT, /* the member after the first *got bytes is corrupt or cut short */
    SWIN_GZ_NOMEM,   /* no memory for a decompressor */
};

/* Fills out[0, want) from the file's bytes in[0, in_n); *got: the bytes delivered. */
enum swin_gz_result swin_gz_read(const unsigned char *in, size_t in_n, unsigned char *out, size_t want, size_t *got);

#endif
