/* A YAML reader for configuration files (a MONAI bundle's configs/inference.yaml): the text
 * read as PyYAML's yaml.safe_load reads it, which is what MONAI's ConfigParser calls, into the
 * JSON reader's tree (core/json.h), so that code reading a configuration does not care which
 * of the two formats it came from.
 *
 * YAML 1.1 as PyYAML resolves plain scalars: yes/no/on/off are booleans, 010 is 8, 1:30 is 90,
 * 1e3 and 1.0e3 are strings (a float needs a '.' and a signed exponent), ~ and an empty value
 * are null. Numbers keep a text strtod reads (hex, octal, binary and base-60 converted to
 * decimal; .inf and .nan as "inf", "-inf", "nan"); a date stays a string.
 *
 * Read: block and flow mappings and sequences, plain, quoted and block (| >) scalars with
 * their folding, comments, explicit keys (? key, as PyYAML writes long ones), anchors and
 * aliases (copied), merge keys (<<), the tags !!str, !!int, !!float, !!bool, !!null, !!seq,
 * !!map and !, one document with its --- and ... markers, a %YAML directive. Refused, with
 * the line and column: what PyYAML refuses (tabs outside scalars, '@', '`' or '%' starting a
 * plain scalar, a collection as a key, a duplicate anchor, '=' as a value), and, though PyYAML
 * reads them, anchors and tags on a block mapping's simple keys, aliases as keys or inside
 * the node they name, a << key after '?' or inside [ ], other tags (!!binary, !!set, custom
 * ones), a tag before an indentless sequence, %TAG, more than one document, NUL characters,
 * integers in hex, octal, binary or base 60 past 64 bits, text that is not UTF-8 or holds
 * control characters or the NEL / LS / PS line separators.
 *
 * A repeated key is kept twice, as in the JSON tree: swin_json_get returns the last one, as
 * Python's dict does; members merged by << come before the mapping's own. */
#ifndef SWIN_CORE_YAML_H
#define SWIN_CORE_YAML_H

#include <stddef.h>

#include "core/json.h"

/* Parses len bytes of text. NULL on an error, with a reason in why (why_len bytes) that
 * names the line and column. Nesting beyond 64 (aliases included) and aliases expanding
 * past 2^19 nodes or 64 MiB of text are refused. An empty document is a JSON_NULL node. */
json_node *swin_yaml_parse(const char *text, size_t len, char *why, size_t why_len);

#endif
