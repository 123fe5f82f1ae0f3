/* A small JSON reader (Triton's model configuration, safetensors headers, bundle configs; core/yaml.h
 * reads YAML into the same tree):
 * the whole text parsed into a tree of nodes, then looked up by member name or index.
 * Numbers are kept as their text (protobuf's int64 fields arrive as strings anyway). */
#ifndef SWIN_CORE_JSON_H
#define SWIN_CORE_JSON_H

#include <stddef.h>

typedef enum json_kind { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT } json_kind;

typedef struct json_node json_node;
struct json_node {
    json_kind kind;
    char *key;          /* member name when the parent is an object, else NULL */
    char *text;         /* JSON_STRING: the decoded string; JSON_NUMBER: the number's text;
                           JSON_BOOL: "true" or "false" */
    json_node *child;   /* first element or member */
    json_node *next;    /* next sibling */
};

/* Parses len bytes of text (not necessarily NUL-terminated). NULL on a syntax error or an
 * allocation failure, with a reason in why (why_len bytes). Nesting beyond 64 is refused. */
json_node *swin_json_parse(const char *text, size_t len, char *why, size_t why_len);
void swin_json_free(json_node *root);

/* The member `key` of an object, the last when the key is repeated (as Python's json and
 * yaml read one); NULL when obj is not an object or has no such member. */
const json_node *swin_json_get(const json_node *obj, const char *key);
/* Elements of an array (0 when not an array), and element i (NULL when out of range). */
size_t swin_json_len(const json_node *arr);
const json_node *swin_json_at(const json_node *arr, size_t i);
/* The text of a string or number node, NULL otherwise. */
const char *swin_json_text(const json_node *n);

#endif
