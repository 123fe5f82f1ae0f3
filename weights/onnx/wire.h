/* A protobuf wire-format reader over a file descriptor.
 *
 * It reads through a small window buffer with pread, so walking the structure of a large
 * ONNX file touches only the bytes of tags and small fields: tensor payloads are skipped
 * (their offset and length are recorded) and never read, mapped or copied here.
 * Every length is checked against the end of the enclosing message before it is used. */
#ifndef SWIN_WEIGHTS_WIRE_H
#define SWIN_WEIGHTS_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

enum wire_type { WIRE_VARINT = 0, WIRE_I64 = 1, WIRE_LEN = 2, WIRE_I32 = 5 };

struct swin_wire_reader {
    int fd;
    uint64_t file_size;
    uint64_t pos;            /* next byte to decode (file offset) */
    uint64_t win_start;      /* file offset of win[0] */
    size_t win_len;          /* valid bytes in win */
    const char *path;        /* for messages */
    swin_error *err;
    unsigned char win[1 << 16];
};

/* One decoded field header. For WIRE_LEN, [data, data + len) is the payload's file range
 * (already checked to lie inside the enclosing message). */
struct swin_wire_field {
    uint32_t number;
    enum wire_type type;
    uint64_t value;          /* WIRE_VARINT: the value; WIRE_I32/I64: the raw bits */
    uint64_t data, len;      /* WIRE_LEN only */
};

void swin_wire_init(struct swin_wire_reader *r, int fd, uint64_t file_size, const char *path, swin_error *err);
/* Decodes the next field header of a message that ends at `end` and skips its payload.
 * Returns 1 with *f filled, 0 at end of message, or -1 with *err set (corrupt/truncated). */
int swin_wire_next(struct swin_wire_reader *r, uint64_t end, struct swin_wire_field *f, const char *msg_name);
/* Copies file bytes [off, off+len) into dst (len <= the field length checked before). */
swin_status swin_wire_read(struct swin_wire_reader *r, uint64_t off, size_t len, void *dst);
/* Decodes one varint from a memory buffer; returns bytes used, 0 when malformed, truncated,
 * longer than 10 bytes or above 2^64 - 1. */
size_t swin_wire_varint_mem(const unsigned char *p, size_t n, uint64_t *v);

#endif
