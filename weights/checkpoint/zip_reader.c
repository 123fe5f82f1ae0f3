#include "weights/checkpoint/zip_reader.h"

#include <libdeflate.h>

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_EOCD 0x06054b50u
#define SIG_EOCD64 0x06064b50u
#define SIG_LOC64 0x07064b50u
#define EOCD_LEN 22
#define CENTRAL_LEN 46
#define LOCAL_LEN 30
#define MAX_COMMENT 65535u
#define MAX_ENTRIES 1000000

static uint16_t u16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t u32(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t u64(const unsigned char *p) { return (uint64_t)u32(p) | (uint64_t)u32(p + 4) << 32; }

swin_status swin_pread_exact(int fd, const char *path, uint64_t off, size_t len, void *dst, swin_error *err)
{
    unsigned char *d = dst;
    while (len) {
        ssize_t k = pread(fd, d, len, (off_t)off);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0)
            return swin_error_set(err, SWIN_ERR_IO, "%s: read failed at byte %llu: %s", path, (unsigned long long)off,
                                  k < 0 ? strerror(errno) : "unexpected end of file");
        d += k;
        off += (uint64_t)k;
        len -= (size_t)k;
    }
    return SWIN_OK;
}

#define FAIL(...) swin_error_set(err, SWIN_ERR_FORMAT, __VA_ARGS__)

/* Finds the end-of-central-directory record in the file's last 64 KiB + 22 bytes: the last
 * signature whose comment length reaches exactly to the end of the file. */
static swin_status find_eocd(const struct swin_zip *z, uint64_t *eocd, unsigned char rec[EOCD_LEN], swin_error *err)
{
    if (z->file_size < EOCD_LEN) return FAIL("%s: not a zip archive (%llu bytes)", z->path, (unsigned long long)z->file_size);
    uint64_t tail = z->file_size < EOCD_LEN + MAX_COMMENT ? z->file_size : EOCD_LEN + MAX_COMMENT;
    unsigned char *buf = malloc((size_t)tail);
    if (!buf) return swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of host memory", z->path);
    swin_status st = swin_pread_exact(z->fd, z->path, z->file_size - tail, (size_t)tail, buf, err);
    if (st) {
        free(buf);
        return st;
    }
    for (uint64_t i = tail - EOCD_LEN + 1; i-- > 0;) {
        if (u32(buf + i) == SIG_EOCD && i + EOCD_LEN + u16(buf + i + 20) == tail) {
            memcpy(rec, buf + i, EOCD_LEN);
            *eocd = z->file_size - tail + i;
            free(buf);
            return SWIN_OK;
        }
    }
    free(buf);
    return FAIL("%s: not a zip archive (no end-of-central-directory record)", z->path);
}

/* A name a reader may safely treat as a relative path. */
static bool safe_name(const char *s, size_t n)
{
    if (!n || s[0] == '/') return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f || c == '\\' || c == ':') return false;
        bool start = i == 0 || s[i - 1] == '/';
        if (start && c == '.' && i + 1 < n && s[i + 1] == '.' && (i + 2 == n || s[i + 2] == '/')) return false;
    }
    return true;
}

static int by_offset(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct swin_zip_entry *)a)->name, ((const struct swin_zip_entry *)b)->name);
}

/* Values of the ZIP64 extra field (id 1) for the fields that hold 0xffffffff, in the order
 * the format gives them. */
static swin_status zip64_extra(const struct swin_zip *z, const unsigned char *ex, size_t exlen, uint64_t *usize, uint64_t *csize,
                               uint64_t *local, swin_error *err)
{
    for (size_t p = 0; p + 4 <= exlen;) {
        uint16_t id = u16(ex + p), len = u16(ex + p + 2);
        if (p + 4 + len > exlen) break;
        if (id == 1) {
            const unsigned char *v = ex + p + 4;
            size_t k = 0;
            uint64_t *fields[3] = {usize, csize, local};
            for (int i = 0; i < 3; i++) {
                if (!fields[i] || *fields[i] != 0xffffffffu) continue;
                if (k + 8 > len) return FAIL("%s: a ZIP64 extra field is shorter than the sizes it stands for", z->path);
                *fields[i] = u64(v + k);
                k += 8;
            }
            return SWIN_OK;
        }
        p += 4 + (size_t)len;
    }
    if ((usize && *usize == 0xffffffffu) || (csize && *csize == 0xffffffffu) || (local && *local == 0xffffffffu))
        return FAIL("%s: an entry's size or offset is 0xffffffff without a ZIP64 extra field", z->path);
    return SWIN_OK;
}

static swin_status read_central(struct swin_zip *z, uint64_t cd_off, uint64_t cd_size, uint64_t count, swin_error *err)
{
    if (count > MAX_ENTRIES || count * CENTRAL_LEN > cd_size)
        return FAIL("%s: the central directory claims %llu entries in %llu bytes", z->path, (unsigned long long)count,
                    (unsigned long long)cd_size);
    unsigned char *cd = malloc((size_t)(cd_size ? cd_size : 1));
    z->entries = calloc((size_t)(count ? count : 1), sizeof *z->entries);
    uint64_t *spans = calloc((size_t)(count ? count : 1), 2 * sizeof *spans);
    swin_status st = SWIN_OK;
    if (!cd || !z->entries || !spans) {
        st = swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of host memory", z->path);
        goto out;
    }
    if ((st = swin_pread_exact(z->fd, z->path, cd_off, (size_t)cd_size, cd, err))) goto out;
    uint64_t p = 0;
    for (uint64_t i = 0; i < count; i++) {
        if (p + CENTRAL_LEN > cd_size || u32(cd + p) != SIG_CENTRAL) {
            st = FAIL("%s: central directory entry %llu is corrupt", z->path, (unsigned long long)i);
            goto out;
        }
        const unsigned char *h = cd + p;
        uint16_t flags = u16(h + 8), method = u16(h + 10), nlen = u16(h + 28), xlen = u16(h + 30), clen = u16(h + 32);
        uint64_t csize = u32(h + 20), usize = u32(h + 24), local = u32(h + 42);
        if (p + CENTRAL_LEN + nlen + xlen + clen > cd_size) {
            st = FAIL("%s: central directory entry %llu runs past the directory", z->path, (unsigned long long)i);
            goto out;
        }
        const char *name = (const char *)h + CENTRAL_LEN;
        struct swin_zip_entry *e = &z->entries[z->n];
        if (!(e->name = malloc((size_t)nlen + 1))) {
            st = swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of host memory", z->path);
            goto out;
        }
        memcpy(e->name, name, nlen);
        e->name[nlen] = 0;
        z->n++;
        if (!safe_name(name, nlen) || strlen(e->name) != nlen) {
            st = FAIL("%s: zip entry %llu has an unsafe name (empty, absolute, '..', or control characters)", z->path,
                      (unsigned long long)i);
            goto out;
        }
        if (flags & 1) {
            st = FAIL("%s: zip entry '%s' is encrypted", z->path, e->name);
            goto out;
        }
        if ((st = zip64_extra(z, h + CENTRAL_LEN + nlen, xlen, &usize, &csize, &local, err))) goto out;
        if (method == 0 && csize != usize) {
            st = FAIL("%s: stored zip entry '%s' has different compressed and uncompressed sizes", z->path, e->name);
            goto out;
        }
        if (local > cd_off || LOCAL_LEN > cd_off - local) {
            st = FAIL("%s: zip entry '%s' has its local header outside the archive's data", z->path, e->name);
            goto out;
        }
        unsigned char lh[LOCAL_LEN];
        if ((st = swin_pread_exact(z->fd, z->path, local, LOCAL_LEN, lh, err))) goto out;
        uint64_t data = local + LOCAL_LEN + u16(lh + 26) + u16(lh + 28);
        if (u32(lh) != SIG_LOCAL || u16(lh + 8) != method || u16(lh + 26) != nlen) {
            st = FAIL("%s: zip entry '%s': the local header disagrees with the central directory", z->path, e->name);
            goto out;
        }
        if (data > cd_off || csize > cd_off - data) {
            st = FAIL("%s: zip entry '%s' (%llu bytes) runs past the archive's data", z->path, e->name, (unsigned long long)csize);
            goto out;
        }
        char lname[256];
        for (uint16_t done = 0; done < nlen;) {
            uint16_t k = (uint16_t)(nlen - done < (int)sizeof lname ? nlen - done : (int)sizeof lname);
            if ((st = swin_pread_exact(z->fd, z->path, local + LOCAL_LEN + done, k, lname, err))) goto out;
            if (memcmp(lname, e->name + done, k)) {
                st = FAIL("%s: zip entry '%s': the local header names another file", z->path, e->name);
                goto out;
            }
            done += k;
        }
        e->data_off = data;
        e->size = csize;
        e->usize = usize;
        e->method = method;
        spans[2 * i] = local;
        spans[2 * i + 1] = data + csize;
        p += CENTRAL_LEN + nlen + xlen + clen;
    }
    qsort(spans, (size_t)count, 2 * sizeof *spans, by_offset);
    for (uint64_t i = 1; i < count; i++)
        if (spans[2 * i] < spans[2 * i - 1]) {
            st = FAIL("%s: zip entries overlap (two entries share bytes at offset %llu)", z->path, (unsigned long long)spans[2 * i]);
            goto out;
        }
    qsort(z->entries, (size_t)z->n, sizeof *z->entries, by_name);
    for (int i = 1; i < z->n; i++)
        if (!strcmp(z->entries[i].name, z->entries[i - 1].name)) {
            st = FAIL("%s: the zip archive holds '%s' twice", z->path, z->entries[i].name);
            goto out;
        }
out:
    free(cd);
    free(spans);
    return st;
}

swin_status swin_zip_open(const char *path, int fd, uint64_t file_size, struct swin_zip *z, swin_error *err)
{
    memset(z, 0, sizeof *z);
    z->path = path;
    z->fd = fd;
    z->file_size = file_size;
    unsigned char r[EOCD_LEN] = {0};
    uint64_t eocd = 0;
    swin_status st = find_eocd(z, &eocd, r, err);
    if (st) return st;
    uint64_t count = u16(r + 10), cd_size = u32(r + 12), cd_off = u32(r + 16), end = eocd;
    if ((u16(r + 4) && u16(r + 4) != 0xffff) || (u16(r + 6) && u16(r + 6) != 0xffff) || u16(r + 8) != u16(r + 10))
        return FAIL("%s: multi-disk zip archives are not supported", path);
    if (count == 0xffff || cd_size == 0xffffffffu || cd_off == 0xffffffffu) {
        unsigned char loc[20], e64[56];
        if (eocd < 20) return FAIL("%s: a ZIP64 archive without its locator", path);
        if ((st = swin_pread_exact(fd, path, eocd - 20, 20, loc, err))) return st;
        uint64_t off64 = u64(loc + 8);
        if (u32(loc) != SIG_LOC64 || off64 > eocd - 20 || eocd - 20 - off64 < 56)
            return FAIL("%s: a ZIP64 archive with a corrupt locator", path);
        if ((st = swin_pread_exact(fd, path, off64, 56, e64, err))) return st;
        if (u32(e64) != SIG_EOCD64) return FAIL("%s: the ZIP64 end-of-central-directory record is missing", path);
        count = u64(e64 + 32);
        cd_size = u64(e64 + 40);
        cd_off = u64(e64 + 48);
        end = off64;
    }
    if (cd_off > end || cd_size > end - cd_off)
        return FAIL("%s: the central directory (%llu bytes at %llu) lies outside the file", path, (unsigned long long)cd_size,
                    (unsigned long long)cd_off);
    st = read_central(z, cd_off, cd_size, count, err);
    if (st) swin_zip_close(z);
    return st;
}

void swin_zip_close(struct swin_zip *z)
{
    for (int i = 0; i < z->n; i++) free(z->entries[i].name);
    free(z->entries);
    z->entries = NULL;
    z->n = 0;
}

const struct swin_zip_entry *swin_zip_find(const struct swin_zip *z, const char *name)
{
    struct swin_zip_entry key = {.name = (char *)name};
    if (!z->n) return NULL;
    return bsearch(&key, z->entries, (size_t)z->n, sizeof *z->entries, by_name);
}

swin_status swin_zip_read(const struct swin_zip *z, const struct swin_zip_entry *e, uint64_t off, size_t len, void *dst,
                          swin_error *err)
{
    if (e->method)
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: zip entry '%s' is compressed (method %d); torch.save stores entries uncompressed",
                              z->path, e->name, e->method);
    if (off > e->size || len > e->size - off)
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: read of %zu bytes at %llu past the end of zip entry '%s'", z->path, len,
                              (unsigned long long)off, e->name);
    return swin_pread_exact(z->fd, z->path, e->data_off + off, len, dst, err);
}

swin_status swin_zip_inflate(const struct swin_zip *z, const struct swin_zip_entry *e, void *dst, size_t cap, size_t *len,
                             swin_error *err)
{
    if (e->usize > cap)
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: zip entry '%s' declares %llu bytes, over the %zu read", z->path, e->name,
                              (unsigned long long)e->usize, cap);
    *len = (size_t)e->usize;
    if (!e->method) return swin_zip_read(z, e, 0, (size_t)e->size, dst, err);
    if (e->method != 8)
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: zip entry '%s' is compressed by method %d, not deflate", z->path,
                              e->name, e->method);
    if (e->size > (uint64_t)cap + cap / 8 + 1024)   /* deflate never grows text by more */
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: zip entry '%s' has %llu deflated bytes for %llu", z->path, e->name,
                              (unsigned long long)e->size, (unsigned long long)e->usize);
    void *in = malloc((size_t)e->size + 1);
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    swin_status st = !in || !d ? swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of host memory inflating '%s'", z->path, e->name)
                               : swin_pread_exact(z->fd, z->path, e->data_off, (size_t)e->size, in, err);
    size_t got = 0;
    if (!st && (libdeflate_deflate_decompress(d, in, (size_t)e->size, dst, *len, &got) != LIBDEFLATE_SUCCESS || got != *len))
        st = swin_error_set(err, SWIN_ERR_FORMAT, "%s: zip entry '%s' does not inflate to the %zu bytes it declares", z->path,
                            e->name, *len);
    if (d) libdeflate_free_decompressor(d);
    free(in);
    return st;
}
