/* A reader of the zip container torch.save writes: stored (uncompressed) entries only,
 * ZIP64 records, every offset and length checked against the file before it is used.
 *
 * Storages are read only when stored: swin_zip_read refuses a compressed entry. The one
 * decompression is swin_zip_inflate, of a deflated entry into a caller's buffer of its declared
 * size, for text torch.jit.save deflates (the TorchScript code): its output cannot exceed that
 * buffer, however the bytes are crafted. Refused:
 * encrypted entries, names that are empty, absolute, hold a `..`
 * component, a backslash or a control byte, duplicate names, entries that overlap each
 * other or the central directory (the trick of non-recursive zip bombs), and a local header
 * that disagrees with the central directory. Nothing is allocated beyond what the central
 * directory's bytes in the file can describe. */
#ifndef SWIN_WEIGHTS_ZIP_READER_H
#define SWIN_WEIGHTS_ZIP_READER_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

struct swin_zip_entry {
    char *name;
    uint64_t data_off;   /* where the entry's bytes start in the file */
    uint64_t size;       /* bytes in the file */
    uint64_t usize;      /* bytes once inflated, as the central directory declares them (size when stored) */
    int method;          /* 0 stored, 8 deflated; any other is indexed (names tell what the archive is) but never read */
};

struct swin_zip {
    const char *path;
    int fd;
    uint64_t file_size;
    struct swin_zip_entry *entries;
    int n;
};

/* Indexes the archive at path, which fd holds open for reading (the caller keeps owning fd). */
swin_status swin_zip_open(const char *path, int fd, uint64_t file_size, struct swin_zip *z, swin_error *err);
void swin_zip_close(struct swin_zip *z);

/* The entry called name, NULL when there is none. */
const struct swin_zip_entry *swin_zip_find(const struct swin_zip *z, const char *name);

/* Reads len bytes from offset off of entry e (off + len within the entry). */
swin_status swin_zip_read(const struct swin_zip *z, const struct swin_zip_entry *e, uint64_t off, size_t len, void *dst,
                          swin_error *err);

/* The whole entry e, stored or deflated, into dst (cap bytes); *len: e->usize. Fails where
 * usize exceeds cap or the deflate stream does not inflate to exactly usize bytes. */
swin_status swin_zip_inflate(const struct swin_zip *z, const struct swin_zip_entry *e, void *dst, size_t cap, size_t *len,
                             swin_error *err);

/* pread of exactly len bytes at off of fd, failing with a message naming path. */
swin_status swin_pread_exact(int fd, const char *path, uint64_t off, size_t len, void *dst, swin_error *err);

#endif
