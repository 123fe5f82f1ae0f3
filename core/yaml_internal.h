/* The YAML reader's state and its scalar scanners, shared by core/yaml.c (collections,
 * anchors, merges) and core/yaml_scalar.c (plain, quoted and block scalars, and how a plain
 * scalar resolves). Positions are bytes; a column is the byte offset from the line's start
 * (indentation is spaces, so it equals PyYAML's character column wherever one is compared). */
#ifndef SWIN_CORE_YAML_INTERNAL_H
#define SWIN_CORE_YAML_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "core/json.h"

#define YAML_DEPTH_MAX 64
#define YAML_NODES_MAX (1u << 19)
#define YAML_TEXT_MAX (64u << 20)

typedef struct yaml_anchor {
    char name[64];
    json_node *node; /* NULL while the node it names is being read */
} yaml_anchor;

typedef struct yaml {
    const char *p, *end;    /* where reading is, and the end of the text */
    const char *line_start; /* the first byte of p's line */
    int line;               /* p's line, from 1 */
    int depth;              /* collections open around p */
    int flow;               /* flow collections ([ {) open around p */
    size_t nodes, bytes;    /* nodes and text made so far (aliases copy) */
    yaml_anchor *anchors;
    size_t n_anchors, cap_anchors;
    json_node *discarded; /* nodes an anchor may name that left the tree (merged, made keys) */
    bool failed;
    char *why;
    size_t why_len;
} yaml;

/* A scalar's text as it grows. */
typedef struct yaml_text {
    char *d;
    size_t n, cap;
} yaml_text;

/* The first error wins; the message gets "line L, column C: " in front. */
void swin_yaml_fail(yaml *y, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static inline char yaml_at(const yaml *y, size_t k)
{
    return (size_t)(y->end - y->p) > k ? y->p[k] : 0;
}
static inline bool yaml_break(char c)
{
    return c == '\n' || c == '\r';
}
/* Whether c is one of set's characters (never the end's 0). */
static inline bool yaml_in_set(char c, const char *set)
{
    return c && strchr(set, c);
}
/* PyYAML's '\0 \t\r\n': what ends a token (0 is the end of the text, which holds no NUL). */
static inline bool yaml_space_or_end(char c)
{
    return c == 0 || c == ' ' || c == '\t' || yaml_break(c);
}
static inline int yaml_column(const yaml *y)
{
    return (int)(y->p - y->line_start);
}
/* Passes one line break (\n, \r\n or \r). */
void swin_yaml_eat_break(yaml *y);
/* "---" or "..." at column 0 followed by a space or the line's end. */
bool swin_yaml_doc_marker(const yaml *y);

bool swin_yaml_put(yaml *y, yaml_text *t, const char *s, size_t n);
/* A node of kind with text (copied; may be NULL), counted against the limits. */
json_node *swin_yaml_node(yaml *y, json_kind kind, const char *text);

/* Scanners, each at its first character; indent is PyYAML's: the column of the enclosing
 * block collection (-1 at the top). plain_scalar sets *lines when the scalar spans lines. */
bool swin_yaml_plain_scalar(yaml *y, int indent, yaml_text *t, bool *lines);
bool swin_yaml_quoted_scalar(yaml *y, yaml_text *t);
bool swin_yaml_block_scalar(yaml *y, int indent, yaml_text *t);

/* The node a scalar stands for. plain: resolved as PyYAML does (null, bool, int, float or
 * string); quoted and block scalars are strings. tag: NULL, or an explicit tag ("!!int",
 * "!"), which decides instead. */
json_node *swin_yaml_scalar_node(yaml *y, const yaml_text *t, bool plain, const char *tag);

#endif
