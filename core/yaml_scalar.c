/* The YAML reader's scalars: scanning plain, quoted and block scalars with PyYAML's folding
 * rules, and resolving a plain scalar to null, a boolean, a number or a string as PyYAML's
 * YAML 1.1 resolver does (core/yaml.h). */
#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/utf8.h"
#include "core/yaml_internal.h"

void swin_yaml_fail(yaml *y, const char *fmt, ...)
{
    if (y->failed) return;
    y->failed = true;
    if (!y->why || !y->why_len) return;
    int n = snprintf(y->why, y->why_len, "line %d, column %d: ", y->line, yaml_column(y) + 1);
    if (n < 0 || (size_t)n >= y->why_len) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(y->why + n, y->why_len - (size_t)n, fmt, ap);
    va_end(ap);
}

void swin_yaml_eat_break(yaml *y)
{
    if (yaml_at(y, 0) == '\r') y->p++;
    if (yaml_at(y, 0) == '\n') y->p++;
    y->line++;
    y->line_start = y->p;
}

bool swin_yaml_doc_marker(const yaml *y)
{
    return yaml_column(y) == 0 && y->end - y->p >= 3 && (!memcmp(y->p, "---", 3) || !memcmp(y->p, "...", 3)) &&
           yaml_space_or_end(yaml_at(y, 3));
}

bool swin_yaml_put(yaml *y, yaml_text *t, const char *s, size_t n)
{
    if (y->failed) return false;
    if (t->n + n + 1 > t->cap) {
        if (t->n + n + 1 > YAML_TEXT_MAX) {
            swin_yaml_fail(y, "a scalar longer than %u MiB", YAML_TEXT_MAX >> 20);
            return false;
        }
        size_t cap = t->cap ? t->cap : 64;
        while (cap < t->n + n + 1) cap *= 2;
        char *d = realloc(t->d, cap);
        if (!d) {
            swin_yaml_fail(y, "out of memory");
            return false;
        }
        t->d = d;
        t->cap = cap;
    }
    if (n) memcpy(t->d + t->n, s, n);
    t->n += n;
    t->d[t->n] = 0;
    return true;
}

static bool put_repeated(yaml *y, yaml_text *t, const char *s, size_t times)
{
    for (size_t i = 0; i < times; i++)
        if (!swin_yaml_put(y, t, s, strlen(s))) return false;
    return true;
}

json_node *swin_yaml_node(yaml *y, json_kind kind, const char *text)
{
    if (y->failed) return NULL;
    size_t len = text ? strlen(text) + 1 : 0;
    if (++y->nodes > YAML_NODES_MAX || (y->bytes += len) > YAML_TEXT_MAX) {
        swin_yaml_fail(y, "more than %u nodes or %u MiB of text (aliases copy what they name)", YAML_NODES_MAX,
                       YAML_TEXT_MAX >> 20);
        return NULL;
    }
    json_node *n = calloc(1, sizeof *n);
    if (n && text && (n->text = malloc(len))) memcpy(n->text, text, len);
    if (!n || (text && !n->text)) {
        free(n);
        swin_yaml_fail(y, "out of memory");
        return NULL;
    }
    n->kind = kind;
    return n;
}

/* ---- plain scalars (PyYAML's scan_plain and scan_plain_spaces) ------------------------------ */

/* The spaces and line breaks after a chunk into sp, folded: spaces as they are when no break
 * follows, else one break a space and each further one a newline. sp stays empty at a
 * document marker or when nothing was passed. */
static void plain_spaces(yaml *y, yaml_text *sp, bool *broke)
{
    sp->n = 0;
    const char *ws = y->p;
    while (yaml_at(y, 0) == ' ') y->p++;
    if (!yaml_break(yaml_at(y, 0))) {
        if (y->p > ws) swin_yaml_put(y, sp, ws, (size_t)(y->p - ws));
        return;
    }
    swin_yaml_eat_break(y);
    *broke = true;
    if (swin_yaml_doc_marker(y)) return;
    size_t breaks = 0;
    while (yaml_at(y, 0) == ' ' || yaml_break(yaml_at(y, 0))) {
        if (yaml_at(y, 0) == ' ') {
            y->p++;
            continue;
        }
        swin_yaml_eat_break(y);
        breaks++;
        if (swin_yaml_doc_marker(y)) return;
    }
    if (!breaks) swin_yaml_put(y, sp, " ", 1);
    else put_repeated(y, sp, "\n", breaks);
}

bool swin_yaml_plain_scalar(yaml *y, int indent, yaml_text *t, bool *lines)
{
    yaml_text sp = {0};
    bool broke = false;
    *lines = false;
    for (;;) {
        if (yaml_at(y, 0) == '#') break;
        size_t len = 0;
        for (;; len++) {
            char c = yaml_at(y, len), next = yaml_at(y, len + 1);
            if (yaml_space_or_end(c)) break;
            if (c == ':' && (yaml_space_or_end(next) || (y->flow && yaml_in_set(next, ",[]{}")))) break;
            if (y->flow && yaml_in_set(c, ",?[]{}")) break;
        }
        if (!len) break;
        if (broke) *lines = true;
        if (!swin_yaml_put(y, t, sp.d, sp.n) || !swin_yaml_put(y, t, y->p, len)) break;
        y->p += len;
        broke = false;
        plain_spaces(y, &sp, &broke);
        if (!sp.n || yaml_at(y, 0) == '#' || (!y->flow && yaml_column(y) < indent + 1)) break;
    }
    free(sp.d);
    if (!t->d) swin_yaml_put(y, t, "", 0);
    return !y->failed;
}

/* ---- quoted scalars (PyYAML's scan_flow_scalar) --------------------------------------------- */

/* Line breaks and the indentation after them; how many breaks. */
static size_t quoted_breaks(yaml *y)
{
    size_t n = 0;
    for (;;) {
        if (swin_yaml_doc_marker(y)) {
            swin_yaml_fail(y, "a document marker (--- or ...) inside a quoted scalar");
            return n;
        }
        while (yaml_at(y, 0) == ' ' || yaml_at(y, 0) == '\t') y->p++;
        if (!yaml_break(yaml_at(y, 0))) return n;
        swin_yaml_eat_break(y);
        n++;
    }
}

static void put_utf8(yaml *y, yaml_text *t, uint32_t cp)
{
    char b[4];
    swin_yaml_put(y, t, b, swin_utf8_encode(cp, b));
}

/* A double-quoted scalar's escape, y->p after the backslash. */
static void escape(yaml *y, yaml_text *t)
{
    static const char simple[] = "abtnvfre \"\\/\t";
    static const char value[] = "\a\b\t\n\v\f\r\x1b \"\\/\t";
    char c = yaml_at(y, 0);
    const char *s = yaml_in_set(c, simple) ? strchr(simple, c) : NULL;
    if (s) {
        swin_yaml_put(y, t, &value[s - simple], 1);
        y->p++;
        return;
    }
    static const struct {
        char c;
        uint32_t cp;
    } named[] = {{'N', 0x85}, {'_', 0xA0}, {'L', 0x2028}, {'P', 0x2029}};
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (c == named[i].c) {
            put_utf8(y, t, named[i].cp);
            y->p++;
            return;
        }
    if (yaml_break(c)) { /* an escaped line break: the lines join with nothing between */
        swin_yaml_eat_break(y);
        put_repeated(y, t, "\n", quoted_breaks(y));
        return;
    }
    int digits = c == 'x' ? 2 : c == 'u' ? 4 : c == 'U' ? 8 : 0;
    if (!digits && c != '0') {
        if ((unsigned char)c >= 0x20 && (unsigned char)c < 0x7F) swin_yaml_fail(y, "an unknown escape \\%c", c);
        else swin_yaml_fail(y, "an unknown escape: a backslash before byte 0x%02X", (unsigned char)c);
        return;
    }
    uint32_t cp = 0;
    y->p++;
    for (int i = 0; i < digits; i++, y->p++) {
        char h = yaml_at(y, 0);
        if (!isxdigit((unsigned char)h)) {
            swin_yaml_fail(y, "expected %d hexadecimal digits after \\%c", digits, c);
            return;
        }
        cp = cp * 16 + (uint32_t)(isdigit((unsigned char)h) ? h - '0' : tolower((unsigned char)h) - 'a' + 10);
    }
    if (cp == 0) swin_yaml_fail(y, "a NUL character escaped in a string");
    else if ((cp >= 0xD800 && cp < 0xE000) || cp > 0x10FFFF)
        swin_yaml_fail(y, "\\%c escapes U+%X, not a character", c, cp);
    else put_utf8(y, t, cp);
}

bool swin_yaml_quoted_scalar(yaml *y, yaml_text *t)
{
    char quote = *y->p++;
    bool dq = quote == '"';
    swin_yaml_put(y, t, "", 0);
    while (!y->failed) {
        for (;;) { /* the text up to the next space, break or quote */
            size_t len = 0;
            while (!yaml_space_or_end(yaml_at(y, len)) && !yaml_in_set(yaml_at(y, len), "'\"\\")) len++;
            swin_yaml_put(y, t, y->p, len);
            y->p += len;
            char c = yaml_at(y, 0);
            if (!dq && c == '\'' && yaml_at(y, 1) == '\'') {
                swin_yaml_put(y, t, "'", 1);
                y->p += 2;
            } else if ((dq && c == '\'') || (!dq && (c == '"' || c == '\\'))) {
                swin_yaml_put(y, t, &c, 1);
                y->p++;
            } else if (dq && c == '\\') {
                y->p++;
                escape(y, t);
            } else {
                break;
            }
            if (y->failed) return false;
        }
        if (yaml_at(y, 0) == quote) {
            y->p++;
            break;
        }
        const char *ws = y->p;
        while (yaml_at(y, 0) == ' ' || yaml_at(y, 0) == '\t') y->p++;
        char c = yaml_at(y, 0);
        if (!c) {
            swin_yaml_fail(y, "a %s-quoted scalar not closed before the end of the text", dq ? "double" : "single");
        } else if (yaml_break(c)) {
            swin_yaml_eat_break(y);
            size_t breaks = quoted_breaks(y);
            if (!breaks) swin_yaml_put(y, t, " ", 1);
            else put_repeated(y, t, "\n", breaks);
        } else {
            swin_yaml_put(y, t, ws, (size_t)(y->p - ws));
        }
    }
    return !y->failed;
}

/* ---- block scalars (PyYAML's scan_block_scalar) --------------------------------------------- */

/* Passes indentation up to column indent and the empty lines; how many line breaks. */
static size_t block_breaks(yaml *y, int indent)
{
    size_t n = 0;
    while (yaml_column(y) < indent && yaml_at(y, 0) == ' ') y->p++;
    while (yaml_break(yaml_at(y, 0))) {
        swin_yaml_eat_break(y);
        n++;
        while (yaml_column(y) < indent && yaml_at(y, 0) == ' ') y->p++;
    }
    return n;
}

/* The header after | or >: chomping (+ keep, - strip) and an indentation digit, either order. */
static bool block_header(yaml *y, int *chomp, int *increment)
{
    for (int i = 0; i < 2; i++) {
        char c = yaml_at(y, 0);
        if ((c == '+' || c == '-') && !*chomp) {
            *chomp = c == '+' ? 1 : -1;
            y->p++;
        } else if (isdigit((unsigned char)c) && !*increment) {
            if (c == '0') {
                swin_yaml_fail(y, "an indentation indicator of 0 (it counts from 1)");
                return false;
            }
            *increment = c - '0';
            y->p++;
        }
    }
    char c = yaml_at(y, 0);
    if (c && c != ' ' && !yaml_break(c)) {
        swin_yaml_fail(y, "expected a chomping or indentation indicator, a comment or a line break after | or >");
        return false;
    }
    while (yaml_at(y, 0) == ' ') y->p++;
    if (yaml_at(y, 0) == '#')
        while (yaml_at(y, 0) && !yaml_break(yaml_at(y, 0))) y->p++;
    if (yaml_at(y, 0) && !yaml_break(yaml_at(y, 0))) {
        swin_yaml_fail(y, "expected a comment or a line break after a block scalar's header");
        return false;
    }
    if (yaml_at(y, 0)) swin_yaml_eat_break(y);
    return true;
}

bool swin_yaml_block_scalar(yaml *y, int indent, yaml_text *t)
{
    bool folded = *y->p++ == '>';
    int chomp = 0, increment = 0;
    swin_yaml_put(y, t, "", 0);
    if (!block_header(y, &chomp, &increment)) return false;
    int min_indent = indent + 1 < 1 ? 1 : indent + 1, ind;
    size_t breaks = 0;
    if (!increment) { /* the indentation of the first non-empty line, or deeper empty lines' */
        int max_indent = 0;
        while (yaml_at(y, 0) == ' ' || yaml_break(yaml_at(y, 0))) {
            if (yaml_at(y, 0) == ' ') {
                y->p++;
                if (yaml_column(y) > max_indent) max_indent = yaml_column(y);
            } else {
                swin_yaml_eat_break(y);
                breaks++;
            }
        }
        ind = max_indent > min_indent ? max_indent : min_indent;
    } else {
        ind = min_indent + increment - 1;
        breaks = block_breaks(y, ind);
    }
    bool line_break = false;
    while (yaml_column(y) == ind && yaml_at(y, 0) && !y->failed) {
        put_repeated(y, t, "\n", breaks);
        bool leading_non_space = yaml_at(y, 0) != ' ' && yaml_at(y, 0) != '\t';
        size_t len = 0;
        while (yaml_at(y, len) && !yaml_break(yaml_at(y, len))) len++;
        swin_yaml_put(y, t, y->p, len);
        y->p += len;
        line_break = yaml_break(yaml_at(y, 0));
        if (line_break) swin_yaml_eat_break(y);
        breaks = block_breaks(y, ind);
        if (yaml_column(y) != ind || !yaml_at(y, 0)) break;
        if (folded && line_break && leading_non_space && yaml_at(y, 0) != ' ' && yaml_at(y, 0) != '\t') {
            if (!breaks) swin_yaml_put(y, t, " ", 1);
        } else if (line_break) {
            swin_yaml_put(y, t, "\n", 1);
        }
    }
    if (chomp != -1 && line_break) swin_yaml_put(y, t, "\n", 1);
    if (chomp == 1) put_repeated(y, t, "\n", breaks);
    return !y->failed;
}

/* ---- resolving a plain scalar (PyYAML's implicit resolvers, in their order) ----------------- */

static bool one_of(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(s, *list)) return true;
    return false;
}

static const char *const yes_words[] = {"yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON", NULL};
static const char *const no_words[] = {"no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF", NULL};
static const char *const null_words[] = {"", "~", "null", "Null", "NULL", NULL};
static const char *const inf_words[] = {".inf", ".Inf", ".INF", NULL};
static const char *const nan_words[] = {".nan", ".NaN", ".NAN", NULL};

static const char *digits_or_underscores(const char *q, const char *set)
{
    while (yaml_in_set(*q, set) || *q == '_') q++;
    return q;
}

/* (:[0-5]?[0-9])+ at q; where it ends, or NULL when there is none. */
static const char *base60_groups(const char *q)
{
    if (*q != ':') return NULL;
    while (*q == ':') {
        q++;
        if (yaml_in_set(q[0], "012345") && isdigit((unsigned char)q[1])) q += 2;
        else if (isdigit((unsigned char)q[0])) q++;
        else return NULL;
    }
    return q;
}

/* [eE][-+][0-9]+, optional */
static const char *exponent(const char *q)
{
    if (*q != 'e' && *q != 'E') return q;
    if (q[1] != '+' && q[1] != '-') return NULL;
    q += 2;
    if (!isdigit((unsigned char)*q)) return NULL;
    while (isdigit((unsigned char)*q)) q++;
    return q;
}

static bool is_float(const char *s)
{
    if (one_of(s, nan_words)) return true;
    const char *q = s + (*s == '+' || *s == '-');
    if (one_of(q, inf_words)) return true;
    if (*s == '.') { /* \.[0-9][0-9_]*(exponent)? with no sign */
        q = s + 1;
        if (!isdigit((unsigned char)*q)) return false;
        q = exponent(digits_or_underscores(q, "0123456789"));
        return q && !*q;
    }
    if (!isdigit((unsigned char)*q)) return false;
    q = digits_or_underscores(q, "0123456789");
    if (*q == ':' && !(q = base60_groups(q))) return false;
    if (*q != '.') return false;
    q = digits_or_underscores(q + 1, "0123456789");
    if (strchr(s, ':')) return !*q;
    q = exponent(q);
    return q && !*q;
}

static bool is_int(const char *s)
{
    const char *q = s + (*s == '+' || *s == '-');
    if (q[0] == '0' && (q[1] == 'b' || q[1] == 'x')) {
        const char *set = q[1] == 'b' ? "01" : "0123456789abcdefABCDEF";
        return q[2] && !*digits_or_underscores(q + 2, set);
    }
    if (q[0] == '0') return !*digits_or_underscores(q + 1, "01234567");
    if (!yaml_in_set(q[0], "123456789")) return false;
    q = digits_or_underscores(q + 1, "0123456789");
    return !*q || ((q = base60_groups(q)) && !*q);
}

/* s without '_', lowercased when lower; the sign taken off into *negative. */
static void clean_number(const char *s, bool lower, char *out, size_t cap, bool *negative)
{
    *negative = *s == '-';
    if (*s == '-' || *s == '+') s++;
    size_t n = 0;
    for (; *s && n + 1 < cap; s++)
        if (*s != '_') out[n++] = lower ? (char)tolower((unsigned char)*s) : *s;
    out[n] = 0;
}

/* PyYAML's construct_yaml_int on s, as decimal text; false when it is not one PyYAML reads, or
 * when a binary, octal, hex or base-60 one's magnitude passes 2^63. */
static bool int_text(const char *s, char *out, size_t cap)
{
    char v[128];
    bool neg;
    if (strlen(s) >= sizeof v) return false;
    clean_number(s, false, v, sizeof v, &neg);
    int base = 10;
    const char *digits = v;
    if (!strcmp(v, "0")) {
        snprintf(out, cap, "0");
        return true;
    }
    if (v[0] == '0' && v[1] == 'b') base = 2, digits = v + 2;
    else if (v[0] == '0' && v[1] == 'x') base = 16, digits = v + 2;
    else if (v[0] == '0') base = 8, digits = v + 1;
    if (!*digits) return false;
    if (base == 10 && !strchr(v, ':')) { /* any length, as Python's int */
        if (digits[strspn(digits, "0123456789")]) return false;
        snprintf(out, cap, "%s%s", neg ? "-" : "", digits);
        return true;
    }
    unsigned long long mag = 0, limit = (unsigned long long)INT64_MAX + (neg ? 1u : 0u);
    if (strchr(v, ':')) { /* base 60: 190:20:30 */
        for (const char *q = v; *q;) {
            char *end;
            unsigned long long part = strtoull(q, &end, 10);
            if (end == q || (*end && *end != ':') || mag > (limit - part) / 60) return false;
            mag = mag * 60 + part;
            q = *end ? end + 1 : end;
        }
    } else {
        for (const char *q = digits; *q; q++) {
            int d = isdigit((unsigned char)*q)   ? *q - '0'
                    : isalpha((unsigned char)*q) ? tolower((unsigned char)*q) - 'a' + 10
                                                 : 99;
            if (d >= base || mag > (limit - (unsigned)d) / (unsigned)base) return false;
            mag = mag * (unsigned)base + (unsigned)d;
        }
    }
    if (mag == 0) neg = false;
    snprintf(out, cap, "%s%llu", neg ? "-" : "", mag);
    return true;
}

/* PyYAML's construct_yaml_float on s, as text strtod reads the same way. */
static bool float_text(const char *s, char *out, size_t cap)
{
    char v[128];
    bool neg;
    if (strlen(s) >= sizeof v) return false;
    clean_number(s, true, v, sizeof v, &neg);
    if (!strcmp(v, ".inf")) {
        snprintf(out, cap, "%sinf", neg ? "-" : "");
        return true;
    }
    if (!strcmp(v, ".nan")) {
        snprintf(out, cap, "nan");
        return true;
    }
    double value = 0;
    char *end;
    if (strchr(v, ':')) { /* base 60 */
        for (const char *q = v; *q;) {
            double part = strtod(q, &end);
            if (end == q || (*end && *end != ':')) return false;
            value = value * 60 + part;
            q = *end ? end + 1 : end;
        }
    } else {
        if (strchr(v, 'x') || strchr(v, 'p')) return false; /* strtod's hex floats, which Python refuses */
        value = strtod(v, &end);
        if (end == v || *end) return false;
        snprintf(out, cap, "%s%s%s", neg ? "-" : "", v, strpbrk(v, ".ein") ? "" : ".0"); /* !!float 1: 1.0 */
        return true;
    }
    snprintf(out, cap, "%.17g", neg ? -value : value);
    if (!strpbrk(out, ".ein")) strncat(out, ".0", cap - strlen(out) - 1);
    return true;
}

static json_node *bool_node(yaml *y, bool v)
{
    return swin_yaml_node(y, JSON_BOOL, v ? "true" : "false");
}

static json_node *tagged(yaml *y, const char *s, const char *tag)
{
    char num[160];
    if (!strcmp(tag, "!!str")) return swin_yaml_node(y, JSON_STRING, s);
    if (!strcmp(tag, "!!null")) return swin_yaml_node(y, JSON_NULL, NULL);
    if (!strcmp(tag, "!!bool")) {
        char low[8];
        size_t n = 0;
        for (; s[n] && n + 1 < sizeof low; n++) low[n] = (char)tolower((unsigned char)s[n]);
        low[n] = 0;
        if (!s[n] && one_of(low, yes_words)) return bool_node(y, true);
        if (!s[n] && one_of(low, no_words)) return bool_node(y, false);
    } else if (!strcmp(tag, "!!int")) {
        if (int_text(s, num, sizeof num)) return swin_yaml_node(y, JSON_NUMBER, num);
    } else if (!strcmp(tag, "!!float")) {
        if (float_text(s, num, sizeof num)) return swin_yaml_node(y, JSON_NUMBER, num);
    } else {
        swin_yaml_fail(y, "the tag %.40s on a scalar", tag);
        return NULL;
    }
    swin_yaml_fail(y, "'%.40s%s' is not a %s", s, strlen(s) > 40 ? "..." : "", tag + 2);
    return NULL;
}

json_node *swin_yaml_scalar_node(yaml *y, const yaml_text *t, bool plain, const char *tag)
{
    const char *s = t->d ? t->d : "";
    if (tag && strcmp(tag, "!")) return tagged(y, s, tag);
    if (!plain && !tag) return swin_yaml_node(y, JSON_STRING, s);
    char num[160];
    if (one_of(s, yes_words)) return bool_node(y, true);
    if (one_of(s, no_words)) return bool_node(y, false);
    if (is_float(s)) {
        if (float_text(s, num, sizeof num)) return swin_yaml_node(y, JSON_NUMBER, num);
        swin_yaml_fail(y, "'%.40s' reads as a float but is not one", s);
        return NULL;
    }
    if (is_int(s)) {
        if (int_text(s, num, sizeof num)) return swin_yaml_node(y, JSON_NUMBER, num);
        swin_yaml_fail(y, "'%.40s' reads as an integer that is not one or passes 64 bits", s);
        return NULL;
    }
    if (one_of(s, null_words)) return swin_yaml_node(y, JSON_NULL, NULL);
    if (!strcmp(s, "=")) {
        swin_yaml_fail(y, "'=' is YAML's value key, which yaml.safe_load refuses (quote it)");
        return NULL;
    }
    return swin_yaml_node(y, JSON_STRING, s);
}
