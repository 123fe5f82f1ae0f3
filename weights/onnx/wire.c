#include "weights/onnx/wire.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

void swin_wire_init(struct swin_wire_reader *r, int fd, uint64_t file_size, const char *path, swin_error *err)
{
    r->fd = fd;
    r->file_size = file_size;
    r->pos = 0;
    r->win_start = 0;
    r->win_len = 0;
    r->path = path;
    r->err = err;
}

/* Makes win hold file bytes [off, off + want) or as many of them as the file has. */
static swin_status fill(struct swin_wire_reader *r, uint64_t off, size_t want)
{
    if (off >= r->win_start && off + want <= r->win_start + r->win_len) return SWIN_OK;
    size_t n = sizeof r->win;
    if (off + n > r->file_size) n = (size_t)(r->file_size - off);
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(r->fd, r->win + got, n - got, (off_t)(off + got));
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0)
            return swin_error_set(r->err, SWIN_ERR_IO, "%s: read failed at byte %llu: %s", r->path,
                                  (unsigned long long)(off + got), k < 0 ? strerror(errno) : "unexpected end of file");
        got += (size_t)k;
    }
    r->win_start = off;
    r->win_len = n;
    return SWIN_OK;
}

size_t swin_wire_varint_mem(const unsigned char *p, size_t n, uint64_t *v)
{
    uint64_t x = 0;
    for (size_t i = 0; i < n && i < 10; i++) {
        if (i == 9 && p[i] > 1) return 0;   /* bits beyond the 64th */
        x |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            *v = x;
            return i + 1;
        }
    }
    return 0;
}

static int corrupt(struct swin_wire_reader *r, const char *msg_name, const char *what)
{
    swin_error_set(r->err, SWIN_ERR_FORMAT, "%s: not a valid ONNX file: %s in %s at byte %llu (file has %llu bytes; truncated or corrupt?)",
                   r->path, what, msg_name, (unsigned long long)r->pos, (unsigned long long)r->file_size);
    return -1;
}

static int varint(struct swin_wire_reader *r, uint64_t end, uint64_t *v, const char *msg_name)
{
    if (r->pos >= end) return corrupt(r, msg_name, "a field runs past the end of its message");
    size_t avail = end - r->pos < 10 ? (size_t)(end - r->pos) : 10;
    if (fill(r, r->pos, avail) != SWIN_OK) return -1;
    size_t used = swin_wire_varint_mem(r->win + (r->pos - r->win_start), avail, v);
    if (!used) return corrupt(r, msg_name, "a malformed varint");
    r->pos += used;
    return 1;
}

int swin_wire_next(struct swin_wire_reader *r, uint64_t end, struct swin_wire_field *f, const char *msg_name)
{
    if (r->pos == end) return 0;
    uint64_t key;
    if (varint(r, end, &key, msg_name) < 0) return -1;
    f->number = (uint32_t)(key >> 3);
    f->type = (enum wire_type)(key & 7);
    if (key >> 3 == 0 || key >> 3 > 0x1fffffff) return corrupt(r, msg_name, "an invalid field number");
    switch (f->type) {
    case WIRE_VARINT:
        return varint(r, end, &f->value, msg_name) < 0 ? -1 : 1;
    case WIRE_I64:
    case WIRE_I32: {
        size_t n = f->type == WIRE_I64 ? 8 : 4;
        if (end - r->pos < n) return corrupt(r, msg_name, "a fixed-size field runs past the end of its message");
        if (fill(r, r->pos, n) != SWIN_OK) return -1;
        f->value = 0;
        memcpy(&f->value, r->win + (r->pos - r->win_start), n);  /* little-endian host */
        r->pos += n;
        return 1;
    }
    case WIRE_LEN: {
        uint64_t len;
        if (varint(r, end, &len, msg_name) < 0) return -1;
        if (len > end - r->pos) return corrupt(r, msg_name, "a length-delimited field runs past the end of its message");
        f->data = r->pos;
        f->len = len;
        r->pos += len;
        return 1;
    }
    default:
        return corrupt(r, msg_name, "an unsupported wire type (groups or garbage)");
    }
}

swin_status swin_wire_read(struct swin_wire_reader *r, uint64_t off, size_t len, void *dst)
{
    unsigned char *d = dst;
    while (len) {
        size_t chunk = len < sizeof r->win ? len : sizeof r->win;
        swin_status st = fill(r, off, chunk);
        if (st) return st;
        memcpy(d, r->win + (off - r->win_start), chunk);
        d += chunk;
        off += chunk;
        len -= chunk;
    }
    return SWIN_OK;
}
