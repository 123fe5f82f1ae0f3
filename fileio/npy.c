#include "fileio/npy.h"

#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio/atomic_file.h"

/* Parses "(1, 14, 32, 32, 32)" or "(5,)" into shape; returns ndim or -1. */
static int parse_shape(const char *s, size_t *shape)
{
    const char *p = strchr(s, '(');
    if (!p) return -1;
    p++;
    int n = 0;
    while (*p && *p != ')') {
        while (*p == ' ' || *p == ',') p++;
        if (*p == ')') break;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(p, &end, 10);
        if (end == p || errno || n == NPY_MAX_DIMS) return -1;
        shape[n++] = (size_t)v;
        p = end;
    }
    return *p == ')' ? n : -1;
}

swin_status swin_npy_read_f32(const char *path, struct swin_npy_array *out, swin_error *err)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) return swin_error_set(err, SWIN_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    unsigned char pre[12];
    swin_status st = SWIN_OK;
    char *hdr = NULL;
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
        st = swin_error_set(err, SWIN_ERR_FORMAT, "%s: not a .npy file", path);
        goto done;
    }
    size_t hlen = pre[8] | (size_t)pre[9] << 8;
    if (pre[6] >= 2) {  /* format 2.0: 4-byte header length */
        if (fread(pre + 10, 1, 2, f) != 2) {
            st = swin_error_set(err, SWIN_ERR_FORMAT, "%s: truncated .npy header", path);
            goto done;
        }
        hlen = pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
    }
    if (hlen > 65536) {
        st = swin_error_set(err, SWIN_ERR_FORMAT, "%s: bad .npy header", path);
        goto done;
    }
    if (!(hdr = calloc(1, hlen + 1))) {
        st = swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of host memory for the .npy header", path);
        goto done;
    }
    if (fread(hdr, 1, hlen, f) != hlen) {
        st = swin_error_set(err, SWIN_ERR_FORMAT, "%s: bad .npy header", path);
        goto done;
    }
    if (!strstr(hdr, "'descr': '<f4'")) {
        st = swin_error_set(err, SWIN_ERR_FORMAT, "%s: expected float32 ('<f4') data; convert with "
                                                   "numpy: a.astype(np.float32)", path);
        goto done;
    }
    if (!strstr(hdr, "'fortran_order': False")) {
        st = swin_error_set(err, SWIN_ERR_FORMAT, "%s: Fortran-ordered arrays are not supported; save "
                                                   "np.ascontiguousarray(a)", path);
        goto done;
    }
    const char *sh = strstr(hdr, "'shape':");
    out->ndim = sh ? parse_shape(sh, out->shape) : -1;
    if (out->ndim < 0) {
        st = swin_error_set(err, SWIN_ERR_FORMAT, "%s: cannot read the shape in the .npy header", path);
        goto done;
    }
    out->count = 1;
    for (int i = 0; i < out->ndim; i++) {
        if (out->shape[i] && out->count > ((size_t)1 << 40) / out->shape[i]) {
            st = swin_error_set(err, SWIN_ERR_FORMAT, "%s: absurd array shape", path);
            goto done;
        }
        out->count *= out->shape[i];
    }
    /* the data must be in the file before count floats are allocated for them */
    struct stat sb;
    long pos = ftell(f);
    if (fstat(fileno(f), &sb) != 0 || pos < 0 || (uint64_t)sb.st_size < (uint64_t)pos ||
        (uint64_t)out->count * sizeof(float) > (uint64_t)sb.st_size - (uint64_t)pos) {
        st = swin_error_set(err, SWIN_ERR_FORMAT, "%s: truncated: the shape needs %zu float32 values (%llu bytes), the file has %llu bytes of data",
                            path, out->count, (unsigned long long)out->count * sizeof(float),
                            (unsigned long long)(pos >= 0 && sb.st_size >= pos ? sb.st_size - pos : 0));
        goto done;
    }
    out->data = malloc(out->count ? out->count * sizeof(float) : 1);
    if (!out->data) {
        st = swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of memory for %zu floats", path, out->count);
        goto done;
    }
    if (fread(out->data, sizeof(float), out->count, f) != out->count) {
        st = swin_error_set(err, SWIN_ERR_FORMAT, "%s: truncated: expected %zu float32 values", path, out->count);
        goto done;
    }
done:
    free(hdr);
    fclose(f);
    if (st) {
        free(out->data);
        memset(out, 0, sizeof *out);
    }
    return st;
}

swin_status swin_npy_write_f32(const char *path, const float *data, int ndim, const size_t *shape, swin_error *err)
{
    char dict[256];
    int n = snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (");
    size_t count = 1;
    for (int i = 0; i < ndim; i++) {
        n += snprintf(dict + n, sizeof dict - (size_t)n, "%zu%s", shape[i], ndim == 1 ? "," : (i + 1 < ndim ? ", " : ""));
        count *= shape[i];
    }
    n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
    /* pad with spaces so that magic + 2 + 2 + header is a multiple of 64, ending in '\n' */
    size_t total = 10 + (size_t)n + 1;
    size_t pad = (64 - total % 64) % 64;
    struct swin_atomic_file af;
    swin_status st = swin_atomic_file_open(&af, path, err);
    if (st) return st;
    unsigned short hlen = (unsigned short)((size_t)n + pad + 1);
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xff), (unsigned char)(hlen >> 8)};
    fwrite(pre, 1, sizeof pre, af.f);
    fwrite(dict, 1, (size_t)n, af.f);
    for (size_t i = 0; i < pad; i++) fputc(' ', af.f);
    fputc('\n', af.f);
    fwrite(data, sizeof(float), count, af.f);
    return swin_atomic_file_commit(&af, err);
}
