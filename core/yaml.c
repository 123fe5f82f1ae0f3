/* The YAML reader's structure: the document, block and flow collections, properties (anchors
 * and tags), aliases and merge keys, after PyYAML's scanner, parser and SafeConstructor
 * (core/yaml.h says what is read and refused). Scalars are in core/yaml_scalar.c. */
#include "core/yaml.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/yaml_internal.h"

static bool at_entry(const yaml *y)
{
    return yaml_at(y, 0) == '-' && yaml_space_or_end(yaml_at(y, 1));
}
static bool at_value(const yaml *y)
{
    return yaml_at(y, 0) == ':' && yaml_space_or_end(yaml_at(y, 1));
}

/* Whether only indentation comes before y->p on its line (the next entry of a block collection
 * starts a line; the value before it may have passed the line break itself). */
static bool first_on_line(const yaml *y)
{
    for (const char *q = y->line_start; q < y->p; q++)
        if (*q != ' ') return false;
    return true;
}

/* Spaces, comments and line breaks up to the next content; false at the end of the text or on
 * a tab. *crossed: a line break was passed. */
static bool next_content(yaml *y, bool *crossed)
{
    for (;;) {
        while (yaml_at(y, 0) == ' ') y->p++;
        if (yaml_at(y, 0) == '\t') {
            swin_yaml_fail(y, "a tab outside a quoted or block scalar (YAML indents and separates with spaces)");
            return false;
        }
        if (yaml_at(y, 0) == '#')
            while (yaml_at(y, 0) && !yaml_break(yaml_at(y, 0))) y->p++;
        char c = yaml_at(y, 0);
        if (!c) return false;
        if (!yaml_break(c)) return true;
        swin_yaml_eat_break(y);
        *crossed = true;
    }
}

static bool enter(yaml *y)
{
    if (++y->depth <= YAML_DEPTH_MAX) return true;
    swin_yaml_fail(y, "collections nested deeper than %d", YAML_DEPTH_MAX);
    return false;
}

static void discard(yaml *y, json_node *n)
{
    if (!n) return;
    n->next = y->discarded;
    y->discarded = n;
}

/* ---- anchors and aliases -------------------------------------------------------------------- */

/* The name after & or *: letters, digits, '-' and '_', ending at a space or one of ?:,]}%@`. */
static bool read_name(yaml *y, char name[64], const char *what)
{
    y->p++;
    size_t n = 0;
    for (char c; (c = yaml_at(y, n)) &&
                 ((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '-' || c == '_');)
        n++;
    if (!n) swin_yaml_fail(y, "expected a name after %s (letters, digits, '-' or '_')", what);
    else if (!yaml_space_or_end(yaml_at(y, n)) && !yaml_in_set(yaml_at(y, n), "?:,]}%@`"))
        swin_yaml_fail(y, "an %s name holds a character other than letters, digits, '-' or '_'",
                       what[0] == '&' ? "anchor" : "alias");
    else if (n >= 64) swin_yaml_fail(y, "an %s name longer than 63 characters", what[0] == '&' ? "anchor" : "alias");
    if (y->failed) return false;
    memcpy(name, y->p, n);
    name[n] = 0;
    y->p += n;
    return true;
}

static size_t anchor_begin(yaml *y, const char *name)
{
    for (size_t i = 0; i < y->n_anchors; i++)
        if (!strcmp(y->anchors[i].name, name)) {
            swin_yaml_fail(y, "the anchor &%s is defined twice (yaml.safe_load refuses that)", name);
            return SIZE_MAX;
        }
    if (y->n_anchors == y->cap_anchors) {
        size_t cap = y->cap_anchors ? 2 * y->cap_anchors : 16;
        yaml_anchor *a = cap > YAML_NODES_MAX ? NULL : realloc(y->anchors, cap * sizeof *a);
        if (!a) {
            swin_yaml_fail(y, "out of memory for anchors");
            return SIZE_MAX;
        }
        y->anchors = a;
        y->cap_anchors = cap;
    }
    yaml_anchor *a = &y->anchors[y->n_anchors];
    strcpy(a->name, name);
    a->node = NULL;
    return y->n_anchors++;
}

static void anchor_end(yaml *y, size_t i, json_node *n)
{
    if (i != SIZE_MAX && n) y->anchors[i].node = n;
}

static char *counted_copy(yaml *y, const char *s)
{
    size_t len = strlen(s) + 1;
    if ((y->bytes += len) > YAML_TEXT_MAX) {
        swin_yaml_fail(y, "more than %u MiB of text (aliases copy what they name)", YAML_TEXT_MAX >> 20);
        return NULL;
    }
    char *c = malloc(len);
    if (c) memcpy(c, s, len);
    else swin_yaml_fail(y, "out of memory");
    return c;
}

/* A copy of n (its key too when with_key) placed depth collections deep. */
static json_node *copy(yaml *y, const json_node *n, int depth, bool with_key)
{
    if (depth > YAML_DEPTH_MAX) {
        swin_yaml_fail(y, "collections nested deeper than %d (counting what aliases copy)", YAML_DEPTH_MAX);
        return NULL;
    }
    json_node *c = swin_yaml_node(y, n->kind, n->text);
    if (c && with_key && n->key && !(c->key = counted_copy(y, n->key))) {
        swin_json_free(c);
        return NULL;
    }
    json_node **tail = c ? &c->child : NULL;
    for (const json_node *ch = n->child; c && ch; ch = ch->next) {
        if (!(*tail = copy(y, ch, depth + 1, true))) {
            swin_json_free(c);
            return NULL;
        }
        tail = &(*tail)->next;
    }
    return c;
}

static json_node *alias(yaml *y)
{
    char name[64];
    if (!read_name(y, name, "*")) return NULL;
    for (size_t i = 0; i < y->n_anchors; i++)
        if (!strcmp(y->anchors[i].name, name)) {
            if (y->anchors[i].node) return copy(y, y->anchors[i].node, y->depth, false);
            swin_yaml_fail(y, "the alias *%s is inside the node its anchor names", name);
            return NULL;
        }
    swin_yaml_fail(y, "the alias *%s names no anchor before it", name);
    return NULL;
}

/* ---- properties: an anchor and a tag before a node ------------------------------------------ */

struct props {
    char anchor[64];
    char tag[16];
};

static bool read_tag(yaml *y, struct props *pr)
{
    static const char *const known[] = {"!", "!!str", "!!int", "!!float", "!!bool", "!!null", "!!seq", "!!map"};
    size_t n = 1;
    while (!yaml_space_or_end(yaml_at(y, n))) n++;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strlen(known[i]) == n && !memcmp(y->p, known[i], n)) {
            strcpy(pr->tag, known[i]);
            y->p += n;
            return true;
        }
    swin_yaml_fail(y, "the tag %.*s%s (swinrun reads !!str, !!int, !!float, !!bool, !!null, !!seq, !!map and !)",
                   n > 40 ? 40 : (int)n, y->p, n > 40 ? "..." : "");
    return false;
}

static bool read_props(yaml *y, struct props *pr)
{
    while (!y->failed && yaml_in_set(yaml_at(y, 0), "&!")) {
        bool anchor = yaml_at(y, 0) == '&';
        if (anchor ? pr->anchor[0] != 0 : pr->tag[0] != 0) {
            swin_yaml_fail(y, "two %s on one node", anchor ? "anchors" : "tags");
            return false;
        }
        if (anchor ? !read_name(y, pr->anchor, "&") : !read_tag(y, pr)) return false;
        while (yaml_at(y, 0) == ' ') y->p++;
    }
    return !y->failed;
}

static bool has_props(const struct props *pr)
{
    return pr->anchor[0] || pr->tag[0];
}

/* A collection's tag: !!seq on a sequence, !!map on a mapping (or the non-specific !). */
static bool tag_fits(yaml *y, const struct props *pr, const json_node *n)
{
    if (!n) return false;
    if (n->kind != JSON_ARRAY && n->kind != JSON_OBJECT) return true;
    const char *want = n->kind == JSON_ARRAY ? "!!seq" : "!!map";
    if (!pr->tag[0] || !strcmp(pr->tag, "!") || !strcmp(pr->tag, want)) return true;
    swin_yaml_fail(y, "the tag %s on a %s", pr->tag, n->kind == JSON_ARRAY ? "sequence" : "mapping");
    return false;
}

static json_node *empty_node(yaml *y, const struct props *pr)
{
    yaml_text t = {0};
    json_node *n = swin_yaml_scalar_node(y, &t, true, pr && pr->tag[0] ? pr->tag : NULL);
    free(t.d);
    return n;
}

/* ---- mappings ------------------------------------------------------------------------------- */

typedef struct mapping {
    json_node *obj;
    json_node *merged, **merged_tail; /* members from << (PyYAML puts them first) */
    json_node *own, **own_tail;
} mapping;

static void map_init(yaml *y, mapping *m)
{
    m->obj = swin_yaml_node(y, JSON_OBJECT, NULL);
    m->merged = m->own = NULL;
    m->merged_tail = &m->merged;
    m->own_tail = &m->own;
}

static void merge_members(yaml *y, mapping *m, const json_node *from)
{
    for (const json_node *c = from->child; c && !y->failed; c = c->next) {
        json_node *k = copy(y, c, y->depth + 1, true);
        if (!k) return;
        *m->merged_tail = k;
        m->merged_tail = &k->next;
    }
}

/* PyYAML's flatten_mapping: << takes a mapping, or a list of mappings of which the first wins. */
static void merge(yaml *y, mapping *m, json_node *value)
{
    if (value->kind == JSON_OBJECT) {
        merge_members(y, m, value);
    } else if (value->kind == JSON_ARRAY) {
        size_t n = swin_json_len(value);
        for (size_t i = n; i-- > 0 && !y->failed;) {
            const json_node *e = swin_json_at(value, i);
            if (e->kind != JSON_OBJECT)
                swin_yaml_fail(y, "'<<' merges a mapping or a list of mappings; entry %zu is not one", i);
            else merge_members(y, m, e);
        }
    } else {
        swin_yaml_fail(y, "'<<' merges a mapping or a list of mappings");
    }
    discard(y, value);
}

/* Adds key (taken) and value; merge: the key was a plain <<. */
static void map_add(yaml *y, mapping *m, char *key, json_node *value, bool is_merge)
{
    if (!value || y->failed) {
        free(key);
        swin_json_free(value);
        return;
    }
    if (is_merge) {
        free(key);
        merge(y, m, value);
        return;
    }
    value->key = key;
    *m->own_tail = value;
    m->own_tail = &value->next;
}

static json_node *map_finish(yaml *y, mapping *m)
{
    if (y->failed || !m->obj) {
        swin_json_free(m->obj);
        swin_json_free(m->merged);
        swin_json_free(m->own);
        return NULL;
    }
    *m->merged_tail = m->own;
    m->obj->child = m->merged;
    return m->obj;
}

/* ---- scalars as keys ------------------------------------------------------------------------ */

/* PyYAML's check_plain: whether a plain scalar may start here. */
static bool plain_start(yaml *y)
{
    char c = yaml_at(y, 0), c1 = yaml_at(y, 1);
    if (!yaml_in_set(c, "-?:,[]{}#&*!|>'\"%@`")) return true;
    if (!yaml_space_or_end(c1) && (c == '-' || (!y->flow && (c == '?' || c == ':')))) return true;
    if (c == '@' || c == '%')
        swin_yaml_fail(y, "'%c' cannot start a plain scalar: quote MONAI references and macros (\"%cid\")", c, c);
    else swin_yaml_fail(y, "'%c' cannot start a plain scalar here (quote the value)", c);
    return false;
}

/* A plain or quoted scalar at y->p into t; *lines when it spans lines. */
static bool scan_scalar(yaml *y, int indent, yaml_text *t, bool *plain, bool *lines)
{
    char c = yaml_at(y, 0);
    *plain = c != '"' && c != '\'';
    if (*plain) return plain_start(y) && swin_yaml_plain_scalar(y, indent, t, lines);
    int line = y->line;
    bool ok = swin_yaml_quoted_scalar(y, t);
    *lines = y->line != line;
    while (ok && yaml_at(y, 0) == ' ') y->p++;
    return ok;
}

/* A key node's text (the node discarded): a string's own, or how json.dumps writes another
 * scalar key (null, true, 1.5); NULL for a collection. refuse_merge: a string << is refused,
 * as whether it was plain (a merge) is no longer known (a block "? key"). */
static char *node_key(yaml *y, json_node *k, bool refuse_merge)
{
    char *key = NULL;
    if (!k) return NULL;
    if (k->kind == JSON_ARRAY || k->kind == JSON_OBJECT) swin_yaml_fail(y, "a collection as a mapping key is not read");
    else if (refuse_merge && k->kind == JSON_STRING && !strcmp(k->text, "<<"))
        swin_yaml_fail(y, "a '<<' key after '?' is not read (write <<: on its own line)");
    else key = counted_copy(y, k->kind == JSON_NULL ? "null" : k->text);
    discard(y, k);
    return key;
}

/* After a key scanned from start on line: a ':' then a space or the line's end, on the key's line. */
static bool key_ends(yaml *y, const char *start, int line, bool lines)
{
    if (!at_value(y) || lines || y->line != line) return false;
    if (y->p - start > 1024) {
        swin_yaml_fail(y, "a key longer than 1024 characters (YAML's limit for a key without '?')");
        return false;
    }
    return true;
}

/* ---- block collections ---------------------------------------------------------------------- */

static json_node *block_node(yaml *y, int indent, bool collections);
static json_node *block_seq(yaml *y, int col);

/* After "key:": the value on this line, on deeper lines, or a sequence at the key's column. */
static json_node *map_value(yaml *y, int col)
{
    bool crossed = false;
    if (!next_content(y, &crossed)) return y->failed ? NULL : swin_yaml_node(y, JSON_NULL, NULL);
    if (!crossed) return block_node(y, col, false);
    if (swin_yaml_doc_marker(y)) return swin_yaml_node(y, JSON_NULL, NULL);
    if (yaml_column(y) == col && at_entry(y)) return block_seq(y, col); /* a sequence as deep as its key */
    if (yaml_column(y) == col && yaml_in_set(yaml_at(y, 0), "|>")) { /* a block scalar's header there (PyYAML reads it) */
        yaml_text t = {0};
        json_node *n = swin_yaml_block_scalar(y, col, &t) ? swin_yaml_scalar_node(y, &t, false, NULL) : NULL;
        free(t.d);
        return n;
    }
    if (yaml_column(y) <= col) return swin_yaml_node(y, JSON_NULL, NULL);
    return block_node(y, col, true);
}

static bool at_explicit_key(const yaml *y)
{
    return yaml_at(y, 0) == '?' && yaml_space_or_end(yaml_at(y, 1));
}

/* One entry of a block mapping whose keys are at column col, y->p at its key: "key: value",
 * or "? key" with ": value" starting a later line at col (what PyYAML writes for long keys). */
static bool block_entry(yaml *y, int col, mapping *m)
{
    char *key = NULL;
    bool is_merge = false;
    json_node *value;
    if (at_explicit_key(y)) {
        y->p++;
        if (!(key = node_key(y, block_node(y, col, true), true))) return false;
        bool crossed = false;
        if (next_content(y, &crossed) && !swin_yaml_doc_marker(y) && first_on_line(y) && yaml_column(y) == col &&
            at_value(y)) {
            y->p++;
            value = block_node(y, col, true);
        } else {
            value = y->failed ? NULL : swin_yaml_node(y, JSON_NULL, NULL);
        }
    } else {
        if (yaml_in_set(yaml_at(y, 0), "[{&!*")) {
            swin_yaml_fail(
                y, "a collection as a key, or an anchor, tag or alias on a key: not read (write the key after '? ')");
            return false;
        }
        const char *start = y->p;
        int line = y->line;
        yaml_text t = {0};
        bool plain, lines;
        bool ok = scan_scalar(y, col, &t, &plain, &lines);
        if (ok && !key_ends(y, start, line, lines)) {
            if (!y->failed) swin_yaml_fail(y, "expected 'key: value' on this line of a mapping");
            ok = false;
        }
        if (ok) {
            is_merge = plain && !strcmp(t.d, "<<");
            if (!is_merge) key = node_key(y, swin_yaml_scalar_node(y, &t, plain, NULL), false);
        }
        free(t.d);
        if (!ok || y->failed) {
            free(key);
            return false;
        }
        y->p++;
        value = map_value(y, col);
    }
    map_add(y, m, key, value, is_merge);
    return !y->failed;
}

/* A mapping whose keys are at column col, y->p at the first. */
static json_node *block_map(yaml *y, int col)
{
    mapping m;
    map_init(y, &m);
    if (!m.obj) return NULL;
    if (!enter(y)) return map_finish(y, &m);
    while (block_entry(y, col, &m)) {
        bool crossed = false;
        if (!next_content(y, &crossed) || swin_yaml_doc_marker(y)) break;
        if (!first_on_line(y)) {
            swin_yaml_fail(y, "expected a line break after a mapping value (quote a value holding ': ' or ' #')");
            break;
        }
        if (yaml_column(y) < col) break;
        if (yaml_column(y) > col) {
            swin_yaml_fail(y, "a line indented deeper than its mapping's keys");
            break;
        }
        if (at_entry(y)) {
            swin_yaml_fail(y, "a sequence entry ('- ') among a mapping's keys");
            break;
        }
    }
    y->depth--;
    return map_finish(y, &m);
}

/* A sequence whose '-' entries are at column col. */
static json_node *block_seq(yaml *y, int col)
{
    json_node *arr = swin_yaml_node(y, JSON_ARRAY, NULL), **tail = arr ? &arr->child : NULL;
    if (!arr || !enter(y)) {
        swin_json_free(arr);
        return NULL;
    }
    while (!y->failed) {
        y->p++;
        json_node *item = block_node(y, col, true);
        if (!item) break;
        *tail = item;
        tail = &item->next;
        bool crossed = false;
        if (!next_content(y, &crossed) || swin_yaml_doc_marker(y)) break;
        if (!first_on_line(y)) {
            swin_yaml_fail(y, "expected a line break after a sequence entry");
            break;
        }
        if (yaml_column(y) > col) swin_yaml_fail(y, "a line indented deeper than its sequence's entries");
        if (yaml_column(y) != col || !at_entry(y)) break;
    }
    y->depth--;
    if (y->failed) {
        swin_json_free(arr);
        return NULL;
    }
    return arr;
}

static json_node *flow_collection(yaml *y);

/* A scalar, or the first key of a mapping at its column. */
static json_node *scalar_or_map(yaml *y, int indent, bool collections, const struct props *pr, bool props_on_line)
{
    const char *start = y->p;
    int line = y->line, col = yaml_column(y);
    yaml_text t = {0};
    bool plain, lines;
    json_node *n = NULL;
    if (!scan_scalar(y, indent, &t, &plain, &lines)) {
        free(t.d);
        return NULL;
    }
    if (!at_value(y) || (y->line != line && first_on_line(y))) { /* a ':' starting a later line is "? key"'s value */
        n = swin_yaml_scalar_node(y, &t, plain, pr->tag[0] ? pr->tag : NULL);
    } else if (!key_ends(y, start, line, lines)) {
        if (!y->failed)
            swin_yaml_fail(y, "':' after a value that spans lines, or at a line's start (quote a value holding ': ')");
    } else if (!collections) {
        swin_yaml_fail(y, "a mapping cannot start on the line of another key or of '---' ('a: b: c'; quote a value "
                          "holding ': ')");
    } else if (props_on_line) {
        swin_yaml_fail(y, "an anchor or tag on a mapping key is not read (put it on the line before the mapping)");
    } else {
        y->p = start; /* the key is read again as the mapping's first entry (it is on this line) */
        n = block_map(y, col);
    }
    free(t.d);
    return n;
}

/* The node at the next content. indent: the enclosing block collection's column (-1 at the
 * top); content on a later line belongs to this node only when deeper. collections: a block
 * collection may start on this line (after "- " or at a line's start). */
static json_node *block_node(yaml *y, int indent, bool collections)
{
    bool crossed = false;
    if (!next_content(y, &crossed) || swin_yaml_doc_marker(y) || (crossed && yaml_column(y) <= indent))
        return y->failed ? NULL : swin_yaml_node(y, JSON_NULL, NULL);
    collections |= crossed;
    struct props pr = {{0}, {0}};
    bool props_on_line = false;
    while (yaml_in_set(yaml_at(y, 0), "&!")) { /* properties, on one line or several */
        if (!read_props(y, &pr)) return NULL;
        bool after = false;
        if (!next_content(y, &after) || swin_yaml_doc_marker(y) || (after && yaml_column(y) <= indent)) {
            if (y->failed) return NULL;
            size_t a = pr.anchor[0] ? anchor_begin(y, pr.anchor) : SIZE_MAX;
            json_node *n = y->failed ? NULL : empty_node(y, &pr);
            anchor_end(y, a, n);
            return n;
        }
        props_on_line = !after;
        collections |= after;
    }
    if (has_props(&pr) && props_on_line && at_value(y)) {
        swin_yaml_fail(y, "an anchor or tag on a mapping key is not read (put it on the line before the mapping)");
        return NULL;
    }
    size_t a = pr.anchor[0] ? anchor_begin(y, pr.anchor) : SIZE_MAX;
    if (y->failed) return NULL;
    char c = yaml_at(y, 0);
    json_node *n = NULL;
    if (at_entry(y) || at_explicit_key(y)) {
        if (!collections)
            swin_yaml_fail(y, "a block collection cannot start on the line of a key (put it on the lines below)");
        else if (props_on_line) swin_yaml_fail(y, "a block collection cannot start on the line of its anchor or tag");
        else n = c == '-' ? block_seq(y, yaml_column(y)) : block_map(y, yaml_column(y));
    } else if (c == '[' || c == '{') {
        n = flow_collection(y);
        while (n && yaml_at(y, 0) == ' ') y->p++;
        if (n && at_value(y)) swin_yaml_fail(y, "a collection as a mapping key is not read");
    } else if (c == '|' || c == '>') {
        yaml_text t = {0};
        if (swin_yaml_block_scalar(y, indent, &t)) n = swin_yaml_scalar_node(y, &t, false, pr.tag[0] ? pr.tag : NULL);
        free(t.d);
    } else if (c == '*') {
        if (has_props(&pr)) swin_yaml_fail(y, "an anchor or tag on an alias");
        else n = alias(y);
        while (n && yaml_at(y, 0) == ' ') y->p++;
        if (n && at_value(y)) swin_yaml_fail(y, "an alias as a mapping key is not read");
    } else {
        n = scalar_or_map(y, indent, collections, &pr, props_on_line);
    }
    if (y->failed || !tag_fits(y, &pr, n)) {
        swin_json_free(n);
        return NULL;
    }
    anchor_end(y, a, n);
    return n;
}

/* ---- flow collections ----------------------------------------------------------------------- */

/* To the next content inside [ ] or { }. */
static bool flow_skip(yaml *y)
{
    bool crossed = false;
    if (!next_content(y, &crossed)) {
        if (!y->failed) swin_yaml_fail(y, "a [ or { not closed before the end of the text");
        return false;
    }
    if (swin_yaml_doc_marker(y)) {
        swin_yaml_fail(y, "a document marker (--- or ...) inside [ ] or { }");
        return false;
    }
    return true;
}

/* A node inside [ ] or { }; *plain: it is a plain scalar without a tag (a << there merges). */
static json_node *flow_node(yaml *y, bool *plain)
{
    struct props pr = {{0}, {0}};
    *plain = false;
    if (yaml_in_set(yaml_at(y, 0), "&!") && (!read_props(y, &pr) || !flow_skip(y))) return NULL;
    size_t a = pr.anchor[0] ? anchor_begin(y, pr.anchor) : SIZE_MAX;
    if (y->failed) return NULL;
    char c = yaml_at(y, 0);
    json_node *n = NULL;
    if (c == '[' || c == '{') {
        n = flow_collection(y);
    } else if (c == '*') {
        if (has_props(&pr)) swin_yaml_fail(y, "an anchor or tag on an alias");
        else n = alias(y);
    } else if ((yaml_in_set(c, ",]}") || at_value(y)) && has_props(&pr)) {
        n = empty_node(y, &pr);
    } else {
        yaml_text t = {0};
        bool lines;
        if (scan_scalar(y, -1, &t, plain, &lines)) n = swin_yaml_scalar_node(y, &t, *plain, pr.tag[0] ? pr.tag : NULL);
        *plain &= !pr.tag[0];
        free(t.d);
    }
    if (y->failed || !tag_fits(y, &pr, n)) {
        swin_json_free(n);
        return NULL;
    }
    anchor_end(y, a, n);
    return n;
}

/* ':' then a value, or none before ',' and the closing bracket. */
static json_node *flow_value(yaml *y, char close)
{
    bool plain;
    if (yaml_at(y, 0) != ':') return swin_yaml_node(y, JSON_NULL, NULL);
    y->p++;
    if (!flow_skip(y)) return NULL;
    return yaml_at(y, 0) == ',' || yaml_at(y, 0) == close ? swin_yaml_node(y, JSON_NULL, NULL) : flow_node(y, &plain);
}

/* An entry's key ("? key" or a node, the '?' passed): NULL with *is_merge for a plain <<. */
static char *flow_key(yaml *y, char close, bool *is_merge)
{
    bool explicit_key = at_explicit_key(y), plain = false;
    *is_merge = false;
    if (explicit_key) {
        y->p++;
        if (!flow_skip(y)) return NULL;
    }
    const char *start = y->p;
    int line = y->line;
    json_node *k = explicit_key && (yaml_in_set(yaml_at(y, 0), ",") || yaml_at(y, 0) == close || at_value(y))
                       ? swin_yaml_node(y, JSON_NULL, NULL)
                       : flow_node(y, &plain);
    if (k && !explicit_key && y->p - start > 1024)
        swin_yaml_fail(y, "a key longer than 1024 characters (YAML's limit for a key without '?')");
    if (k && !explicit_key && flow_skip(y) && yaml_at(y, 0) == ':' && y->line != line)
        swin_yaml_fail(y, "a key and its ':' on different lines (write '? key' for that)");
    if (!k || y->failed) {
        swin_json_free(k);
        return NULL;
    }
    if (plain && k->kind == JSON_STRING && !strcmp(k->text, "<<")) {
        discard(y, k);
        if (close == '}') *is_merge = true;
        else swin_yaml_fail(y, "a '<<' key inside [ ] is not read (write <<: in a mapping)");
        return NULL;
    }
    return node_key(y, k, false);
}

static bool flow_entry_start(yaml *y)
{
    if (!flow_skip(y)) return false;
    if (yaml_at(y, 0) == ',') swin_yaml_fail(y, "a ',' with no entry before it");
    return !y->failed;
}

/* After an entry: ',' (passed) or the closing bracket (left). */
static bool flow_entry_end(yaml *y, char close)
{
    if (!flow_skip(y)) return false;
    if (yaml_at(y, 0) == ',') y->p++;
    else if (yaml_at(y, 0) != close) swin_yaml_fail(y, "expected ',' or '%c'", close);
    return !y->failed;
}

/* [key: value] or [? key: value]: a mapping of one pair, its key (taken) read, y->p before ':'. */
static json_node *flow_pair(yaml *y, char *key)
{
    json_node *obj = key && flow_skip(y) ? swin_yaml_node(y, JSON_OBJECT, NULL) : NULL;
    json_node *v = obj ? flow_value(y, ']') : NULL;
    if (!v) {
        free(key);
        swin_json_free(obj);
        return NULL;
    }
    v->key = key;
    obj->child = v;
    return obj;
}

static json_node *flow_seq(yaml *y)
{
    json_node *arr = swin_yaml_node(y, JSON_ARRAY, NULL), **tail = arr ? &arr->child : NULL;
    bool closed = false;
    while (arr && flow_skip(y)) {
        if (yaml_at(y, 0) == ']') {
            y->p++;
            closed = true;
            break;
        }
        if (!flow_entry_start(y)) break;
        json_node *e;
        bool plain;
        int line = y->line;
        if (at_explicit_key(y)) {
            e = flow_pair(y, flow_key(y, ']', &plain));
        } else if ((e = flow_node(y, &plain)) && flow_skip(y) && yaml_at(y, 0) == ':') { /* [key: value] */
            if (y->line != line) {
                swin_yaml_fail(y, "a key and its ':' on different lines (write '? key' for that)");
                swin_json_free(e);
                e = NULL;
            } else if (plain && e->kind == JSON_STRING && !strcmp(e->text, "<<")) {
                swin_yaml_fail(y, "a '<<' key inside [ ] is not read (write <<: in a mapping)");
                swin_json_free(e);
                e = NULL;
            } else {
                e = flow_pair(y, node_key(y, e, false));
            }
        }
        if (!e || y->failed) {
            swin_json_free(e);
            break;
        }
        *tail = e;
        tail = &e->next;
        if (!flow_entry_end(y, ']')) break;
    }
    if (!closed) {
        swin_json_free(arr);
        return NULL;
    }
    return arr;
}

static json_node *flow_map(yaml *y)
{
    mapping m;
    map_init(y, &m);
    while (m.obj && flow_skip(y)) {
        if (yaml_at(y, 0) == '}') {
            y->p++;
            return map_finish(y, &m);
        }
        if (!flow_entry_start(y)) break;
        bool is_merge;
        char *key = flow_key(y, '}', &is_merge);
        if (y->failed || !flow_skip(y)) {
            free(key);
            break;
        }
        map_add(y, &m, key, flow_value(y, '}'), is_merge);
        if (y->failed || !flow_entry_end(y, '}')) break;
    }
    if (!y->failed) swin_yaml_fail(y, "a { not closed");
    return map_finish(y, &m);
}

static json_node *flow_collection(yaml *y)
{
    if (!enter(y)) return NULL;
    y->p++;
    y->flow++;
    json_node *n = y->p[-1] == '[' ? flow_seq(y) : flow_map(y);
    y->flow--;
    y->depth--;
    return n;
}

/* ---- the stream ----------------------------------------------------------------------------- */

/* UTF-8 holding only what PyYAML's reader accepts (no control characters but tab and line
 * breaks), and no NEL / LS / PS, which PyYAML takes as line breaks. */
static bool text_ok(yaml *y)
{
    const unsigned char *s = (const unsigned char *)y->p, *e = (const unsigned char *)y->end;
    while (s < e) {
        uint32_t cp = *s;
        size_t n = cp < 0x80                 ? 1
                   : cp >= 0xC2 && cp < 0xE0 ? 2
                   : cp >= 0xE0 && cp < 0xF0 ? 3
                   : cp >= 0xF0 && cp < 0xF5 ? 4
                                             : 0;
        bool ok = n && (size_t)(e - s) >= n;
        if (ok && n > 1) {
            cp &= 0x7Fu >> n;
            for (size_t i = 1; i < n; i++) {
                ok &= (s[i] & 0xC0) == 0x80;
                cp = cp << 6 | (s[i] & 0x3F);
            }
            ok &= !(n == 3 && cp < 0x800) && !(n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) &&
                  !(cp >= 0xD800 && cp < 0xE000);
        }
        y->p = (const char *)s;
        if (!ok) {
            swin_yaml_fail(y, "not UTF-8 (byte 0x%02X)", *s);
            return false;
        }
        if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0x7F || (cp >= 0x80 && cp < 0xA0) ||
            cp == 0x2028 || cp == 0x2029 || cp == 0xFFFE || cp == 0xFFFF) {
            swin_yaml_fail(
                y, "the character U+%04X (control characters and the NEL, LS and PS line breaks are not read)", cp);
            return false;
        }
        if (cp == '\n' || (cp == '\r' && (s + 1 == e || s[1] != '\n'))) {
            y->line++;
            y->line_start = (const char *)s + 1;
        }
        s += n;
    }
    return true;
}

static bool directives(yaml *y, bool *any)
{
    bool crossed = false;
    while (next_content(y, &crossed) && yaml_column(y) == 0 && yaml_at(y, 0) == '%') {
        if (y->end - y->p < 6 || memcmp(y->p, "%YAML ", 6)) {
            swin_yaml_fail(y, "a directive other than %%YAML (%%TAG is not read)");
            return false;
        }
        y->p += 6;
        while (yaml_at(y, 0) == ' ') y->p++;
        if (yaml_at(y, 0) != '1' || yaml_at(y, 1) != '.' || !yaml_in_set(yaml_at(y, 2), "0123456789")) {
            swin_yaml_fail(y, "expected a YAML version 1.x after %%YAML");
            return false;
        }
        y->p += 2;
        while (yaml_in_set(yaml_at(y, 0), "0123456789")) y->p++;
        if (!yaml_space_or_end(yaml_at(y, 0))) {
            swin_yaml_fail(y, "expected a YAML version 1.x after %%YAML");
            return false;
        }
        *any = true;
    }
    return !y->failed;
}

static json_node *document(yaml *y)
{
    bool directive = false, crossed = false;
    if (!directives(y, &directive)) return NULL;
    json_node *root;
    if (swin_yaml_doc_marker(y) && yaml_at(y, 0) == '-') {
        y->p += 3;
        root = block_node(y, -1, false);
    } else if (directive) {
        swin_yaml_fail(y, "expected '---' after the %%YAML directive");
        return NULL;
    } else {
        root = block_node(y, -1, true);
    }
    if (!root) return NULL;
    bool ended = false;
    while (next_content(y, &crossed) && swin_yaml_doc_marker(y) && yaml_at(y, 0) == '.') {
        y->p += 3;
        ended = true;
    }
    if (!y->failed && y->p < y->end) {
        if (ended) {
            swin_yaml_fail(y, "text after the document's end (...); yaml.safe_load reads one document");
        } else if (swin_yaml_doc_marker(y)) {
            swin_yaml_fail(y, "a second document (---); yaml.safe_load reads one");
        } else {
            swin_yaml_fail(y, "text after the document's top node (check its indentation)");
        }
    }
    if (y->failed) {
        swin_json_free(root);
        return NULL;
    }
    return root;
}

json_node *swin_yaml_parse(const char *text, size_t len, char *why, size_t why_len)
{
    if (why && why_len) why[0] = 0;
    yaml y = {.p = text, .end = text + len, .line_start = text, .line = 1, .why = why, .why_len = why_len};
    if (!text_ok(&y)) return NULL;
    y.p = y.line_start = text;
    y.line = 1;
    if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3)) y.p = y.line_start = text + 3;
    json_node *root = document(&y);
    free(y.anchors);
    swin_json_free(y.discarded);
    return root;
}
