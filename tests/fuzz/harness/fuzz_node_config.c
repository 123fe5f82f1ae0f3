/* libFuzzer harness: the DICOM node's configuration reader (apps/node/node_config.h) on the
 * fuzzed bytes as the JSON file. A refusal must be one line with its status; whatever it
 * accepts must hold every value within the range its key documents. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/node/node_config.h"
#include "tests/fuzz/harness/fuzz_status.h"

static int ae_ok(const char *ae)
{
    size_t n = strlen(ae);
    return n >= 1 && n <= 16 && !strchr(ae, '\\');
}

/* A TLS block accepted: certificate and key together (required on the listening side, server),
 * ca whenever the peer is verified but for a STOW-RS destination (web: https falls back to the
 * system's CAs, and checks the URL's host, so no peer_name there or on the listening side); crl
 * and peer_name only with verify_peer; a DIMSE destination's verified peer_name is its host
 * unless given, so never empty. */
static int tls_ok(const struct node_tls *t, int server, int web)
{
    if (!t->on) return !t->certificate[0] && !t->private_key[0] && !t->ca[0] && !t->crl[0] && !t->peer_name[0];
    return !t->certificate[0] == !t->private_key[0] && (!server || t->certificate[0]) &&
           (web || !t->verify_peer || t->ca[0]) && (t->verify_peer || (!t->crl[0] && !t->peer_name[0])) &&
           ((server || web) ? !t->peer_name[0] : !t->verify_peer || t->peer_name[0]);
}

/* A STOW-RS base: http:// or https://, a host after it, no space or control character, no
 * trailing '/'. */
static int url_ok(const char *u)
{
    size_t scheme = !strncmp(u, "http://", 7) ? 7 : !strncmp(u, "https://", 8) ? 8 : 0, n = strlen(u);
    int ok = scheme && n > scheme && u[scheme] != '/' && u[n - 1] != '/';
    for (const char *p = u; *p; p++) ok &= *p > 0x20 && *p < 0x7f;
    return ok;
}

/* Whether an http:// URL's host is this machine: the name ends at ':', '/' or the end. */
static int loopback(const char *u)
{
    static const char *const hosts[] = {"http://127.0.0.1", "http://localhost", "http://[::1]"};
    for (size_t i = 0; i < sizeof hosts / sizeof *hosts; i++) {
        size_t n = strlen(hosts[i]);
        if (!strncmp(u, hosts[i], n) && (!u[n] || u[n] == ':' || u[n] == '/')) return 1;
    }
    return 0;
}

/* OAuth: off, or a token endpoint over https (or to this machine), a client id and its secret's file. */
static int oauth_ok(const struct node_oauth *o, int web)
{
    if (!o->on) return 1;
    int local = loopback(o->token_url);
    return web && url_ok(o->token_url) && (!strncmp(o->token_url, "https://", 8) || local) && o->client_id[0] &&
           !strchr(o->client_id, ':') && o->client_secret_file[0];
}

static void check_accepted(const struct node_config *c)
{
    int bad = !ae_ok(c->ae) || c->port < 1 || c->port > 65535 || !c->spool[0] || !c->model[0] || c->workers < 1 ||
              c->workers > NODE_MAX_WORKERS || c->ncallers < 1 || c->ncallers > NODE_MAX_CALLERS || c->ndests < 1 ||
              c->ndests > NODE_MAX_DESTS || c->attempts < 1 || !(c->stable_age_s >= 0.1) ||
              !(c->first_delay_s <= c->max_delay_s) || c->instance_bytes < 1024 || c->max_associations < 1;
    bad |= !tls_ok(&c->tls, 1, 0);
    for (int i = 0; i < c->ncallers; i++) bad |= !ae_ok(c->callers[i].ae);
    for (int i = 0; i < c->ndests; i++)
        bad |=
            (c->dests[i].kind == NODE_DEST_STOWRS
                 ? !url_ok(c->dests[i].url) || c->dests[i].ae[0] || c->dests[i].host[0] || c->dests[i].port ||
                       (c->dests[i].tls.on && (strncmp(c->dests[i].url, "https://", 8) || !c->dests[i].tls.verify_peer))
                 : !ae_ok(c->dests[i].ae) || !c->dests[i].host[0] || c->dests[i].port < 1 || c->dests[i].port > 65535 ||
                       c->dests[i].url[0] || c->dests[i].user[0] || c->dests[i].token_file[0]) ||
            !c->dests[i].user[0] != !c->dests[i].password_file[0] ||
            (c->dests[i].user[0] && (c->dests[i].token_file[0] || strchr(c->dests[i].user, ':'))) ||
            !c->dests[i].name[0] || !tls_ok(&c->dests[i].tls, 0, c->dests[i].kind == NODE_DEST_STOWRS) ||
            !oauth_ok(&c->dests[i].oauth, c->dests[i].kind == NODE_DEST_STOWRS) ||
            (c->dests[i].user[0] != 0) + (c->dests[i].token_file[0] != 0) + c->dests[i].oauth.on > 1 ||
            strspn(c->dests[i].name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                     "0123456789_-") != strlen(c->dests[i].name);
    for (int k = 0; k < 3; k++) bad |= c->cube[k] % 32 != 0 || c->cube[k] < 0 || c->cube[k] > 1024;
    bad |= c->load.norm_groups < 0 || c->load.norm_groups > 4096 || c->load.merge_order < SWIN_MERGE_ORDER_DEFAULT ||
           c->load.merge_order > SWIN_MERGE_ORDER_V2;
    if (bad) {
        fprintf(stderr, "fuzz harness: the configuration reader accepted an out-of-range value\n");
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
    static struct node_config c;
    swin_error err = {SWIN_OK, ""};
    swin_status st = node_config_parse((const char *)bytes, size, "config.json", &c, &err);
    fuzz_check_error(st, &err);
    if (!st) check_accepted(&c);
    return 0;
}
