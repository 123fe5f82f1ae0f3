/* Credentials from files (secret.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "apps/node/secret.h"

swin_status node_secret_read(const char *path, const char *key, char *out, size_t size, swin_error *err)
{
    out[0] = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return swin_error_set(err, SWIN_ERR_IO, "%s %s: %s", key, path, strerror(errno));
    size_t n = fread(out, 1, size - 1, f);
    const bool more = n == size - 1 && fgetc(f) != EOF;
    fclose(f);
    out[n] = 0;
    size_t len = strcspn(out, "\r\n");
    const bool whole = len < n || !more; /* the first line ended within the buffer, or the file did */
    out[len] = 0;
    swin_status st = SWIN_OK;
    if (!whole) st = swin_error_set(err, SWIN_ERR_ARG, "%s %s: its first line is over %zu bytes", key, path, size - 1);
    else if (!len) st = swin_error_set(err, SWIN_ERR_ARG, "%s %s: empty (the secret is its first line)", key, path);
    for (size_t i = 0; !st && i < len; i++)
        if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
            st = swin_error_set(err, SWIN_ERR_ARG, "%s %s: a control character in its first line", key, path);
    if (st) node_secret_wipe(out, size);
    return st;
}

void node_secret_wipe(char *s, size_t size)
{
    explicit_bzero(s, size);
}
