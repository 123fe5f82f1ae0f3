/* A file's digest for swinrun fetch, through OpenSSL's libcrypto (EVP). */
#ifndef SWIN_CLI_FETCH_DIGEST_H
#define SWIN_CLI_FETCH_DIGEST_H

#include "core/status.h"

/* The lowercase hex digest of the file at path with the algorithm type ("md5", "sha1",
 * "sha256", "sha512") into hex (129 bytes). SWIN_ERR_IO when the file cannot be read. */
swin_status fetch_file_digest(const char *path, const char *type, char hex[129], swin_error *err);

#endif
