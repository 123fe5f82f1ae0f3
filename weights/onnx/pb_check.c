#include "weights/onnx/pb_check.h"

#include "weights/onnx/wire.h"

/* The repeated scalar types protobuf-c unpacks as a packed run when they come length-delimited. */
static int packable(ProtobufCType t)
{
    return t != PROTOBUF_C_TYPE_STRING && t != PROTOBUF_C_TYPE_BYTES && t != PROTOBUF_C_TYPE_MESSAGE;
}

static const char *check_packed(ProtobufCType t, const uint8_t *p, size_t n)
{
    if (n == 0) return "an empty packed repeated field";
    switch (t) {
    case PROTOBUF_C_TYPE_FLOAT:
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_SFIXED32:
        return n % 4 ? "a packed 32-bit field whose length is not a multiple of 4" : NULL;
    case PROTOBUF_C_TYPE_DOUBLE:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_SFIXED64:
        return n % 8 ? "a packed 64-bit field whose length is not a multiple of 8" : NULL;
    case PROTOBUF_C_TYPE_BOOL:
        return NULL;   /* one byte per value, checked by protobuf-c */
    default:           /* varints: each must end inside the field */
        for (size_t pos = 0; pos < n;) {
            uint64_t v;
            size_t used = swin_wire_varint_mem(p + pos, n - pos, &v);
            if (!used) return "a malformed varint in a packed field";
            pos += used;
        }
        return NULL;
    }
}

static const char *walk(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t n, int depth)
{
    if (depth > PB_MAX_DEPTH) return "messages nested too deeply";
    size_t pos = 0;
    while (pos < n) {
        uint64_t key, v;
        size_t used = swin_wire_varint_mem(p + pos, n - pos, &key);
        if (!used || used > 5) return "a malformed field key";
        pos += used;
        if (key >> 3 == 0 || key >> 3 > 0x1fffffff) return "an invalid field number";
        const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(d, (unsigned)(key >> 3));
        switch (key & 7) {
        case WIRE_VARINT:
            used = swin_wire_varint_mem(p + pos, n - pos, &v);
            if (!used) return "a malformed varint";
            pos += used;
            break;
        case WIRE_I64:
        case WIRE_I32: {
            size_t size = (key & 7) == WIRE_I64 ? 8 : 4;
            if (n - pos < size) return "a fixed-size field runs past the end of its message";
            pos += size;
            break;
        }
        case WIRE_LEN: {
            used = swin_wire_varint_mem(p + pos, n - pos, &v);
            if (!used || used > 5) return "a malformed length";
            pos += used;
            if (v > n - pos) return "a length-delimited field runs past the end of its message";
            if (v >= PB_MAX_LEN) return "a length-delimited field of 2 GiB or more";
            const char *why = NULL;
            if (f && f->label == PROTOBUF_C_LABEL_REPEATED && packable(f->type))
                why = check_packed(f->type, p + pos, (size_t)v);
            else if (f && f->type == PROTOBUF_C_TYPE_MESSAGE)
                why = walk(f->descriptor, p + pos, (size_t)v, depth + 1);
            if (why) return why;
            pos += (size_t)v;
            break;
        }
        default:
            return "an unsupported wire type (groups or garbage)";
        }
    }
    return NULL;
}

const char *swin_pb_check(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t n)
{
    if (n >= PB_MAX_LEN) return "a message of 2 GiB or more";
    return walk(d, p, n, 0);
}
