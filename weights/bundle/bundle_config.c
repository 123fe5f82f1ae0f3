#include "weights/bundle/bundle_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/yaml.h"

swin_status swin_bundle_config_parse(const char *text, size_t len, const char *name, struct swin_bundle_config *c,
                                     swin_error *err)
{
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", name);
    if (len > SWIN_BUNDLE_CONFIG_MAX_BYTES)
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: larger than %u MiB, not a bundle configuration", name,
                              SWIN_BUNDLE_CONFIG_MAX_BYTES >> 20);
    char why[200];
    size_t n = strlen(name);
    bool yaml = (n > 5 && !strcmp(name + n - 5, ".yaml")) || (n > 4 && !strcmp(name + n - 4, ".yml"));
    c->root = yaml ? swin_yaml_parse(text, len, why, sizeof why) : swin_json_parse(text, len, why, sizeof why);
    if (!c->root)
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: not valid %s (%s)", name, yaml ? "YAML" : "JSON", why);
    if (c->root->kind != JSON_OBJECT) {
        swin_bundle_config_free(c);
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: the configuration is not a %s", name,
                              yaml ? "YAML mapping" : "JSON object");
    }
    return SWIN_OK;
}

swin_status swin_bundle_config_read(const char *path, const char *name, struct swin_bundle_config *c, swin_error *err)
{
    memset(c, 0, sizeof *c);
    FILE *f = fopen(path, "rb");
    if (!f) return swin_error_set(err, SWIN_ERR_IO, "%s: cannot be opened: is this a MONAI bundle folder?", name);
    char *text = malloc(SWIN_BUNDLE_CONFIG_MAX_BYTES + 1);
    size_t len = text ? fread(text, 1, SWIN_BUNDLE_CONFIG_MAX_BYTES + 1, f) : 0;
    bool read_error = ferror(f);
    fclose(f);
    if (!text) return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for %s", name);
    swin_status st = read_error ? swin_error_set(err, SWIN_ERR_IO, "%s: read error", name)
                                : swin_bundle_config_parse(text, len, name, c, err);
    free(text);
    return st;
}

void swin_bundle_config_free(struct swin_bundle_config *c)
{
    swin_json_free(c->root);
    c->root = NULL;
}

/* The node at id ("a::b::0" or "a#b#0") below the root, or NULL. */
static const json_node *lookup(const json_node *root, const char *id)
{
    const json_node *n = root;
    char part[128];
    while (n && *id) {
        size_t len = 0;
        while (id[len] && id[len] != '#' && !(id[len] == ':' && id[len + 1] == ':')) len++;
        if (len == 0 || len >= sizeof part) return NULL;
        memcpy(part, id, len);
        part[len] = 0;
        id += len;
        if (*id == '#') id++;
        else if (*id == ':') id += 2;
        if (n->kind == JSON_OBJECT) {
            n = swin_json_get(n, part);
        } else if (n->kind == JSON_ARRAY) {
            char *end;
            long i = strtol(part, &end, 10);
            n = *end || i < 0 ? NULL : swin_json_at(n, (size_t)i);
        } else {
            return NULL;
        }
    }
    return n;
}

const json_node *swin_bundle_resolve(const struct swin_bundle_config *c, const json_node *n, char *why, size_t why_len)
{
    if (why_len) why[0] = 0;
    for (int depth = 0; n; depth++) {
        if (n->kind != JSON_STRING || !n->text[0]) return n;
        const char *s = n->text;
        if (s[0] == '$') {
            snprintf(why, why_len, "a Python expression (\"%.60s\"), which swinrun does not evaluate", s);
            return NULL;
        }
        if (s[0] == '%') {
            snprintf(why, why_len, "a macro (\"%.60s\"), which swinrun does not expand", s);
            return NULL;
        }
        if (s[0] != '@') return n;
        if (depth == 16) {
            snprintf(why, why_len, "references more than 16 deep (\"%.60s\")", s);
            return NULL;
        }
        const json_node *to = lookup(c->root, s + 1);
        if (!to) {
            snprintf(why, why_len, "a reference to nothing in %s (\"%.60s\")", c->name, s);
            return NULL;
        }
        n = to;
    }
    return NULL;
}

const json_node *swin_bundle_member(const struct swin_bundle_config *c, const json_node *obj, const char *key,
                                    char *why, size_t why_len)
{
    if (why_len) why[0] = 0;
    return swin_bundle_resolve(c, swin_json_get(obj, key), why, why_len);
}

bool swin_bundle_number(const json_node *n, double *out)
{
    if (!n || n->kind != JSON_NUMBER) return false;
    char *end;
    *out = strtod(n->text, &end);
    return !*end;
}

bool swin_bundle_bool(const json_node *n, bool *out)
{
    if (!n || n->kind != JSON_BOOL) return false;
    *out = n->text[0] == 't';
    return true;
}

bool swin_bundle_triple(const struct swin_bundle_config *c, const json_node *n, double out[3])
{
    char why[8];
    if (swin_bundle_number(n, &out[0])) {
        out[1] = out[2] = out[0];
        return true;
    }
    if (!n || n->kind != JSON_ARRAY || swin_json_len(n) != 3) return false;
    for (size_t i = 0; i < 3; i++)
        if (!swin_bundle_number(swin_bundle_resolve(c, swin_json_at(n, i), why, sizeof why), &out[i])) return false;
    return true;
}

const char *swin_bundle_target(const struct swin_bundle_config *c, const json_node *n)
{
    char why[8];
    const json_node *t = swin_bundle_member(c, n, "_target_", why, sizeof why);
    if (!t || t->kind != JSON_STRING) return NULL;
    const char *dot = strrchr(t->text, '.');
    return dot ? dot + 1 : t->text;
}
