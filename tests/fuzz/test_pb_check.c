/* swin_pb_check (weights/onnx/pb_check.h) on hand-made NodeProto bytes: what it accepts protobuf-c
 * unpacks, each kind of malformed input is refused with its own reason. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/common/check.h"
#include "weights/onnx/pb_check.h"

extern const ProtobufCMessageDescriptor swin_onnx__node_proto__descriptor;   /* the generated onnx.pb-c.c */

/* NodeProto bytes in a string literal; NULL `want`: accepted, else a substring of the reason */
static bool expect(const char *what, const char *bytes, size_t n, const char *want)
{
    const char *why = swin_pb_check(&swin_onnx__node_proto__descriptor, (const uint8_t *)bytes, n);
    bool ok = want ? why && strstr(why, want) : !why;
    if (!want && !why) {   /* what passes, protobuf-c unpacks */
        ProtobufCMessage *m = protobuf_c_message_unpack(&swin_onnx__node_proto__descriptor, NULL, n, (const uint8_t *)bytes);
        if (!m) fprintf(stderr, "%s: accepted, but protobuf-c cannot unpack it\n", what);
        ok = m != NULL;
        protobuf_c_message_free_unpacked(m, NULL);
    }
    if (!ok) fprintf(stderr, "%s: got %s, want %s\n", what, why ? why : "accepted", want ? want : "accepted");
    return check_true(what, ok);
}
#define EXPECT(what, lit, want) expect(what, lit, sizeof lit - 1, want)

/* a NodeProto nested `levels` deep: node { attribute { g { node { ... } } } } */
static size_t nested(unsigned char *out, size_t cap, int levels)
{
    size_t n = 0;
    unsigned char *tmp = malloc(cap);
    for (int l = 0; l < levels; l++) {
        /* graph { node = <n bytes> } inside attribute { name "a", g = graph } inside node { attribute } */
        size_t g = 2 + n, a = 3 + 2 + g, k = 0;
        tmp[k++] = 0x2a, tmp[k++] = (unsigned char)a;              /* NodeProto.attribute (5) */
        tmp[k++] = 0x0a, tmp[k++] = 1, tmp[k++] = 'a';             /* AttributeProto.name (1) */
        tmp[k++] = 0x32, tmp[k++] = (unsigned char)g;              /* AttributeProto.g (6) */
        tmp[k++] = 0x0a, tmp[k++] = (unsigned char)n;              /* GraphProto.node (1) */
        memcpy(tmp + k, out, n);
        n += k;
        memcpy(out, tmp, n);
    }
    free(tmp);
    return n;
}

int main(void)
{
    bool ok = true;
    ok &= EXPECT("a plain node", "\x0a\x01x\x12\x01y\x22\x03" "Add", NULL);
    ok &= EXPECT("packed ints", "\x2a\x06\x0a\x01k\x42\x01\x05", NULL);
    ok &= EXPECT("packed floats", "\x2a\x09\x0a\x01k\x3a\x04\x00\x00\x80\x3f", NULL);
    ok &= EXPECT("unknown fields of every wire type", "\x78\x05\x7d\x01\x02\x03\x04\x79\x01\x02\x03\x04\x05\x06\x07\x08"
                 "\x7a\x02zz", NULL);
    ok &= EXPECT("empty packed ints (fuzz t3)", "\x2a\x02\x42\x00", "empty packed");
    ok &= EXPECT("packed floats of 3 bytes", "\x2a\x08\x0a\x01k\x3a\x03\x00\x00\x00", "multiple of 4");
    ok &= EXPECT("unterminated varint in packed ints", "\x2a\x06\x0a\x01k\x42\x01\x80", "malformed varint in a packed");
    ok &= EXPECT("6-byte key (fuzz t1)", "\x88\x80\x80\x80\xff\x01", "malformed field key");
    ok &= EXPECT("field number 0", "\x02\x00", "invalid field number");
    ok &= EXPECT("field number 2^29", "\x80\x80\x80\x80\x10\x00", "invalid field number");
    ok &= EXPECT("field number 2^29 - 1", "\xf8\xff\xff\xff\x0f\x00", NULL);
    ok &= EXPECT("group wire type", "\x7b", "unsupported wire type");
    ok &= EXPECT("length past the end", "\x0a\x05x", "runs past the end");
    ok &= EXPECT("fixed32 past the end", "\x7d\x00\x00", "fixed-size field runs past");
    ok &= EXPECT("11-byte varint", "\x78\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", "malformed varint");
    ok &= EXPECT("varint above 2^64", "\x78\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", "malformed varint");
    ok &= EXPECT("varint 2^64 - 1", "\x78\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", NULL);
    ok &= EXPECT("6-byte length prefix", "\x7a\x81\x80\x80\x80\x80\x00x", "malformed length");
    ok &= EXPECT("malformed nested attribute", "\x2a\x03\x0a\x05x", "runs past the end");

    unsigned char b[512];
    size_t n = nested(b, sizeof b, 10);   /* 30 levels below the node */
    ok &= check_true("nested 30 deep", swin_pb_check(&swin_onnx__node_proto__descriptor, b, n) == NULL);
    n = nested(b, sizeof b, 11);          /* 33 */
    const char *why = swin_pb_check(&swin_onnx__node_proto__descriptor, b, n);
    ok &= check_true("nested 33 deep", why && strstr(why, "nested too deeply"));
    return test_exit(ok);
}
