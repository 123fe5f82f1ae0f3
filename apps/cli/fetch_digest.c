/* File digests through libcrypto's EVP interface (apps/cli/fetch_digest.h). */
#include "apps/cli/fetch_digest.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

swin_status fetch_file_digest(const char *path, const char *type, char hex[129], swin_error *err)
{
    const EVP_MD *md = EVP_get_digestbyname(type);
    if (!md) return swin_error_set(err, SWIN_ERR_ARG, "OpenSSL has no digest '%s'", type);
    FILE *f = fopen(path, "rb");
    if (!f) return swin_error_set(err, SWIN_ERR_IO, "cannot read %s: %s", path, strerror(errno));
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    size_t cap = 1 << 20;
    unsigned char *buf = malloc(cap);
    swin_status st = SWIN_OK;
    if (!ctx || !buf || !EVP_DigestInit_ex(ctx, md, NULL))
        st = swin_error_set(err, SWIN_ERR_NOMEM, "cannot start a %s digest", type);
    for (size_t n; !st && (n = fread(buf, 1, cap, f)) > 0;)
        if (!EVP_DigestUpdate(ctx, buf, n)) st = swin_error_set(err, SWIN_ERR_INTERNAL, "%s digest failed", type);
    if (!st && ferror(f)) st = swin_error_set(err, SWIN_ERR_IO, "cannot read %s: %s", path, strerror(errno));
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned int dn = 0;
    if (!st && !EVP_DigestFinal_ex(ctx, d, &dn)) st = swin_error_set(err, SWIN_ERR_INTERNAL, "%s digest failed", type);
    for (unsigned int i = 0; !st && i < dn && 2 * i + 2 < 129; i++) snprintf(hex + 2 * i, 3, "%02x", d[i]);
    if (!st) hex[2 * dn < 129 ? 2 * dn : 128] = 0;
    free(buf);
    EVP_MD_CTX_free(ctx);
    fclose(f);
    return st;
}
