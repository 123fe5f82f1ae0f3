/* A validating walk over the protobuf wire format of one message, driven by its protobuf-c
 * descriptor, run on every byte string before protobuf-c unpacks it.
 *
 * protobuf-c 1.4.1 rejects most malformed input cleanly but has undefined behaviour on
 * some of it: a field key whose number reaches bit 28 is shifted into the sign bit of an
 * int (parse_tag_and_wiretype), a length prefix of 2^31 or more likewise
 * (scan_length_prefixed_data), and an empty packed repeated field computes NULL + 0 and
 * memcpy(NULL, ..., 0) (parse_packed_repeated_member); its recursion into nested messages
 * is unbounded. This walk accepts only bytes that protobuf-c parses without any of these:
 * field numbers 1 .. 2^29-1 in keys of at most 5 bytes, wire types 0, 1, 2 and 5, varints
 * of at most 10 bytes that fit in 64 bits, length prefixes of at most 5 bytes that stay
 * inside the enclosing message and below PB_MAX_LEN, non-empty well-formed packed fields,
 * and messages nested at most PB_MAX_DEPTH deep. */
#ifndef SWIN_WEIGHTS_PB_CHECK_H
#define SWIN_WEIGHTS_PB_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#define PB_MAX_DEPTH 32
/* protobuf-c keeps field lengths in unsigned and int variables: messages and fields stay below */
#define PB_MAX_LEN ((size_t)1 << 31)

/* NULL when protobuf-c may unpack [p, p + n) as a `d`; otherwise what is wrong with it. */
const char *swin_pb_check(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t n);

#endif
