/* SHA-256 (FIPS 180-4): what the DICOM writer derives repeatable UIDs from and the DICOM node
 * names and logs studies by, without their identifiers. */
#ifndef SWIN_CORE_SHA256_H
#define SWIN_CORE_SHA256_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct swin_sha256 {
    uint32_t h[8];
    uint64_t bytes;        /* hashed so far */
    unsigned char buf[64]; /* the block being filled */
};

void swin_sha256_init(struct swin_sha256 *s);
void swin_sha256_update(struct swin_sha256 *s, const void *data, size_t n);
void swin_sha256_final(struct swin_sha256 *s, unsigned char out[32]);
/* The digest of n bytes, as 64 lowercase hex digits and a NUL. */
void swin_sha256_hex(const void *data, size_t n, char out[65]);

#ifdef __cplusplus
}
#endif

#endif
