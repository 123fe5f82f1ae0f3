/* The DICOM node's configuration file (node_config.h), on core/json.h's reader. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/node/node_config.h"
#include "core/json.h"

/* What a refusal names: the file, the key's path (e.g. destinations[1].port). */
struct ctx {
    const char *file;
    char key[128];
    swin_error *err;
};

/* A value as a message shows it: its text cut to 40 characters, control characters as '?'. */
static void shown(const json_node *n, char *out, size_t size)
{
    static const char *const kinds[] = {"null", "a boolean", "a number", "a string", "a list", "an object"};
    const char *t = n->kind == JSON_STRING || n->kind == JSON_NUMBER || n->kind == JSON_BOOL ? n->text : NULL;
    if (!t) {
        snprintf(out, size, "%s", kinds[n->kind]);
        return;
    }
    size_t i = 0;
    if (n->kind == JSON_STRING && i + 1 < size) out[i++] = '"';
    for (const char *p = t; *p && i + 5 < size && p - t < 40; p++) out[i++] = (unsigned char)*p < 0x20 ? '?' : *p;
    if (strlen(t) > 40 && i + 4 < size) out[i++] = '.', out[i++] = '.', out[i++] = '.';
    if (n->kind == JSON_STRING && i + 1 < size) out[i++] = '"';
    out[i] = 0;
}

static swin_status bad(struct ctx *c, const json_node *n, const char *takes)
{
    char got[64];
    shown(n, got, sizeof got);
    return swin_error_set(c->err, SWIN_ERR_ARG, "%s: %s takes %s, not %s", c->file, c->key, takes, got);
}

static swin_status integer(struct ctx *c, const json_node *n, long lo, long hi, int *out, const char *takes)
{
    char *end;
    errno = 0;
    long v = n->kind == JSON_NUMBER ? strtol(n->text, &end, 10) : 0;
    if (n->kind != JSON_NUMBER || *end || errno || v < lo || v > hi) return bad(c, n, takes);
    *out = (int)v;
    return SWIN_OK;
}

static swin_status seconds(struct ctx *c, const json_node *n, double lo, double hi, double *out, const char *takes)
{
    char *end;
    double v = n->kind == JSON_NUMBER ? strtod(n->text, &end) : NAN;
    if (n->kind != JSON_NUMBER || *end || !(v >= lo && v <= hi)) return bad(c, n, takes);
    *out = v;
    return SWIN_OK;
}

static swin_status boolean(struct ctx *c, const json_node *n, bool *out)
{
    if (n->kind != JSON_BOOL) return bad(c, n, "true or false");
    *out = !strcmp(n->text, "true");
    return SWIN_OK;
}

/* A byte count: a number, or a string such as "512M", "20G" (K, M, G, T: powers of 1024). */
static swin_status size(struct ctx *c, const json_node *n, size_t *out)
{
    const char *takes = "a size: bytes, or a string such as \"512M\" or \"20G\"";
    if (n->kind != JSON_NUMBER && n->kind != JSON_STRING) return bad(c, n, takes);
    char *end;
    errno = 0;
    double v = strtod(n->text, &end);
    if (end == n->text || errno || !(v >= 0) || !isfinite(v)) return bad(c, n, takes);
    double mul = 1;
    const char *units = "KMGT";
    const char *u = *end ? strchr(units, *end) : NULL;
    if (n->kind == JSON_STRING && u) {
        for (const char *k = units; k <= u; k++) mul *= 1024;
        end++;
    }
    if (*end || v * mul > 1e18) return bad(c, n, takes);
    *out = (size_t)(v * mul);
    return SWIN_OK;
}

static swin_status text(struct ctx *c, const json_node *n, size_t max, char *out, const char *takes)
{
    if (n->kind != JSON_STRING || !n->text[0] || strlen(n->text) >= max || strlen(n->text) != strcspn(n->text, "\n\r"))
        return bad(c, n, takes);
    memcpy(out, n->text, strlen(n->text) + 1);
    return SWIN_OK;
}

/* PS3.5 AE: 1 to 16 characters of the default repertoire, no backslash, not only spaces. */
static swin_status ae_title(struct ctx *c, const json_node *n, char *out)
{
    const char *takes = "an AE title: 1 to 16 printable ASCII characters, no backslash";
    if (n->kind != JSON_STRING || !n->text[0] || strlen(n->text) > 16) return bad(c, n, takes);
    bool blank = true;
    for (const char *p = n->text; *p; p++) {
        if (*p < 0x20 || *p > 0x7e || *p == '\\') return bad(c, n, takes);
        blank = blank && *p == ' ';
    }
    if (blank) return bad(c, n, takes);
    strcpy(out, n->text);
    return SWIN_OK;
}

/* A host name or an IPv4 / IPv6 address: letters, digits, '.', '-', ':'. */
static swin_status host(struct ctx *c, const json_node *n, char *out)
{
    const char *takes = "a host name or IP address";
    if (n->kind != JSON_STRING || !n->text[0] || strlen(n->text) >= NODE_HOST_MAX) return bad(c, n, takes);
    for (const char *p = n->text; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:", *p)) return bad(c, n, takes);
    strcpy(out, n->text);
    return SWIN_OK;
}

static swin_status choice(struct ctx *c, const json_node *n, const char *const *names, int count, int *out,
                          const char *takes)
{
    for (int i = 0; n->kind == JSON_STRING && i < count; i++)
        if (!strcmp(n->text, names[i])) {
            *out = i;
            return SWIN_OK;
        }
    return bad(c, n, takes);
}

/* Sets the key path: parent "." key, or parent "[i]". */
static void at(struct ctx *c, const char *parent, const char *key, int index)
{
    if (key) snprintf(c->key, sizeof c->key, "%s%s%s", parent, parent[0] ? "." : "", key);
    else snprintf(c->key, sizeof c->key, "%s[%d]", parent, index);
}

static swin_status unknown(struct ctx *c, const char *parent, const json_node *m, const char *known)
{
    char k[48];
    snprintf(k, sizeof k, "%s", m->key);
    for (char *p = k; *p; p++)
        if ((unsigned char)*p < 0x20) *p = '?';
    return swin_error_set(c->err, SWIN_ERR_ARG, "%s: unknown key \"%s\"%s%s (known: %s)", c->file, k,
                          parent[0] ? " in " : "", parent, known);
}

static swin_status object(struct ctx *c, const json_node *n)
{
    return n->kind == JSON_OBJECT ? SWIN_OK : bad(c, n, "an object");
}

static swin_status outputs(struct ctx *c, const json_node *o, struct node_config *cfg)
{
    static const char *const segs[] = {"binary", "labelmap", "none"};
    swin_status st = object(c, o);
    for (const json_node *m = st ? NULL : o->child; m && !st; m = m->next) {
        at(c, "outputs", m->key, 0);
        int v = 0;
        if (!strcmp(m->key, "seg")) {
            if (!(st = choice(c, m, segs, 3, &v, "\"binary\", \"labelmap\" or \"none\""))) cfg->seg = (enum node_seg)v;
        } else if (!strcmp(m->key, "rtstruct")) st = boolean(c, m, &cfg->rtstruct);
        else if (!strcmp(m->key, "report")) st = boolean(c, m, &cfg->report);
        else st = unknown(c, "outputs", m, "seg, rtstruct, report");
    }
    return st;
}

static swin_status delivery(struct ctx *c, const json_node *o, struct node_config *cfg)
{
    swin_status st = object(c, o);
    for (const json_node *m = st ? NULL : o->child; m && !st; m = m->next) {
        at(c, "delivery", m->key, 0);
        if (!strcmp(m->key, "attempts")) st = integer(c, m, 1, 1000, &cfg->attempts, "an integer 1..1000");
        else if (!strcmp(m->key, "first_delay_s"))
            st = seconds(c, m, 0, 86400, &cfg->first_delay_s, "seconds, 0..86400");
        else if (!strcmp(m->key, "max_delay_s")) st = seconds(c, m, 0, 86400, &cfg->max_delay_s, "seconds, 0..86400");
        else if (!strcmp(m->key, "timeout_s")) st = integer(c, m, 1, 3600, &cfg->timeout_s, "an integer 1..3600");
        else st = unknown(c, "delivery", m, "attempts, first_delay_s, max_delay_s, timeout_s");
    }
    return st;
}

static swin_status limits(struct ctx *c, const json_node *o, struct node_config *cfg)
{
    swin_status st = object(c, o);
    for (const json_node *m = st ? NULL : o->child; m && !st; m = m->next) {
        at(c, "limits", m->key, 0);
        if (!strcmp(m->key, "associations")) st = integer(c, m, 1, 256, &cfg->max_associations, "an integer 1..256");
        else if (!strcmp(m->key, "instance_bytes")) st = size(c, m, &cfg->instance_bytes);
        else if (!strcmp(m->key, "instances_per_study"))
            st = integer(c, m, 1, 1000000, &cfg->instances_per_study, "an integer 1..1000000");
        else if (!strcmp(m->key, "spool_bytes")) st = size(c, m, &cfg->spool_bytes);
        else if (!strcmp(m->key, "queued_studies"))
            st = integer(c, m, 1, 100000, &cfg->queued_studies, "an integer 1..100000");
        else
            st = unknown(c, "limits", m,
                         "associations, instance_bytes, instances_per_study, spool_bytes, "
                         "queued_studies");
    }
    if (!st && cfg->instance_bytes < 1024)
        st = swin_error_set(c->err, SWIN_ERR_ARG, "%s: limits.instance_bytes %zu: below 1K no CT slice fits", c->file,
                            cfg->instance_bytes);
    return st;
}

/* {certificate, private_key, ca, crl, peer_name, verify_peer}. server: the listening side's
 * (certificate and key required; no peer_name: callers are known by certificate and AE title);
 * web: a STOW-RS destination's (https verifies the server always, against ca or the system's
 * trusted certificates, and its name against the URL's host: no peer_name either). */
static swin_status tls(struct ctx *c, const json_node *o, const char *parent, bool server, bool web, struct node_tls *t)
{
    char path[64];
    snprintf(path, sizeof path, "%s%s%s", parent, parent[0] ? "." : "", "tls");
    *t = (struct node_tls){.on = true, .verify_peer = true};
    swin_status st = object(c, o);
    for (const json_node *m = st ? NULL : o->child; m && !st; m = m->next) {
        at(c, path, m->key, 0);
        if (!strcmp(m->key, "certificate")) st = text(c, m, sizeof t->certificate, t->certificate, "a PEM file");
        else if (!strcmp(m->key, "private_key")) st = text(c, m, sizeof t->private_key, t->private_key, "a PEM file");
        else if (!strcmp(m->key, "ca")) st = text(c, m, sizeof t->ca, t->ca, "a PEM file of trusted certificates");
        else if (!strcmp(m->key, "crl")) st = text(c, m, sizeof t->crl, t->crl, "a PEM file of revoked certificates");
        else if (!strcmp(m->key, "peer_name") && !server && !web)
            st = text(c, m, sizeof t->peer_name, t->peer_name, "the host name or address the peer's certificate names");
        else if (!strcmp(m->key, "verify_peer")) st = boolean(c, m, &t->verify_peer);
        else st = unknown(c, path, m, server || web ? "certificate, private_key, ca, crl, verify_peer"
                                                    : "certificate, private_key, ca, crl, peer_name, verify_peer");
    }
    if (st) return st;
    if (t->peer_name[0] && !t->verify_peer)
        return swin_error_set(c->err, SWIN_ERR_ARG, "%s: %s.peer_name is checked only with verify_peer", c->file, path);
    if (t->crl[0] && !t->verify_peer)
        return swin_error_set(c->err, SWIN_ERR_ARG, "%s: %s.crl is checked only with verify_peer", c->file, path);
    if (server && (!t->certificate[0] || !t->private_key[0]))
        return swin_error_set(c->err, SWIN_ERR_ARG, "%s: %s needs certificate and private_key", c->file, path);
    if (!t->certificate[0] != !t->private_key[0])
        return swin_error_set(c->err, SWIN_ERR_ARG, "%s: %s takes certificate and private_key together", c->file, path);
    if (web && !t->verify_peer)
        return swin_error_set(c->err, SWIN_ERR_ARG,
                              "%s: %s.verify_peer: an https destination is always verified (a private CA: give it "
                              "as ca)",
                              c->file, path);
    if (!web && t->verify_peer && !t->ca[0])
        return swin_error_set(c->err, SWIN_ERR_ARG, "%s: %s.verify_peer needs ca (the trusted certificates)", c->file,
                              path);
    return SWIN_OK;
}

static swin_status callers(struct ctx *c, const json_node *a, struct node_config *cfg)
{
    if (a->kind != JSON_ARRAY || !a->child || swin_json_len(a) > NODE_MAX_CALLERS)
        return bad(c, a, "a list of 1 to 64 {\"ae_title\", \"host\"} objects");
    swin_status st = SWIN_OK;
    int i = 0;
    for (const json_node *e = a->child; e && !st; e = e->next, i++) {
        at(c, "callers", NULL, i);
        struct node_caller *k = &cfg->callers[cfg->ncallers++];
        char parent[64];
        snprintf(parent, sizeof parent, "callers[%d]", i);
        st = object(c, e);
        for (const json_node *m = st ? NULL : e->child; m && !st; m = m->next) {
            at(c, parent, m->key, 0);
            if (!strcmp(m->key, "ae_title")) st = ae_title(c, m, k->ae);
            else if (!strcmp(m->key, "host")) st = host(c, m, k->host);
            else st = unknown(c, parent, m, "ae_title, host");
        }
        if (!st && !k->ae[0]) st = swin_error_set(c->err, SWIN_ERR_ARG, "%s: %s has no ae_title", c->file, parent);
    }
    return st;
}

/* An http:// or https:// URL of printable ASCII without spaces, a host after the scheme; its
 * trailing '/' dropped. */
static swin_status url(struct ctx *c, const json_node *n, char *out)
{
    const char *takes = "an http:// or https:// URL";
    size_t scheme = n->kind != JSON_STRING             ? 0
                    : !strncmp(n->text, "http://", 7)  ? 7
                    : !strncmp(n->text, "https://", 8) ? 8
                                                       : 0;
    if (!scheme || strlen(n->text) >= NODE_PATH_MAX || !n->text[scheme] || n->text[scheme] == '/')
        return bad(c, n, takes);
    for (const char *p = n->text; *p; p++)
        if (*p <= 0x20 || *p > 0x7e) return bad(c, n, takes);
    strcpy(out, n->text);
    for (size_t k = strlen(out); k > scheme + 1 && out[k - 1] == '/'; k--) out[k - 1] = 0;
    return SWIN_OK;
}

/* HTTP Basic's user: 1 to 127 printable ASCII characters, no ':' (RFC 7617 2). */
static swin_status user(struct ctx *c, const json_node *n, char *out)
{
    const char *takes = "a user name: 1 to 127 printable ASCII characters, no ':'";
    if (n->kind != JSON_STRING || !n->text[0] || strlen(n->text) > 127 || strchr(n->text, ':')) return bad(c, n, takes);
    for (const char *p = n->text; *p; p++)
        if (*p < 0x20 || *p > 0x7e) return bad(c, n, takes);
    strcpy(out, n->text);
    return SWIN_OK;
}

/* Whether the URL's host is this machine (credentials may go there over http): the whole host,
 * up to the port's ':', the path's '/' or the end ("http://[::1]x.example.org" is not). */
static bool url_is_loopback(const char *url)
{
    const char *h = url + (strncmp(url, "https://", 8) ? 7 : 8);
    size_t n = strcspn(h, ":/");
    if (h[0] == '[') n = strcspn(h, "]") + 1;
    if (h[n] && h[n] != ':' && h[n] != '/') return false;
    static const char *const loopback[] = {"127.0.0.1", "localhost", "[::1]"};
    for (size_t i = 0; i < sizeof loopback / sizeof *loopback; i++)
        if (strlen(loopback[i]) == n && !strncmp(h, loopback[i], n)) return true;
    return false;
}

/* A STOW-RS destination's OAuth 2 client credentials: {token_url, client_id, client_secret_file,
 * scope}; the token endpoint, like the STOW-RS URL, is https or this machine. */
static swin_status oauth(struct ctx *c, const json_node *o, const char *parent, struct node_oauth *a)
{
    char path[80];
    snprintf(path, sizeof path, "%s.oauth", parent);
    *a = (struct node_oauth){.on = true};
    swin_status st = object(c, o);
    for (const json_node *m = st ? NULL : o->child; m && !st; m = m->next) {
        at(c, path, m->key, 0);
        if (!strcmp(m->key, "token_url")) st = url(c, m, a->token_url);
        else if (!strcmp(m->key, "client_id")) st = user(c, m, a->client_id);
        else if (!strcmp(m->key, "client_secret_file"))
            st = text(c, m, sizeof a->client_secret_file, a->client_secret_file, "a file holding the client secret");
        else if (!strcmp(m->key, "scope")) st = text(c, m, sizeof a->scope, a->scope, "the scopes, space-separated");
        else st = unknown(c, path, m, "token_url, client_id, client_secret_file, scope");
    }
    if (!st && (!a->token_url[0] || !a->client_id[0] || !a->client_secret_file[0]))
        st = swin_error_set(c->err, SWIN_ERR_ARG, "%s: %s needs token_url, client_id and client_secret_file", c->file,
                            path);
    if (!st && strncmp(a->token_url, "https://", 8) && !url_is_loopback(a->token_url))
        st = swin_error_set(c->err, SWIN_ERR_ARG, "%s: %s.token_url: the client secret goes over https only (or to "
                            "this machine)", c->file, path);
    return st;
}

/* What a destination of its kind needs, and nothing of the other kind. */
static swin_status dest_complete(struct ctx *c, const char *parent, const struct node_dest *d)
{
    if (d->kind == NODE_DEST_STOWRS) {
        const bool https = !strncmp(d->url, "https://", 8);
        if (!d->name[0] || !d->url[0])
            return swin_error_set(c->err, SWIN_ERR_ARG, "%s: %s (stowrs) needs name and url", c->file, parent);
        if (d->ae[0] || d->host[0] || d->port)
            return swin_error_set(c->err, SWIN_ERR_ARG,
                                  "%s: %s (stowrs) takes name, url, tls, user, password_file, token_file and oauth: "
                                  "ae_title, host and port are for DIMSE destinations",
                                  c->file, parent);
        if (d->tls.on && !https)
            return swin_error_set(c->err, SWIN_ERR_ARG, "%s: %s.tls is for an https:// url", c->file, parent);
        if (!d->user[0] != !d->password_file[0])
            return swin_error_set(c->err, SWIN_ERR_ARG, "%s: %s takes user and password_file together", c->file,
                                  parent);
        if ((d->user[0] != 0) + (d->token_file[0] != 0) + d->oauth.on > 1)
            return swin_error_set(
                c->err, SWIN_ERR_ARG,
                "%s: %s: one of user and password_file (HTTP Basic), token_file (a bearer token) or oauth (client "
                "credentials)", c->file, parent);
        if ((d->user[0] || d->token_file[0] || d->oauth.on) && !https && !url_is_loopback(d->url))
            return swin_error_set(c->err, SWIN_ERR_ARG,
                                  "%s: %s: credentials go over https only (or to this machine): make the url "
                                  "https://",
                                  c->file, parent);
        return SWIN_OK;
    }
    if (d->url[0] || d->user[0] || d->password_file[0] || d->token_file[0] || d->oauth.on)
        return swin_error_set(c->err, SWIN_ERR_ARG,
                              "%s: %s: url, user, password_file, token_file and oauth are for \"kind\": \"stowrs\"",
                              c->file, parent);
    if (!d->name[0] || !d->ae[0] || !d->host[0] || !d->port)
        return swin_error_set(c->err, SWIN_ERR_ARG, "%s: %s needs name, ae_title, host and port", c->file, parent);
    return SWIN_OK;
}

static swin_status destinations(struct ctx *c, const json_node *a, struct node_config *cfg)
{
    static const char *const kinds[] = {"dimse", "stowrs"};
    if (a->kind != JSON_ARRAY || !a->child || swin_json_len(a) > NODE_MAX_DESTS)
        return bad(c, a, "a list of 1 to 8 {\"name\", \"ae_title\", \"host\", \"port\"} objects");
    swin_status st = SWIN_OK;
    int i = 0;
    for (const json_node *e = a->child; e && !st; e = e->next, i++) {
        struct node_dest *d = &cfg->dests[cfg->ndests++];
        const json_node *tls_node = NULL;
        char parent[64];
        snprintf(parent, sizeof parent, "destinations[%d]", i);
        at(c, "destinations", NULL, i);
        st = object(c, e);
        for (const json_node *m = st ? NULL : e->child; m && !st; m = m->next) {
            at(c, parent, m->key, 0);
            if (!strcmp(m->key, "name")) {
                st = text(c, m, sizeof d->name, d->name, "a name of 1 to 32 letters, digits, '_' or '-'");
                if (!st && strspn(d->name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") !=
                               strlen(d->name))
                    st = bad(c, m, "a name of 1 to 32 letters, digits, '_' or '-'");
            } else if (!strcmp(m->key, "ae_title")) st = ae_title(c, m, d->ae);
            else if (!strcmp(m->key, "host")) st = host(c, m, d->host);
            else if (!strcmp(m->key, "port")) st = integer(c, m, 1, 65535, &d->port, "a port 1..65535");
            else if (!strcmp(m->key, "tls")) tls_node = m;
            else if (!strcmp(m->key, "oauth")) st = oauth(c, m, parent, &d->oauth);
            else if (!strcmp(m->key, "user")) st = user(c, m, d->user);
            else if (!strcmp(m->key, "password_file"))
                st = text(c, m, sizeof d->password_file, d->password_file, "a file holding the password");
            else if (!strcmp(m->key, "token_file"))
                st = text(c, m, sizeof d->token_file, d->token_file, "a file holding the bearer token");
            else if (!strcmp(m->key, "kind")) {
                int v = 0;
                if (!(st = choice(c, m, kinds, 2, &v, "\"dimse\" or \"stowrs\""))) d->kind = (enum node_dest_kind)v;
            } else if (!strcmp(m->key, "url")) st = url(c, m, d->url);
            else
                st = unknown(c, parent, m,
                             "name, kind, ae_title, host, port, tls, url, user, password_file, token_file, oauth");
        }
        if (!st && tls_node) { /* after the loop: whether it is https's depends on kind */
            at(c, parent, "tls", 0);
            st = tls(c, tls_node, parent, false, d->kind == NODE_DEST_STOWRS, &d->tls);
        }
        if (!st) st = dest_complete(c, parent, d);
        if (!st && d->kind == NODE_DEST_DIMSE && d->tls.on && d->tls.verify_peer && !d->tls.peer_name[0])
            memcpy(d->tls.peer_name, d->host, sizeof d->tls.peer_name); /* both NODE_HOST_MAX, host terminated */
        for (int j = 0; !st && j + 1 < cfg->ndests; j++)
            if (!strcmp(cfg->dests[j].name, d->name))
                st = swin_error_set(c->err, SWIN_ERR_ARG, "%s: two destinations named \"%s\"", c->file, d->name);
    }
    return st;
}

static swin_status cube(struct ctx *c, const json_node *n, int out[3])
{
    const char *takes = "three multiples of 32 in 32..1024, [D, H, W]";
    if (swin_json_len(n) != 3) return bad(c, n, takes);
    for (int k = 0; k < 3; k++) {
        const json_node *e = swin_json_at(n, (size_t)k);
        swin_status st = integer(c, e, 32, 1024, &out[k], takes);
        if (st || out[k] % 32) return st ? st : bad(c, e, takes);
    }
    return SWIN_OK;
}

static swin_status member(struct ctx *c, const json_node *m, struct node_config *cfg)
{
    static const char *const backends[] = {"auto", "cpu", "cuda"}, *const precisions[] = {"fp32", "fp16", "bf16"};
    at(c, "", m->key, 0);
    int v = 0;
    swin_status st;
    const char *k = m->key;
    if (!strcmp(k, "ae_title")) return ae_title(c, m, cfg->ae);
    if (!strcmp(k, "port")) return integer(c, m, 1, 65535, &cfg->port, "a port 1..65535");
    if (!strcmp(k, "spool")) return text(c, m, sizeof cfg->spool, cfg->spool, "a folder");
    if (!strcmp(k, "log")) return text(c, m, sizeof cfg->log, cfg->log, "a file, or \"-\" for stderr");
    if (!strcmp(k, "model")) return text(c, m, sizeof cfg->model, cfg->model, "a model file or bundle folder");
    if (!strcmp(k, "merge_order")) {
        static const char *const orders[] = {"v15", "pre15", "v2"};
        if (!(st = choice(c, m, orders, 3, &v, "\"v15\", \"pre15\" or \"v2\"")))
            cfg->load.merge_order = (swin_merge_order_choice)(SWIN_MERGE_ORDER_V15 + v);
        return st;
    }
    if (!strcmp(k, "normalize")) {
        bool normalize = true;
        if (!(st = boolean(c, m, &normalize))) cfg->load.no_normalize = !normalize;
        return st;
    }
    if (!strcmp(k, "norm_groups")) return integer(c, m, 1, 4096, &cfg->load.norm_groups, "an integer 1..4096");
    if (!strcmp(k, "cube")) return cube(c, m, cfg->cube);
    if (!strcmp(k, "backend")) {
        if (!(st = choice(c, m, backends, 3, &v, "\"auto\", \"cpu\" or \"cuda\""))) cfg->backend = (enum node_backend)v;
        return st;
    }
    if (!strcmp(k, "precision")) {
        if (!(st = choice(c, m, precisions, 3, &v, "\"fp32\", \"fp16\" or \"bf16\"")))
            cfg->precision = (enum node_precision)v;
        return st;
    }
    if (!strcmp(k, "threads")) return integer(c, m, 0, 1024, &cfg->threads, "an integer 0..1024 (0: every core)");
    if (!strcmp(k, "mem_limit")) return size(c, m, &cfg->mem_limit);
    if (!strcmp(k, "workers")) return integer(c, m, 1, NODE_MAX_WORKERS, &cfg->workers, "an integer 1..16");
    if (!strcmp(k, "stable_age_s")) return seconds(c, m, 0.1, 86400, &cfg->stable_age_s, "seconds, 0.1..86400");
    if (!strcmp(k, "outputs")) return outputs(c, m, cfg);
    if (!strcmp(k, "callers")) return callers(c, m, cfg);
    if (!strcmp(k, "destinations")) return destinations(c, m, cfg);
    if (!strcmp(k, "delivery")) return delivery(c, m, cfg);
    if (!strcmp(k, "limits")) return limits(c, m, cfg);
    if (!strcmp(k, "tls")) return tls(c, m, "", true, false, &cfg->tls);
    return unknown(c, "", m,
                   "ae_title, port, tls, spool, log, model, merge_order, normalize, norm_groups, cube, backend, "
                   "precision, threads, mem_limit, workers, stable_age_s, outputs, callers, destinations, delivery, "
                   "limits");
}

swin_status node_config_parse(const char *text_in, size_t len, const char *name, struct node_config *cfg,
                              swin_error *err)
{
    *cfg = (struct node_config){.log = "-",
                                .workers = 1,
                                .rtstruct = true,
                                .report = true,
                                .stable_age_s = 10,
                                .attempts = 6,
                                .first_delay_s = 5,
                                .max_delay_s = 600,
                                .timeout_s = 30,
                                .max_associations = 8,
                                .instance_bytes = (size_t)256 << 20,
                                .instances_per_study = 20000,
                                .queued_studies = 1000};
    struct ctx c = {.file = name, .err = err};
    char why[160];
    json_node *root = swin_json_parse(text_in, len, why, sizeof why);
    if (!root) return swin_error_set(err, SWIN_ERR_ARG, "%s: not JSON: %s", name, why);
    swin_status st = root->kind == JSON_OBJECT ? SWIN_OK
                                               : swin_error_set(err, SWIN_ERR_ARG, "%s: not a JSON object", name);
    for (const json_node *m = st ? NULL : root->child; m && !st; m = m->next) {
        for (const json_node *o = root->child; o != m && !st; o = o->next)
            if (!strcmp(o->key, m->key)) st = swin_error_set(err, SWIN_ERR_ARG, "%s: \"%s\" given twice", name, m->key);
        if (!st) st = member(&c, m, cfg);
    }
    swin_json_free(root);
    const char *missing = !cfg->ae[0]      ? "ae_title"
                          : !cfg->port     ? "port"
                          : !cfg->spool[0] ? "spool"
                          : !cfg->model[0] ? "model"
                          : !cfg->ncallers ? "callers"
                          : !cfg->ndests   ? "destinations"
                                           : NULL;
    if (!st && missing) st = swin_error_set(err, SWIN_ERR_ARG, "%s: \"%s\" is required (docs/node.md)", name, missing);
    if (!st && cfg->seg == NODE_SEG_NONE && !cfg->rtstruct)
        st = swin_error_set(err, SWIN_ERR_ARG, "%s: outputs: no SEG and no RT Structure Set: nothing to send", name);
    if (!st && cfg->max_delay_s < cfg->first_delay_s)
        st = swin_error_set(err, SWIN_ERR_ARG, "%s: delivery.max_delay_s %g is below first_delay_s %g", name,
                            cfg->max_delay_s, cfg->first_delay_s);
    return st;
}

swin_status node_config_load(const char *path, struct node_config *c, swin_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) return swin_error_set(err, SWIN_ERR_IO, "%s: %s", path, strerror(errno));
    char *buf = malloc(NODE_CONFIG_MAX_BYTES + 1);
    size_t n = buf ? fread(buf, 1, NODE_CONFIG_MAX_BYTES + 1, f) : 0;
    int failed = ferror(f);
    fclose(f);
    swin_status st = !buf                        ? swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory")
                     : failed                    ? swin_error_set(err, SWIN_ERR_IO, "%s: cannot read it", path)
                     : n > NODE_CONFIG_MAX_BYTES ? swin_error_set(err, SWIN_ERR_ARG, "%s: larger than 1 MiB", path)
                                                 : node_config_parse(buf, n, path, c, err);
    free(buf);
    return st;
}
