/* What compressing a label map costs at each libdeflate level: the uncompressed stream of a
 * .nii.gz (header and data) compressed as swinrun writes it (formats/gzip_members.h: members
 * of SWIN_GZ_CHUNK bytes, 1 and 2 threads) into a temporary file that is then removed, beside
 * zlib at level 6 in one stream (the writer before libdeflate), and the size of the members at
 * other chunk sizes. Prints a Markdown table (best of --runs).
 *
 *   bench_label_gzip LABELS.nii.gz [--runs N] [--dir DIR]   (DIR: where the temporary file goes, /tmp) */
#include <libdeflate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/clock.h"
#include "fileio/atomic_file.h"
#include "formats/gzip_members.h"

static unsigned char *read_gz(const char *path, size_t *n)
{
    gzFile f = gzopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 24, len = 0;
    unsigned char *b = malloc(cap);
    int got;
    while (b && (got = gzread(f, b + len, (unsigned)(cap - len))) > 0) {
        len += (size_t)got;
        if (len == cap) {
            unsigned char *g = realloc(b, cap *= 2);
            if (!g) free(b);
            b = g;
        }
    }
    gzclose(f);
    *n = len;
    return b;
}

/* zlib, one gzip stream at level 6, into a buffer: the compressed size */
static size_t zlib6(const unsigned char *in, size_t n, unsigned char *out, size_t cap)
{
    z_stream z = {0};
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return 0;
    z.next_in = (unsigned char *)in;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    int rc = deflate(&z, Z_FINISH);
    size_t got = rc == Z_STREAM_END ? z.total_out : 0;
    deflateEnd(&z);
    return got;
}

/* swinrun's writer: the stream into a temporary file in dir, then removed; the file's size */
static long members(const char *dir, const unsigned char *in, size_t n, int level, int threads)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/bench_label_gzip.gz", dir);
    struct swin_atomic_file af;
    swin_error err = {0};
    struct swin_gz_members *g = NULL;
    long size = -1;
    if (swin_atomic_file_open(&af, path, &err)) return -1;
    if (!swin_gz_members_open(&g, &af, level, threads, &err) && !swin_gz_members_write(g, in, n, &err) &&
        !swin_gz_members_finish(g, &err) && fflush(af.f) == 0)
        size = ftell(af.f);
    swin_gz_members_free(g);
    swin_atomic_file_abort(&af);
    return size;
}

/* one member per chunk of `chunk` bytes, on this thread: the total size */
static size_t chunked(struct libdeflate_compressor *c, const unsigned char *in, size_t n, size_t chunk,
                      unsigned char *out, size_t cap)
{
    size_t total = 0;
    for (size_t at = 0; at < n; at += chunk) {
        size_t len = n - at < chunk ? n - at : chunk;
        size_t got = libdeflate_gzip_compress(c, in + at, len, out, cap);
        if (!got) return 0;
        total += got;
    }
    return total;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_label_gzip LABELS.nii.gz [--runs N] [--dir DIR]\n");
        return 2;
    }
    int runs = 3;
    const char *dir = "/tmp";
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--runs")) runs = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--dir")) dir = argv[i + 1];
    }
    size_t n;
    unsigned char *in = read_gz(argv[1], &n);
    size_t cap = n + n / 100 + (1 << 20);
    unsigned char *out = malloc(cap);
    if (!in || !out || !n) {
        fprintf(stderr, "bench_label_gzip: cannot read %s\n", argv[1]);
        return 1;
    }
    printf("%s: %zu bytes uncompressed; best of %d runs; members of %zu bytes\n\n", argv[1], n, runs, SWIN_GZ_CHUNK);
    printf("| compressor | level | threads | seconds | MB/s | bytes | ratio |\n|---|---|---|---|---|---|---|\n");
    double best = 1e30;
    size_t size = 0;
    for (int r = 0; r < runs; r++) {
        double t0 = swin_clock_seconds();
        size = zlib6(in, n, out, cap);
        double t = swin_clock_seconds() - t0;
        if (t < best) best = t;
    }
    printf("| zlib, one stream | 6 | 1 | %.3f | %.0f | %zu | %.1f |\n", best, n / best / 1e6, size, (double)n / size);
    const int levels[] = {1, 2, 3, 4, 6, 9, 12};
    for (size_t l = 0; l < sizeof levels / sizeof *levels; l++)
        for (int threads = 1; threads <= 2; threads++) {
            best = 1e30;
            long sz = -1;
            for (int r = 0; r < runs; r++) {
                double t0 = swin_clock_seconds();
                sz = members(dir, in, n, levels[l], threads);
                double t = swin_clock_seconds() - t0;
                if (t < best) best = t;
            }
            if (sz < 0) {
                fprintf(stderr, "bench_label_gzip: cannot write in %s\n", dir);
                return 1;
            }
            printf("| libdeflate, members | %d | %d | %.3f | %.0f | %ld | %.1f |\n", levels[l], threads, best,
                   n / best / 1e6, sz, (double)n / (double)sz);
        }
    printf("\nSize by chunk (one member per chunk, level %d):\n\n| chunk | bytes |\n|---|---|\n", SWIN_GZ_LEVEL);
    struct libdeflate_compressor *c = libdeflate_alloc_compressor(SWIN_GZ_LEVEL);
    const size_t chunks[] = {(size_t)1 << 18, (size_t)1 << 20, (size_t)1 << 22, n};
    for (size_t k = 0; c && k < sizeof chunks / sizeof *chunks; k++)
        printf("| %zu | %zu |\n", chunks[k], chunked(c, in, n, chunks[k], out, cap));
    libdeflate_free_compressor(c);
    free(in);
    free(out);
    return 0;
}
