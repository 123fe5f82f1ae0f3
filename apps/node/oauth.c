/* OAuth 2.0 client credentials for STOW-RS (oauth.h). */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include "apps/node/oauth.h"
#include "apps/node/secret.h"
#include "core/json.h"

#define ANSWER_MAX 16384       /* a token endpoint's answer; a JSON Web Token fits */
#define DEFAULT_LIFETIME_S 300 /* expires_in is RECOMMENDED, not required (RFC 6749 5.1) */

/* The tokens held, one per destination (by name). */
static struct held {
    char dest[33];
    char token[NODE_SECRET_MAX];
    time_t renew_at; /* monotonic seconds: fetch another from here on */
} held[NODE_MAX_DESTS];
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;

struct answer {
    char data[ANSWER_MAX];
    size_t len;
};

static size_t on_answer(char *p, size_t size, size_t n, void *user)
{
    struct answer *a = user;
    size_t k = size * n, room = sizeof a->data - 1 - a->len;
    memcpy(a->data + a->len, p, k < room ? k : room);
    a->len += k < room ? k : room;
    a->data[a->len] = 0;
    return k;
}

static time_t now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec;
}

static struct held *slot(const char *dest)
{
    for (int i = 0; i < NODE_MAX_DESTS; i++)
        if (!strcmp(held[i].dest, dest)) return &held[i];
    for (int i = 0; i < NODE_MAX_DESTS; i++)
        if (!held[i].dest[0]) {
            snprintf(held[i].dest, sizeof held[i].dest, "%s", dest);
            return &held[i];
        }
    return NULL;
}

/* The form body: grant_type, client_id, client_secret and scope, each percent-encoded. */
static char *form(CURL *c, const struct node_oauth *o, const char *secret)
{
    char *id = curl_easy_escape(c, o->client_id, 0), *sec = curl_easy_escape(c, secret, 0);
    char *scope = o->scope[0] ? curl_easy_escape(c, o->scope, 0) : NULL;
    char *body = NULL;
    if (id && sec && (scope || !o->scope[0])) {
        size_t n = strlen(id) + strlen(sec) + (scope ? strlen(scope) : 0) + 96;
        if ((body = malloc(n)))
            snprintf(body, n, "grant_type=client_credentials&client_id=%s&client_secret=%s%s%s", id, sec,
                     scope ? "&scope=" : "", scope ? scope : "");
    }
    if (sec) node_secret_wipe(sec, strlen(sec));
    curl_free(id), curl_free(sec), curl_free(scope);
    return body;
}

/* The answer's access_token and its lifetime (RFC 6749 5.1), or why not. An error answer (5.2)
 * gives its error and error_description. */
static swin_status read_answer(const struct node_dest *d, long status, const struct answer *a, char *token, size_t cap,
                               long *lifetime, swin_error *err)
{
    char why[160];
    json_node *root = a->len ? swin_json_parse(a->data, a->len, why, sizeof why) : NULL;
    const char *error = swin_json_text(swin_json_get(root, "error"));
    const char *desc = swin_json_text(swin_json_get(root, "error_description"));
    const char *tok = swin_json_text(swin_json_get(root, "access_token"));
    const char *type = swin_json_text(swin_json_get(root, "token_type"));
    const json_node *exp = swin_json_get(root, "expires_in");
    swin_status st = SWIN_OK;
    if (status != 200 || !tok) {
        st = swin_error_set(err, SWIN_ERR_IO, "%s (oauth token_url %s): HTTP %ld: %s%s%s%s", d->name, d->oauth.token_url,
                            status, error ? error : root ? "no access_token in the answer" : "not a JSON answer",
                            desc ? " (" : "", desc ? desc : "", desc ? ")" : "");
    } else if (type && strcasecmp(type, "bearer")) {
        st = swin_error_set(err, SWIN_ERR_IO, "%s (oauth token_url %s): a token of type '%.32s', not a bearer token",
                            d->name, d->oauth.token_url, type);
    } else {
        size_t n = strlen(tok);
        bool ok = n && n < cap;
        for (size_t i = 0; ok && i < n; i++) ok = tok[i] > 0x20 && tok[i] < 0x7f;
        if (!ok)
            st = swin_error_set(err, SWIN_ERR_IO, "%s (oauth token_url %s): an access_token that is empty, over %zu "
                                "bytes or not printable ASCII", d->name, d->oauth.token_url, cap - 1);
        else memcpy(token, tok, n + 1);
        *lifetime = exp && exp->kind == JSON_NUMBER ? strtol(exp->text, NULL, 10) : DEFAULT_LIFETIME_S;
        if (*lifetime <= 0) *lifetime = DEFAULT_LIFETIME_S;
    }
    swin_json_free(root);
    return st;
}

/* One token request. */
static swin_status fetch(const struct node_dest *d, int timeout_s, char *token, size_t cap, long *lifetime,
                         swin_error *err)
{
    char secret[NODE_SECRET_MAX], key[64];
    snprintf(key, sizeof key, "%s: oauth.client_secret_file", d->name);
    swin_status st = node_secret_read(d->oauth.client_secret_file, key, secret, sizeof secret, err);
    if (st) return st;
    CURL *c = curl_easy_init();
    char *body = c ? form(c, &d->oauth, secret) : NULL;
    node_secret_wipe(secret, sizeof secret);
    struct curl_slist *h = curl_slist_append(NULL, "Accept: application/json");
    struct answer *a = calloc(1, sizeof *a);
    if (!c || !body || !h || !a) st = swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of memory for the token request", d->name);
    char curl_err[CURL_ERROR_SIZE] = "";
    if (!st) {
        curl_easy_setopt(c, CURLOPT_URL, d->oauth.token_url);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_answer);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, a);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, (long)timeout_s);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)timeout_s * 2);
        curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(c, CURLOPT_ERRORBUFFER, curl_err);
        if (d->tls.ca[0]) curl_easy_setopt(c, CURLOPT_CAINFO, d->tls.ca);
        CURLcode rc = curl_easy_perform(c);
        long status = 0;
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        st = rc ? swin_error_set(err, SWIN_ERR_IO, "%s (oauth token_url %s): %s", d->name, d->oauth.token_url,
                                 curl_err[0] ? curl_err : curl_easy_strerror(rc))
                : read_answer(d, status, a, token, cap, lifetime, err);
    }
    if (body) node_secret_wipe(body, strlen(body));
    free(body);
    free(a);
    curl_slist_free_all(h);
    if (c) curl_easy_cleanup(c);
    return st;
}

swin_status node_oauth_token(const struct node_dest *d, int timeout_s, char *token, size_t cap, swin_error *err)
{
    pthread_mutex_lock(&held_lock);
    struct held *h = slot(d->name);
    swin_status st = SWIN_OK;
    if (!h) {
        st = swin_error_set(err, SWIN_ERR_INTERNAL, "%s: no room for its token", d->name);
    } else if (!h->token[0] || now_s() >= h->renew_at) {
        long lifetime = 0;
        node_secret_wipe(h->token, sizeof h->token);
        st = fetch(d, timeout_s, h->token, sizeof h->token, &lifetime, err);
        /* renewed ahead of its end: a minute early, or half its life when that is shorter */
        if (!st) h->renew_at = now_s() + lifetime - (lifetime / 2 < 60 ? lifetime / 2 : 60);
        else node_secret_wipe(h->token, sizeof h->token);
    }
    if (!st) snprintf(token, cap, "%s", h->token);
    pthread_mutex_unlock(&held_lock);
    return st;
}

void node_oauth_forget(const struct node_dest *d)
{
    pthread_mutex_lock(&held_lock);
    struct held *h = slot(d->name);
    if (h) node_secret_wipe(h->token, sizeof h->token);
    pthread_mutex_unlock(&held_lock);
}
