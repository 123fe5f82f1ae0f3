/* swinrun fetch's readers of downloaded text (apps/cli/fetch_manifest.h): large_files.yml in
 * the forms it is published in and other YAML forms, and what must be refused; metadata.json's
 * version. */
#include <stdio.h>
#include <string.h>

#include "apps/cli/fetch_manifest.h"

static int failures;

#define CHECK(cond, what)                                                  \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, what); \
            failures++;                                                    \
        }                                                                  \
    } while (0)

static struct fetch_large_files lf;

static swin_status parse(const char *text, swin_error *err)
{
    *err = (swin_error){SWIN_OK, ""};
    return fetch_large_files_parse("large_files.yml", text, strlen(text), &lf, err);
}

#define ITEM_TAIL                                                                                                \
    "    url: \"https://example.org/m.pt\"\n    hash_val: \"50dd67a01b28a1d5487fd9ac27e682fb\"\n    hash_type: " \
    "\"md5\"\n"

static void accepted(void)
{
    swin_error err;
    CHECK(!parse("large_files:\n  - path: \"models/model.pt\"\n" ITEM_TAIL, &err), err.msg);
    CHECK(lf.n == 1 && !strcmp(lf.file[0].path, "models/model.pt") &&
              !strcmp(lf.file[0].url, "https://example.org/m.pt") &&
              !strcmp(lf.file[0].hash_val, "50dd67a01b28a1d5487fd9ac27e682fb") && !strcmp(lf.file[0].hash_type, "md5"),
          "the published form");
    CHECK(!parse("# c\r\nlarge_files: # c\r\n\r\n- path: models/a.pt # c\r\n  url: 'http://h/a''b'\r\n"
                 "  hash_type: SHA256\r\n  hash_val: \""
                 "ABababababababababababababababababababababababababababababababab"
                 "\"\r\n"
                 "- path: models/b.ts\r\n  url: https://h/b\r\n  hash_val: 0123456789abcdef0123456789abcdef01234567\r\n"
                 "  hash_type: sha1\r\n",
                 &err),
          err.msg);
    CHECK(lf.n == 2 && !strcmp(lf.file[0].url, "http://h/a'b") && !strcmp(lf.file[0].hash_type, "sha256") &&
              !strncmp(lf.file[0].hash_val, "abab", 4) && !strcmp(lf.file[1].path, "models/b.ts"),
          "plain and single-quoted scalars, comments, CRLF, upper case hashes lowered");
    /* YAML as a writer may produce it: flow style, an anchor and alias, text across lines, other top-level keys */
    CHECK(!parse("version: 1\nlarge_files: [{path: models/a.pt, url: \"https://h/a\", hash_type: &t md5,\n"
                 "  hash_val: \"50dd67a01b28a1d5487fd9ac27e682fb\"},\n {path: models/b.pt, url: \"https://h/\\\n"
                 "  b\", hash_type: *t, hash_val:\n  '50dd67a01b28a1d5487fd9ac27e682fc'\n }]\n",
                 &err),
          err.msg);
    CHECK(lf.n == 2 && !strcmp(lf.file[1].url, "https://h/b") && !strcmp(lf.file[1].hash_type, "md5") &&
              !strcmp(lf.file[1].hash_val, "50dd67a01b28a1d5487fd9ac27e682fc"),
          "flow style, an alias, an escaped line break, a value on the next line");
}

/* Names that only start with dots are ordinary names, not '.' or '..' components (fuzz_large_files
 * found the harness treating them as traversals). */
static void dotted_names(void)
{
    swin_error err;
    CHECK(parse("large_files:\n  - path: \"....models/..x/a...\"\n" ITEM_TAIL, &err) == SWIN_OK && lf.n == 1 &&
              !strcmp(lf.file[0].path, "....models/..x/a..."),
          "names of dots and letters are kept as they are");
}

static void refused(const char *text, const char *what)
{
    swin_error err;
    swin_status st = parse(text, &err);
    CHECK(st == SWIN_ERR_FORMAT && err.status == st && err.msg[0] && !strchr(err.msg, '\n'), what);
}

static void refusals(void)
{
    refused("", "empty");
    refused("large_files:\n", "no file");
    refused("files:\n  - path: a\n" ITEM_TAIL, "another top-level key");
    refused("large_files:\n  - path: \"/etc/passwd\"\n" ITEM_TAIL, "an absolute path");
    refused("large_files:\n  - path: \"models/../../x\"\n" ITEM_TAIL, "a '..' component");
    refused("large_files:\n  - path: \"./x\"\n" ITEM_TAIL, "a '.' component");
    refused("large_files:\n  - path: \"models//x\"\n" ITEM_TAIL, "an empty component");
    refused("large_files:\n  - path: \"models\\\\x\"\n" ITEM_TAIL, "a backslash");
    refused("large_files:\n  - path: \"models/\"\n" ITEM_TAIL, "a trailing slash");
    refused("large_files:\n  - path: a\n    url: \"file:///etc/passwd\"\n    hash_val: "
            "\"50dd67a01b28a1d5487fd9ac27e682fb\"\n    hash_type: md5\n",
            "a file:// URL");
    refused(
        "large_files:\n  - path: a\n    url: \"https://h/a b\"\n    hash_val: \"50dd67a01b28a1d5487fd9ac27e682fb\"\n"
        "    hash_type: md5\n",
        "a space in the URL");
    refused("large_files:\n  - path: a\n    url: \"https://h/a\"\n    hash_type: md5\n", "no hash_val");
    refused("large_files:\n  - path: a\n    url: \"https://h/a\"\n    hash_val: \"50dd\"\n    hash_type: md5\n",
            "a hash of the wrong length");
    refused("large_files:\n  - path: a\n    url: \"https://h/a\"\n    hash_val: \"50dd67a01b28a1d5487fd9ac27e682fz\"\n"
            "    hash_type: md5\n",
            "a hash that is not hex");
    refused("large_files:\n  - path: a\n    url: \"https://h/a\"\n    hash_val: \"50dd67a0\"\n    hash_type: crc32\n",
            "an unknown hash type");
    refused("large_files:\n  - path: a\n    path: b\n" ITEM_TAIL, "a repeated key");
    refused("large_files:\n  - path: a\n    size: 3\n" ITEM_TAIL, "an unknown key");
    refused("large_files:\n  - path: a\n" ITEM_TAIL "  - path: a\n" ITEM_TAIL, "a repeated path");
    refused("large_files:\n  - path: a\n      url: \"https://h\"\n", "a misaligned key");
    refused("large_files:\n\t- path: a\n" ITEM_TAIL, "a tab");
    refused("large_files: [a, b]\n", "entries that are not mappings");
    refused("large_files:\n  - path: \"a\n" ITEM_TAIL, "an unterminated quote");
    refused("large_files:\n  - path: \"a\\n\"\n" ITEM_TAIL, "a path holding a line break (escaped)");
    refused("large_files:\n  - path: a\n    url: \"https://h/a\"\n    hash_val: 12345678901234567890123456789012\n"
            "    hash_type: md5\n",
            "a hash YAML reads as a number (as MONAI would, which then cannot check it)");
    refused("large_files:\n  - path: a\n  - path: b\n" ITEM_TAIL, "an entry without its keys");
    refused("large_files:\n  path: a\n", "a mapping in place of the list");
    refused("- large_files\n", "a list at the top");
    char many[8192] = "large_files:\n";
    for (int i = 0; i <= FETCH_MAX_LARGE_FILES; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "  - path: f%d\n" ITEM_TAIL, i);
    refused(many, "more files than the limit");
    swin_error err = {0};
    char nul[] = "large_files:\n  - path: a\0b\n";
    CHECK(fetch_large_files_parse("large_files.yml", nul, sizeof nul - 1, &lf, &err) == SWIN_ERR_FORMAT, "a NUL byte");
    /* the messages name the file read, whichever of its names the bundle uses */
    const char *keyless = "large_files:\n  - path: a\n";
    CHECK(fetch_large_files_parse("large_files.yaml", keyless, strlen(keyless), &lf, &err) == SWIN_ERR_FORMAT &&
              !strncmp(err.msg, "large_files.yaml: entry 1 needs path, url", 41),
          "the message names large_files.yaml");
    const char *flow = "{\"large_files\": []}";
    CHECK(fetch_large_files_parse("large_files.json", flow, strlen(flow), &lf, &err) == SWIN_ERR_FORMAT &&
              !strcmp(err.msg, "large_files.json lists no file"),
          "the message names large_files.json");
}

static void metadata(void)
{
    char v[16];
    swin_error err = {0};
    const char *m = "{\"monai_version\": \"1.4.0\", \"changelog\": {\"0.5.6\": \"x\"},\n \"version\" :\n \"0.5.6\"}";
    CHECK(!fetch_metadata_version(m, strlen(m), v, sizeof v, &err) && !strcmp(v, "0.5.6"), "the version found");
    const char *none = "{\"monai_version\": \"1.4.0\"}";
    CHECK(fetch_metadata_version(none, strlen(none), v, sizeof v, &err) == SWIN_ERR_FORMAT, "no version");
    const char *longer = "{\"version\": \"0123456789abcdefg\"}";
    CHECK(fetch_metadata_version(longer, strlen(longer), v, sizeof v, &err) == SWIN_ERR_FORMAT, "a version too long");
    const char *odd = "{\"version\": \"0.5/6\"}";
    CHECK(fetch_metadata_version(odd, strlen(odd), v, sizeof v, &err) == SWIN_ERR_FORMAT, "a version with a slash");
    const char *nested = "{\"changelog\": {\"version\": \"9.9.9\"}, \"version\": \"0.5.6\"}";
    CHECK(!fetch_metadata_version(nested, strlen(nested), v, sizeof v, &err) && !strcmp(v, "0.5.6"),
          "the top-level version, not a nested one");
    const char *broken = "{\"version\": \"0.5.6\"";
    CHECK(fetch_metadata_version(broken, strlen(broken), v, sizeof v, &err) == SWIN_ERR_FORMAT, "JSON cut short");
}

int main(void)
{
    accepted();
    dotted_names();
    refusals();
    metadata();
    if (failures) return 1;
    printf("test_manifest: all passed\n");
    return 0;
}
