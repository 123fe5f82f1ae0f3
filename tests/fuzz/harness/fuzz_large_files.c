/* libFuzzer harness: swinrun fetch's readers of downloaded text (apps/cli/fetch_manifest.h),
 * the large_files.yml reader (through core/yaml.c) and metadata.json's version (through
 * core/json.c), on the fuzzed bytes. Whatever they accept must hold only checked values: a
 * relative path without empty, '.' or '..' components, an http(s) URL without spaces, a hash of
 * its type's length. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/cli/fetch_manifest.h"
#include "tests/fuzz/harness/fuzz_status.h"

/* Whether a '/'-separated component of p is empty, "." or ".." (names that merely start with
 * dots, such as "...x", are ordinary names). */
static int has_dot_component(const char *p)
{
    for (const char *c = p;;) {
        const char *e = strchr(c, '/');
        size_t len = e ? (size_t)(e - c) : strlen(c);
        if (!len || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.')) return 1;
        if (!e) return 0;
        c = e + 1;
    }
}

static void check_accepted(const struct fetch_large_files *lf)
{
    for (int i = 0; i < lf->n; i++) {
        const struct fetch_large_file *f = &lf->file[i];
        if (f->path[0] == '/' || has_dot_component(f->path) ||
            (strncmp(f->url, "http://", 7) && strncmp(f->url, "https://", 8)) || strchr(f->url, ' ') ||
            !f->hash_type[0] || !f->hash_val[0]) {
            fprintf(stderr, "fuzz harness: accepted an unchecked entry: path '%s' url '%s'\n", f->path, f->url);
            abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
    static struct fetch_large_files lf;
    swin_error err = {SWIN_OK, ""};
    swin_status st = fetch_large_files_parse("large_files.yml", (const char *)bytes, size, &lf, &err);
    fuzz_check_error(st, &err);
    if (st == SWIN_OK) check_accepted(&lf);
    char version[64];
    err = (swin_error){SWIN_OK, ""};
    st = fetch_metadata_version((const char *)bytes, size, version, sizeof version, &err);
    fuzz_check_error(st, &err);
    return 0;
}
