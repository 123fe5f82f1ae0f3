#include "core/json.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/utf8.h"

#define JSON_DEPTH_MAX 64

typedef struct parser {
    const char *s, *end;
    char *why;
    size_t why_len;
    bool failed;
} parser;

static void fail(parser *p, const char *fmt, ...) {
    if (p->failed) return;
    p->failed = true;
    if (p->why && p->why_len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->why, p->why_len, fmt, ap);
        va_end(ap);
    }
}

/* A byte for an error message: itself when printable, its hex code otherwise (a message
 * stays on one line whatever the file holds). */
static const char *shown_byte(char c, char buf[8]) {
    unsigned char u = (unsigned char)c;
    if (u >= 0x20 && u < 0x7F) snprintf(buf, 8, "'%c'", c);
    else snprintf(buf, 8, "0x%02X", u);
    return buf;
}

/* A decoded member name for an error message: its first 40 bytes, control bytes as '?'. */
static const char *shown_name(const char *name, char buf[48]) {
    size_t n = 0;
    for (; name[n] && n < 40; n++) buf[n] = ((unsigned char)name[n] < 0x20 || name[n] == 0x7F) ? '?' : name[n];
    if (name[n]) { memcpy(buf + n, "...", 3); n += 3; }
    buf[n] = '\0';
    return buf;
}

static void skip_space(parser *p) {
    while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r')) p->s++;
}

static json_node *node_new(parser *p, json_kind kind) {
    json_node *n = calloc(1, sizeof *n);
    if (!n) fail(p, "out of memory");
    else n->kind = kind;
    return n;
}

static bool hex4(parser *p, unsigned *cp) {
    if (p->end - p->s < 4) return false;
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p->s[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return false;
    }
    p->s += 4;
    *cp = v;
    return true;
}

/* A string at p->s (the opening quote); returns it decoded and NUL-terminated. Escapes never
 * grow the text (\uXXXX: 6 bytes in, at most 4 out), so the raw length bounds the output. */
static char *parse_string(parser *p) {
    p->s++;
    const char *start = p->s;
    while (p->s < p->end && *p->s != '"') p->s += (*p->s == '\\' && p->s + 1 < p->end) ? 2 : 1;
    if (p->s >= p->end) { fail(p, "unterminated string"); return NULL; }
    size_t raw = (size_t)(p->s - start);
    char *out = malloc(raw + 1);
    if (!out) { fail(p, "out of memory"); return NULL; }
    const char *q_end = p->s;
    p->s = start;
    size_t n = 0;
    while (p->s < q_end) {
        char c = *p->s++;
        if ((unsigned char)c < 0x20) { fail(p, "control character in a string"); free(out); return NULL; }
        if (c != '\\') { out[n++] = c; continue; }
        c = *p->s++;
        switch (c) {
        case '"': out[n++] = '"'; break;
        case '\\': out[n++] = '\\'; break;
        case '/': out[n++] = '/'; break;
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'n': out[n++] = '\n'; break;
        case 'r': out[n++] = '\r'; break;
        case 't': out[n++] = '\t'; break;
        case 'u': {
            unsigned cp;
            if (p->s > q_end || !hex4(p, &cp) || p->s > q_end) { fail(p, "bad \\u escape"); free(out); return NULL; }
            if (cp == 0) cp = 0xFFFD;  /* a NUL would cut the C string short */
            n += swin_utf8_encode(cp, out + n);
            break;
        }
        default: {
            char shown[8];
            fail(p, "bad escape: a backslash before %s", shown_byte(c, shown));
            free(out);
            return NULL;
        }
        }
    }
    out[n] = '\0';
    p->s = q_end + 1;
    return out;
}

static json_node *parse_value(parser *p, int depth);

/* Elements (or members, when object) until the closing bracket. */
static json_node *parse_container(parser *p, int depth, bool object) {
    json_node *n = node_new(p, object ? JSON_OBJECT : JSON_ARRAY);
    if (!n) return NULL;
    char close = object ? '}' : ']';
    p->s++;
    skip_space(p);
    if (p->s < p->end && *p->s == close) { p->s++; return n; }
    json_node **tail = &n->child;
    for (;;) {
        char *key = NULL;
        skip_space(p);
        if (object) {
            if (p->s >= p->end || *p->s != '"') { fail(p, "expected a member name"); break; }
            key = parse_string(p);
            if (!key) break;
            skip_space(p);
            if (p->s >= p->end || *p->s != ':') {
                char shown[48];
                fail(p, "expected ':' after \"%s\"", shown_name(key, shown));
                free(key);
                break;
            }
            p->s++;
        }
        json_node *v = parse_value(p, depth + 1);
        if (!v) { free(key); break; }
        v->key = key;
        *tail = v;
        tail = &v->next;
        skip_space(p);
        if (p->s < p->end && *p->s == ',') { p->s++; continue; }
        if (p->s < p->end && *p->s == close) { p->s++; return n; }
        fail(p, "expected ',' or '%c'", close);
        break;
    }
    swin_json_free(n);
    return NULL;
}

static json_node *parse_number(parser *p) {
    const char *start = p->s;
    if (p->s < p->end && *p->s == '-') p->s++;
    const char *digits = p->s;
    while (p->s < p->end && ((*p->s >= '0' && *p->s <= '9') || *p->s == '.' || *p->s == 'e' || *p->s == 'E' ||
                             *p->s == '+' || *p->s == '-'))
        p->s++;
    if (p->s == digits) {
        char shown[8];
        fail(p, "unexpected character %s", shown_byte(*start, shown));
        return NULL;
    }
    json_node *n = node_new(p, JSON_NUMBER);
    if (!n) return NULL;
    size_t len = (size_t)(p->s - start);
    n->text = malloc(len + 1);
    if (!n->text) { fail(p, "out of memory"); free(n); return NULL; }
    memcpy(n->text, start, len);
    n->text[len] = '\0';
    return n;
}

static bool literal(parser *p, const char *word) {
    size_t len = strlen(word);
    if ((size_t)(p->end - p->s) < len || memcmp(p->s, word, len) != 0) return false;
    p->s += len;
    return true;
}

static json_node *parse_value(parser *p, int depth) {
    if (depth > JSON_DEPTH_MAX) { fail(p, "nested deeper than %d", JSON_DEPTH_MAX); return NULL; }
    skip_space(p);
    if (p->s >= p->end) { fail(p, "unexpected end of text"); return NULL; }
    char c = *p->s;
    if (c == '{' || c == '[') return parse_container(p, depth, c == '{');
    if (c == '"') {
        char *s = parse_string(p);
        if (!s) return NULL;
        json_node *n = node_new(p, JSON_STRING);
        if (!n) { free(s); return NULL; }
        n->text = s;
        return n;
    }
    if (literal(p, "true") || literal(p, "false")) {
        json_node *n = node_new(p, JSON_BOOL);
        if (n) {
            n->text = strdup(p->s[-1] == 'e' && p->s[-2] == 'u' ? "true" : "false");
            if (!n->text) { fail(p, "out of memory"); free(n); return NULL; }
        }
        return n;
    }
    if (literal(p, "null")) return node_new(p, JSON_NULL);
    return parse_number(p);
}

json_node *swin_json_parse(const char *text, size_t len, char *why, size_t why_len) {
    parser p = {.s = text, .end = text + len, .why = why, .why_len = why_len};
    json_node *root = parse_value(&p, 0);
    if (root) {
        skip_space(&p);
        if (p.s != p.end) {
            fail(&p, "text after the value at byte %zu", (size_t)(p.s - text));
            swin_json_free(root);
            root = NULL;
        }
    }
    return root;
}

void swin_json_free(json_node *n) {
    while (n) {
        json_node *next = n->next;
        swin_json_free(n->child);
        free(n->key);
        free(n->text);
        free(n);
        n = next;
    }
}

const json_node *swin_json_get(const json_node *obj, const char *key) {
    if (!obj || obj->kind != JSON_OBJECT) return NULL;
    const json_node *found = NULL;
    for (const json_node *c = obj->child; c; c = c->next)
        if (strcmp(c->key, key) == 0) found = c;
    return found;
}

size_t swin_json_len(const json_node *arr) {
    size_t n = 0;
    if (arr && arr->kind == JSON_ARRAY)
        for (const json_node *c = arr->child; c; c = c->next) n++;
    return n;
}

const json_node *swin_json_at(const json_node *arr, size_t i) {
    if (!arr || arr->kind != JSON_ARRAY) return NULL;
    const json_node *c = arr->child;
    while (c && i--) c = c->next;
    return c;
}

const char *swin_json_text(const json_node *n) {
    return n && (n->kind == JSON_STRING || n->kind == JSON_NUMBER) ? n->text : NULL;
}
