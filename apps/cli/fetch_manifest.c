/* large_files.yml and metadata.json's version for swinrun fetch (apps/cli/fetch_manifest.h):
 * the YAML read whole by core/yaml.c (as MONAI reads it, with PyYAML), then its one list checked
 * entry by entry; metadata.json read by core/json.c.
 *
 *   large_files:
 *     - path: "models/model.pt"
 *       url: "https://..."
 *       hash_val: "..."
 *       hash_type: "md5" */
#include "apps/cli/fetch_manifest.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include "core/json.h"
#include "core/yaml.h"

static bool safe_path(const char *p)
{
    size_t n = strlen(p);
    if (!n || n >= sizeof(((struct fetch_large_file *)0)->path) || p[0] == '/') return false;
    const char *c = p;
    while (*c) {
        const char *e = c;
        while (*e && *e != '/') e++;
        size_t len = (size_t)(e - c);
        if (!len || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.')) return false;
        for (const char *q = c; q < e; q++)
            if (!isalnum((unsigned char)*q) && *q != '.' && *q != '_' && *q != '-') return false;
        c = *e ? e + 1 : e;
        if (*e && !*c) return false; /* a trailing '/' */
    }
    return true;
}

static bool safe_url(const char *u)
{
    if (strncmp(u, "https://", 8) && strncmp(u, "http://", 7)) return false;
    for (; *u; u++)
        if ((unsigned char)*u <= ' ' || (unsigned char)*u >= 127) return false;
    return true;
}

static size_t hex_digits_of(const char *type)
{
    static const struct {
        const char *name;
        size_t digits;
    } known[] = {{"md5", 32}, {"sha1", 40}, {"sha256", 64}, {"sha512", 128}};
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (!strcmp(type, known[i].name)) return known[i].digits;
    return 0;
}

enum { HAS_PATH = 1, HAS_URL = 2, HAS_HASH_VAL = 4, HAS_HASH_TYPE = 8, HAS_ALL = 15 };

/* Stores one key of entry i; refuses unknown and repeated keys and values that do not fit. */
static swin_status store(const char *name, int i, struct fetch_large_file *f, unsigned *seen, const json_node *m,
                         swin_error *err)
{
    if (m->kind != JSON_STRING)
        return swin_error_set(err, SWIN_ERR_FORMAT,
                              "%s: entry %d: %.16s is not a string (quote it: YAML reads 1e5 or 0123 as "
                              "other types)",
                              name, i, m->key);
    const char *value = m->text;
    size_t n = strlen(value);
    unsigned bit;
    if (!strcmp(m->key, "path")) {
        if (!safe_path(value))
            return swin_error_set(err, SWIN_ERR_FORMAT,
                                  "%s: entry %d: path must be relative, of A-Z a-z 0-9 . _ - and '/', "
                                  "without '.' or '..'",
                                  name, i);
        memcpy(f->path, value, n + 1);
        bit = HAS_PATH;
    } else if (!strcmp(m->key, "url")) {
        if (n >= sizeof f->url || !safe_url(value))
            return swin_error_set(err, SWIN_ERR_FORMAT,
                                  "%s: entry %d: url must be http:// or https:// without spaces, under "
                                  "%zu bytes",
                                  name, i, sizeof f->url);
        memcpy(f->url, value, n + 1);
        bit = HAS_URL;
    } else if (!strcmp(m->key, "hash_val")) {
        if (n >= sizeof f->hash_val)
            return swin_error_set(err, SWIN_ERR_FORMAT, "%s: entry %d: hash_val too long", name, i);
        for (size_t k = 0; k <= n; k++) f->hash_val[k] = (char)tolower((unsigned char)value[k]);
        bit = HAS_HASH_VAL;
    } else if (!strcmp(m->key, "hash_type")) {
        if (n >= sizeof f->hash_type) n = sizeof f->hash_type - 1; /* too long for a known name */
        for (size_t k = 0; k < n; k++) f->hash_type[k] = (char)tolower((unsigned char)value[k]);
        f->hash_type[n] = 0;
        if (!hex_digits_of(f->hash_type))
            return swin_error_set(err, SWIN_ERR_FORMAT, "%s: entry %d: hash_type must be md5, sha1, sha256 or sha512",
                                  name, i);
        bit = HAS_HASH_TYPE;
    } else {
        return swin_error_set(err, SWIN_ERR_FORMAT,
                              "%s: entry %d: unknown key %.16s (path, url, hash_val and hash_type are "
                              "read)",
                              name, i, m->key);
    }
    if (*seen & bit) return swin_error_set(err, SWIN_ERR_FORMAT, "%s: entry %d: %s repeated", name, i, m->key);
    *seen |= bit;
    return SWIN_OK;
}

/* Entry i (from 1) of the list into out->file[i - 1]: a mapping of the four keys, the hash of its
 * type's length in hex, a path no earlier entry has. */
static swin_status read_entry(const char *name, int i, const json_node *e, struct fetch_large_files *out,
                              swin_error *err)
{
    struct fetch_large_file *f = &out->file[i - 1];
    if (e->kind != JSON_OBJECT)
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: entry %d is not a mapping ('- path: ...')", name, i);
    unsigned seen = 0;
    for (const json_node *m = e->child; m; m = m->next) {
        swin_status st = store(name, i, f, &seen, m, err);
        if (st) return st;
    }
    if (seen != HAS_ALL)
        return swin_error_set(err, SWIN_ERR_FORMAT,
                              "%s: entry %d needs path, url, hash_val and hash_type (swinrun downloads "
                              "only files it can check)",
                              name, i);
    size_t digits = hex_digits_of(f->hash_type);
    bool hex = strlen(f->hash_val) == digits;
    for (size_t k = 0; hex && k < digits; k++) hex = isxdigit((unsigned char)f->hash_val[k]) != 0;
    if (!hex)
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: entry %d: hash_val is not %zu hex digits", name, i, digits);
    for (int k = 0; k + 1 < i; k++)
        if (!strcmp(out->file[k].path, f->path))
            return swin_error_set(err, SWIN_ERR_FORMAT, "%s: entry %d repeats a path", name, i);
    return SWIN_OK;
}

static swin_status read_list(const char *name, const json_node *root, struct fetch_large_files *out, swin_error *err)
{
    const json_node *list = swin_json_get(root, "large_files");
    if (!list) return swin_error_set(err, SWIN_ERR_FORMAT, "%s has no 'large_files:' list at its top level", name);
    if (list->kind != JSON_ARRAY) return swin_error_set(err, SWIN_ERR_FORMAT, "%s: 'large_files' is not a list", name);
    if (!list->child) return swin_error_set(err, SWIN_ERR_FORMAT, "%s lists no file", name);
    for (const json_node *e = list->child; e; e = e->next) {
        if (out->n == FETCH_MAX_LARGE_FILES)
            return swin_error_set(err, SWIN_ERR_FORMAT, "%s lists more than %d files", name, FETCH_MAX_LARGE_FILES);
        swin_status st = read_entry(name, ++out->n, e, out, err);
        if (st) return st;
    }
    return SWIN_OK;
}

swin_status fetch_large_files_parse(const char *name, const char *text, size_t len, struct fetch_large_files *out,
                                    swin_error *err)
{
    memset(out, 0, sizeof *out);
    if (len > FETCH_MANIFEST_MAX_BYTES)
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s is larger than %d bytes", name, FETCH_MANIFEST_MAX_BYTES);
    char why[200];
    json_node *root = swin_yaml_parse(text, len, why, sizeof why);
    if (!root) return swin_error_set(err, SWIN_ERR_FORMAT, "%s: not valid YAML (%s)", name, why);
    swin_status st = root->kind == JSON_OBJECT
                         ? read_list(name, root, out, err)
                         : swin_error_set(err, SWIN_ERR_FORMAT, "%s is not a mapping ('large_files:')", name);
    swin_json_free(root);
    if (st) memset(out, 0, sizeof *out);
    return st;
}

swin_status fetch_metadata_version(const char *text, size_t len, char *version, size_t cap, swin_error *err)
{
    char why[160];
    json_node *root = swin_json_parse(text, len, why, sizeof why);
    if (!root) return swin_error_set(err, SWIN_ERR_FORMAT, "configs/metadata.json: not valid JSON (%s)", why);
    const json_node *v = swin_json_get(root, "version");
    const char *t = v && v->kind == JSON_STRING ? v->text : "";
    size_t n = strlen(t);
    bool ok = n && n < cap;
    for (size_t i = 0; ok && i < n; i++) ok = isalnum((unsigned char)t[i]) || strchr("._+-", t[i]);
    if (ok) memcpy(version, t, n + 1);
    swin_json_free(root);
    if (ok) return SWIN_OK;
    return swin_error_set(err, SWIN_ERR_FORMAT,
                          "configs/metadata.json has no \"version\": \"...\" of at most %zu "
                          "characters [A-Za-z0-9._+-]",
                          cap - 1);
}
