/* large_files.yml and metadata.json's version for swinrun fetch (apps/cli/fetch_manifest.h).
 * The YAML subset, line by line:
 *
 *   large_files:                      the one top-level key, at column 0
 *     - path: "models/model.pt"       an item: '-' at some column d (0 too), its first key after "- "
 *       url: "https://..."            the item's other keys at the same column as its first
 *       hash_val: "..."
 *       hash_type: "md5"
 *
 * Blank lines and lines starting with '#' are skipped; a value may end in " # comment".
 * Tabs, NUL bytes, flow collections, anchors, tags and multi-line scalars are refused. */
#include "apps/cli/fetch_manifest.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#define VALUE_MAX 2048

struct line {
    const char *s; /* the line without its end of line */
    size_t n;
    int number; /* 1-based */
};

static bool blank_or_comment(const struct line *l)
{
    size_t i = 0;
    while (i < l->n && l->s[i] == ' ') i++;
    return i == l->n || l->s[i] == '#';
}

static size_t indent_of(const struct line *l)
{
    size_t i = 0;
    while (i < l->n && l->s[i] == ' ') i++;
    return i;
}

/* The rest of a line after a value: spaces, then nothing or a comment. */
static bool only_comment(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && s[i] == ' ') i++;
    return i == n || (s[i] == '#' && i > 0);
}

/* Parses the scalar in s[0..n) into out (NUL-terminated, at most VALUE_MAX - 1 bytes). */
static swin_status scalar(const struct line *l, const char *s, size_t n, char *out, swin_error *err)
{
    size_t i = 0, k = 0;
    while (i < n && s[i] == ' ') i++;
    if (i == n) return swin_error_set(err, SWIN_ERR_FORMAT, "large_files.yml line %d: empty value", l->number);
    char q = s[i];
    if (q == '"' || q == '\'') {
        for (i++;; i++) {
            if (i >= n)
                return swin_error_set(err, SWIN_ERR_FORMAT, "large_files.yml line %d: unterminated quoted value",
                                      l->number);
            char c = s[i];
            if (c == q) {
                if (q == '\'' && i + 1 < n && s[i + 1] == '\'') i++; /* '' is a quote in single quotes */
                else break;
            } else if (q == '"' && c == '\\') {
                if (i + 1 >= n || (s[i + 1] != '"' && s[i + 1] != '\\'))
                    return swin_error_set(err, SWIN_ERR_FORMAT,
                                          "large_files.yml line %d: only \\\" and \\\\ escapes are read", l->number);
                i++;
            }
            if (k + 1 >= VALUE_MAX)
                return swin_error_set(err, SWIN_ERR_FORMAT, "large_files.yml line %d: value longer than %d bytes",
                                      l->number, VALUE_MAX - 1);
            out[k++] = s[i];
        }
        if (!only_comment(s + i + 1, n - i - 1))
            return swin_error_set(err, SWIN_ERR_FORMAT, "large_files.yml line %d: text after a quoted value",
                                  l->number);
    } else {
        if (strchr("[]{}&*!|>%@`", q))
            return swin_error_set(err, SWIN_ERR_FORMAT,
                                  "large_files.yml line %d: '%c' starts YAML swinrun does not read (plain or "
                                  "quoted scalars only)",
                                  l->number, q);
        size_t end = i;
        while (end < n && !(s[end] == '#' && end > 0 && s[end - 1] == ' ')) end++;
        while (end > i && s[end - 1] == ' ') end--;
        if (end - i >= VALUE_MAX)
            return swin_error_set(err, SWIN_ERR_FORMAT, "large_files.yml line %d: value longer than %d bytes",
                                  l->number, VALUE_MAX - 1);
        memcpy(out, s + i, end - i);
        k = end - i;
    }
    out[k] = 0;
    if (!k) return swin_error_set(err, SWIN_ERR_FORMAT, "large_files.yml line %d: empty value", l->number);
    return SWIN_OK;
}

/* "key: value" at s[0..n): the key into key (at most 15 bytes), the value parsed. */
static swin_status key_value(const struct line *l, const char *s, size_t n, char key[16], char *value, swin_error *err)
{
    size_t i = 0;
    while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '_')) i++;
    if (!i || i >= 16 || i >= n || s[i] != ':' || (i + 1 < n && s[i + 1] != ' '))
        return swin_error_set(err, SWIN_ERR_FORMAT, "large_files.yml line %d: expected 'key: value'", l->number);
    memcpy(key, s, i);
    key[i] = 0;
    return scalar(l, s + i + 1, n - i - 1, value, err);
}

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

/* Stores one key of an item; refuses unknown and repeated keys and values that do not fit. */
static swin_status store(const struct line *l, struct fetch_large_file *f, unsigned *seen, const char *key,
                         const char *value, swin_error *err)
{
    size_t n = strlen(value);
    unsigned bit;
    if (!strcmp(key, "path")) {
        if (!safe_path(value))
            return swin_error_set(err, SWIN_ERR_FORMAT,
                                  "large_files.yml line %d: path must be relative, of A-Z a-z 0-9 . _ - and '/', "
                                  "without '.' or '..'",
                                  l->number);
        memcpy(f->path, value, n + 1);
        bit = HAS_PATH;
    } else if (!strcmp(key, "url")) {
        if (!safe_url(value))
            return swin_error_set(err, SWIN_ERR_FORMAT,
                                  "large_files.yml line %d: url must be http:// or https:// without spaces", l->number);
        memcpy(f->url, value, n + 1);
        bit = HAS_URL;
    } else if (!strcmp(key, "hash_val")) {
        if (n >= sizeof f->hash_val)
            return swin_error_set(err, SWIN_ERR_FORMAT, "large_files.yml line %d: hash_val too long", l->number);
        for (size_t i = 0; i <= n; i++) f->hash_val[i] = (char)tolower((unsigned char)value[i]);
        bit = HAS_HASH_VAL;
    } else if (!strcmp(key, "hash_type")) {
        if (n >= sizeof f->hash_type) n = sizeof f->hash_type - 1; /* too long for a known name */
        for (size_t i = 0; i < n; i++) f->hash_type[i] = (char)tolower((unsigned char)value[i]);
        f->hash_type[n] = 0;
        if (!hex_digits_of(f->hash_type))
            return swin_error_set(err, SWIN_ERR_FORMAT,
                                  "large_files.yml line %d: hash_type must be md5, sha1, sha256 or sha512", l->number);
        bit = HAS_HASH_TYPE;
    } else {
        return swin_error_set(err, SWIN_ERR_FORMAT,
                              "large_files.yml line %d: unknown key (path, url, hash_val and hash_type are read)",
                              l->number);
    }
    if (*seen & bit) return swin_error_set(err, SWIN_ERR_FORMAT, "large_files.yml line %d: key repeated", l->number);
    *seen |= bit;
    return SWIN_OK;
}

static swin_status finish_item(const struct fetch_large_files *out, int item_line, unsigned seen, swin_error *err)
{
    const struct fetch_large_file *f = &out->file[out->n - 1];
    if (seen != HAS_ALL)
        return swin_error_set(err, SWIN_ERR_FORMAT,
                              "large_files.yml: the item of line %d needs path, url, hash_val and hash_type "
                              "(swinrun downloads only files it can check)",
                              item_line);
    size_t digits = hex_digits_of(f->hash_type);
    bool hex = strlen(f->hash_val) == digits;
    for (size_t i = 0; hex && i < digits; i++) hex = isxdigit((unsigned char)f->hash_val[i]) != 0;
    if (!hex)
        return swin_error_set(err, SWIN_ERR_FORMAT,
                              "large_files.yml: the item of line %d: hash_val is not %zu hex digits", item_line,
                              digits);
    for (int i = 0; i + 1 < out->n; i++)
        if (!strcmp(out->file[i].path, f->path))
            return swin_error_set(err, SWIN_ERR_FORMAT, "large_files.yml: the item of line %d repeats a path",
                                  item_line);
    return SWIN_OK;
}

swin_status fetch_large_files_parse(const char *text, size_t len, struct fetch_large_files *out, swin_error *err)
{
    char value[VALUE_MAX];
    memset(out, 0, sizeof *out);
    if (len > FETCH_MANIFEST_MAX_BYTES)
        return swin_error_set(err, SWIN_ERR_FORMAT, "large_files.yml is larger than %d bytes",
                              FETCH_MANIFEST_MAX_BYTES);
    if (memchr(text, 0, len) || memchr(text, '\t', len))
        return swin_error_set(err, SWIN_ERR_FORMAT, "large_files.yml holds a NUL byte or a tab");
    bool header = false;
    size_t item_col = 0, key_col = 0; /* of the current item: its '-' and its keys */
    int item_line = 0;
    unsigned seen = 0;
    struct line l = {text, 0, 0};
    for (size_t pos = 0; pos < len;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len;
        l = (struct line){text + pos, end - pos, l.number + 1};
        pos = end + 1;
        if (l.n && l.s[l.n - 1] == '\r') l.n--;
        if (blank_or_comment(&l)) continue;
        size_t ind = indent_of(&l);
        const char *s = l.s + ind;
        size_t n = l.n - ind;
        if (!header) {
            if (ind || n < 12 || memcmp(s, "large_files:", 12) || !only_comment(s + 12, n - 12))
                return swin_error_set(err, SWIN_ERR_FORMAT, "large_files.yml line %d: expected 'large_files:'",
                                      l.number);
            header = true;
            continue;
        }
        char key[16];
        swin_status st;
        if (n >= 2 && s[0] == '-' && s[1] == ' ') {
            if (out->n && ind != item_col)
                return swin_error_set(err, SWIN_ERR_FORMAT, "large_files.yml line %d: item not aligned with the first",
                                      l.number);
            if (out->n && (st = finish_item(out, item_line, seen, err))) return st;
            if (out->n == FETCH_MAX_LARGE_FILES)
                return swin_error_set(err, SWIN_ERR_FORMAT, "large_files.yml lists more than %d files",
                                      FETCH_MAX_LARGE_FILES);
            out->n++;
            item_col = ind;
            item_line = l.number;
            seen = 0;
            size_t k = 2;
            while (k < n && s[k] == ' ') k++;
            key_col = ind + k;
            s += k;
            n -= k;
        } else if (!out->n || ind != key_col) {
            return swin_error_set(err, SWIN_ERR_FORMAT,
                                  "large_files.yml line %d: expected an item ('- path: ...') "
                                  "or a key aligned with its item's first",
                                  l.number);
        }
        if ((st = key_value(&l, s, n, key, value, err))) return st;
        if ((st = store(&l, &out->file[out->n - 1], &seen, key, value, err))) return st;
    }
    if (!header) return swin_error_set(err, SWIN_ERR_FORMAT, "large_files.yml is empty");
    if (!out->n) return swin_error_set(err, SWIN_ERR_FORMAT, "large_files.yml lists no file");
    return finish_item(out, item_line, seen, err);
}

swin_status fetch_metadata_version(const char *text, size_t len, char *version, size_t cap, swin_error *err)
{
    static const char key[] = "\"version\"";
    size_t kn = sizeof key - 1;
    for (size_t i = 0; i + kn <= len; i++) {
        if (memcmp(text + i, key, kn)) continue;
        size_t p = i + kn;
        while (p < len && isspace((unsigned char)text[p])) p++;
        if (p >= len || text[p] != ':') continue;
        p++;
        while (p < len && isspace((unsigned char)text[p])) p++;
        if (p >= len || text[p] != '"') continue;
        size_t start = ++p;
        while (p < len && p - start < cap && (isalnum((unsigned char)text[p]) || (text[p] && strchr("._+-", text[p]))))
            p++;
        if (p >= len || text[p] != '"' || p == start || p - start >= cap) break;
        memcpy(version, text + start, p - start);
        version[p - start] = 0;
        return SWIN_OK;
    }
    return swin_error_set(err, SWIN_ERR_FORMAT,
                          "configs/metadata.json has no \"version\": \"...\" of at most %zu "
                          "characters [A-Za-z0-9._+-]",
                          cap - 1);
}
