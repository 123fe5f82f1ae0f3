/* What swinrun fetch reads from a model-zoo bundle before trusting it: large_files.yml (the
 * large files of a bundle, each with its URL and hash) through the YAML reader (core/yaml.h),
 * and the "version" field of configs/metadata.json. Both files come from the network (or a
 * server named with --from): the readers only copy bounded, checked strings and execute
 * nothing; every refusal is a one-line message. */
#ifndef SWIN_CLI_FETCH_MANIFEST_H
#define SWIN_CLI_FETCH_MANIFEST_H

#include <stddef.h>

#include "core/status.h"

#define FETCH_MANIFEST_MAX_BYTES (64 * 1024)
#define FETCH_MAX_LARGE_FILES 16

struct fetch_large_file {
    char path[256];     /* relative to the bundle folder: components of [A-Za-z0-9._-], no "." or ".." */
    char url[2048];     /* http:// or https://, printable ASCII without spaces */
    char hash_type[8];  /* md5, sha1, sha256 or sha512 */
    char hash_val[129]; /* lowercase hex of the digest's length */
};

struct fetch_large_files {
    int n;
    struct fetch_large_file file[FETCH_MAX_LARGE_FILES];
};

/* Reads large_files.yml (or .yaml, .json: name, which the messages start with): YAML (as PyYAML
 * reads it) whose top-level "large_files" key holds a list of mappings with the keys path, url,
 * hash_val and hash_type (each required, given once, a string, none other). Anything else is
 * refused (SWIN_ERR_FORMAT, naming the entry, or the line and column of a YAML error). */
swin_status fetch_large_files_parse(const char *name, const char *text, size_t len, struct fetch_large_files *out,
                                    swin_error *err);

/* The top-level "version": "V" of configs/metadata.json (V of [A-Za-z0-9._+-], at most cap - 1
 * characters) into version; SWIN_ERR_FORMAT when there is none or the file is not JSON. */
swin_status fetch_metadata_version(const char *text, size_t len, char *version, size_t cap, swin_error *err);

#endif
