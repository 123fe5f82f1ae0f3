/* STOW-RS delivery (stow.h). */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "apps/node/oauth.h"
#include "apps/node/secret.h"
#include "apps/node/stow.h"
#include "core/json.h"

#define STOW_ANSWER_MAX 65536 /* what is kept of the server's answer */

struct buf {
    char *data;
    size_t len, cap;
};

static int append(struct buf *b, const void *p, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1) cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d) return -1;
        b->data = d, b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = 0;
    return 0;
}

static int read_whole(const char *path, struct buf *out)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    char chunk[1 << 16];
    size_t n;
    int rc = 0;
    while (!rc && (n = fread(chunk, 1, sizeof chunk, f)) > 0) rc = append(out, chunk, n);
    if (ferror(f)) rc = -1;
    fclose(f);
    return rc;
}

static size_t on_answer(char *p, size_t size, size_t n, void *user)
{
    struct buf *b = user;
    size_t k = size * n, room = b->len < STOW_ANSWER_MAX ? STOW_ANSWER_MAX - b->len : 0;
    if (room && append(b, p, k < room ? k : room)) return 0;
    return k;
}

swin_status node_stow_init(swin_error *err)
{
    CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT);
    return rc ? swin_error_set(err, SWIN_ERR_IO, "libcurl could not start: %s", curl_easy_strerror(rc)) : SWIN_OK;
}

/* The multipart/related body: each file an application/dicom part. The boundary is one no
 * file contains. */
static swin_status body(const char *const *files, int nfiles, struct buf *parts, char *boundary, size_t bsize,
                        const char *name, swin_error *err)
{
    struct buf f[2] = {{0}};
    swin_status st = SWIN_OK;
    for (int i = 0; i < nfiles && !st; i++)
        if (read_whole(files[i], &f[i]))
            st = swin_error_set(err, SWIN_ERR_IO, "%s: cannot read %s: %s", name, files[i], strerror(errno));
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    for (unsigned long long k = (unsigned long long)ts.tv_nsec;; k++) {
        snprintf(boundary, bsize, "swinrun-stow-%016llx", k);
        bool found = false;
        for (int i = 0; i < nfiles && !found; i++)
            found = f[i].len && memmem(f[i].data, f[i].len, boundary, strlen(boundary));
        if (!found) break;
    }
    for (int i = 0; i < nfiles && !st; i++) {
        char head[128];
        int n = snprintf(head, sizeof head, "--%s\r\nContent-Type: application/dicom\r\n\r\n", boundary);
        if (append(parts, head, (size_t)n) || append(parts, f[i].data ? f[i].data : "", f[i].len) ||
            append(parts, "\r\n", 2))
            st = swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for the STOW-RS request");
    }
    char tail[64];
    int n = snprintf(tail, sizeof tail, "--%s--\r\n", boundary);
    if (!st && append(parts, tail, (size_t)n)) st = swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
    for (int i = 0; i < nfiles; i++) free(f[i].data);
    return st;
}

/* Items of a sequence attribute in a DICOM JSON answer (PS3.18 F.2): tag "ggggeeee". */
static size_t items(const json_node *root, const char *tag)
{
    const json_node *a = swin_json_get(root, tag);
    const json_node *v = a && a->kind == JSON_OBJECT ? swin_json_get(a, "Value") : NULL;
    return v && v->kind == JSON_ARRAY ? swin_json_len(v) : 0;
}

/* The first failed instance's FailureReason (0008,1197), or -1. */
static long failure_reason(const json_node *root)
{
    const json_node *a = swin_json_get(root, "00081198");
    const json_node *v = a && a->kind == JSON_OBJECT ? swin_json_get(a, "Value") : NULL;
    const json_node *item = v && v->kind == JSON_ARRAY ? swin_json_at(v, 0) : NULL;
    const json_node *r = item && item->kind == JSON_OBJECT ? swin_json_get(item, "00081197") : NULL;
    const json_node *rv = r && r->kind == JSON_OBJECT ? swin_json_get(r, "Value") : NULL;
    const json_node *n = rv && rv->kind == JSON_ARRAY ? swin_json_at(rv, 0) : NULL;
    return n && n->kind == JSON_NUMBER ? strtol(n->text, NULL, 10) : -1;
}

/* 200, or 202 (stored with warnings, or some failed; PS3.18 10.5.3), judged by the answer's
 * ReferencedSOPSequence and FailedSOPSequence: every file stored, none failed. An answer that is
 * not DICOM JSON leaves the status alone to say it. */
static swin_status judge(const struct node_dest *d, const char *url, long status, const struct buf *answer, int nfiles,
                         swin_error *err)
{
    char said[161] = ""; /* the answer's start, its white space runs as one space */
    size_t k = 0;
    for (const char *p = answer->data ? answer->data : ""; *p && k + 1 < sizeof said; p++)
        if (!isspace((unsigned char)*p)) said[k++] = *p;
        else if (k && said[k - 1] != ' ') said[k++] = ' ';
    said[k] = 0;
    if (status == 401 || status == 403)
        return swin_error_set(err, SWIN_ERR_IO, "%s (STOW-RS %s): HTTP %ld: %s%s(%s)", d->name, url, status, said,
                              said[0] ? " " : "",
                              d->user[0] || d->token_file[0] || d->oauth.on
                                  ? "the server refused the credentials given"
                                  : "the server wants credentials: user and password_file, token_file or oauth");
    if (status != 200 && status != 202)
        return swin_error_set(err, SWIN_ERR_IO, "%s (STOW-RS %s): HTTP %ld: %s", d->name, url, status, said);
    char why[160];
    json_node *root = answer->len ? swin_json_parse(answer->data, answer->len, why, sizeof why) : NULL;
    if (!root || root->kind != JSON_OBJECT) {
        swin_json_free(root);
        return status == 200 ? SWIN_OK
                             : swin_error_set(err, SWIN_ERR_IO, "%s (STOW-RS %s): HTTP 202 without a DICOM JSON answer",
                                              d->name, url);
    }
    size_t stored = items(root, "00081199"), failed = items(root, "00081198");
    long reason = failure_reason(root);
    swin_json_free(root);
    if (stored == (size_t)nfiles && !failed) return SWIN_OK;
    char code[40] = "";
    if (reason >= 0) snprintf(code, sizeof code, " (FailureReason 0x%04lX)", (unsigned long)reason);
    return swin_error_set(err, SWIN_ERR_IO, "%s (STOW-RS %s): HTTP %ld: %zu of %d instances stored, %zu failed%s",
                          d->name, url, status, stored, nfiles, failed, code);
}

swin_status node_stow(const struct node_dest *d, int timeout_s, const char *const *files, int nfiles, swin_error *err)
{
    if (nfiles > 2) return swin_error_set(err, SWIN_ERR_ARG, "%s: at most 2 files a request", d->name);
    struct buf parts = {0}, answer = {0};
    char boundary[64], url[NODE_PATH_MAX + 16], type[160];
    swin_status st = body(files, nfiles, &parts, boundary, sizeof boundary, d->name, err);
    CURL *c = st ? NULL : curl_easy_init();
    if (!st && !c) st = swin_error_set(err, SWIN_ERR_NOMEM, "%s: libcurl could not start a transfer", d->name);
    if (st) {
        free(parts.data);
        return st;
    }
    char secret[NODE_SECRET_MAX] = "";
    const char *secret_file = d->token_file[0] ? d->token_file : d->password_file;
    if (secret_file[0]) {
        char key[64];
        snprintf(key, sizeof key, "%s: %s", d->name, d->token_file[0] ? "token_file" : "password_file");
        st = node_secret_read(secret_file, key, secret, sizeof secret, err);
    } else if (d->oauth.on) {
        st = node_oauth_token(d, timeout_s, secret, sizeof secret, err);
    }
    if (st) {
        curl_easy_cleanup(c);
        free(parts.data);
        return st;
    }
    snprintf(url, sizeof url, "%s/studies", d->url);
    snprintf(type, sizeof type, "Content-Type: multipart/related; type=\"application/dicom\"; boundary=%s", boundary);
    const char *const lines[] = {type, "Accept: application/dicom+json", "Expect:"}; /* Expect: no 100-continue */
    struct curl_slist *h = NULL;
    bool headers = true;
    for (int i = 0; i < 3 && headers; i++) {
        struct curl_slist *more = curl_slist_append(h, lines[i]);
        headers = more != NULL;
        if (more) h = more;
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, parts.data);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)parts.len);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_answer);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &answer);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L); /* the delivery thread: no SIGALRM for DNS timeouts */
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, (long)timeout_s);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L); /* a transfer stalled for timeout_s fails */
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, (long)timeout_s);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    if (d->token_file[0] || d->oauth.on) { /* libcurl keeps copies of these strings until the cleanup */
        curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BEARER);
        curl_easy_setopt(c, CURLOPT_XOAUTH2_BEARER, secret);
    } else if (d->user[0]) {
        curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
        curl_easy_setopt(c, CURLOPT_USERNAME, d->user);
        curl_easy_setopt(c, CURLOPT_PASSWORD, secret);
    }
    node_secret_wipe(secret, sizeof secret);
    if (d->tls.certificate[0]) { /* a client certificate (mutual TLS) */
        curl_easy_setopt(c, CURLOPT_SSLCERT, d->tls.certificate);
        curl_easy_setopt(c, CURLOPT_SSLCERTTYPE, "PEM");
        curl_easy_setopt(c, CURLOPT_SSLKEY, d->tls.private_key);
        curl_easy_setopt(c, CURLOPT_SSLKEYTYPE, "PEM");
    }
    if (d->tls.ca[0]) curl_easy_setopt(c, CURLOPT_CAINFO, d->tls.ca);
    if (d->tls.crl[0]) curl_easy_setopt(c, CURLOPT_CRLFILE, d->tls.crl); /* the server's certificate checked against it */
    char curl_err[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, curl_err);
    CURLcode rc = headers ? curl_easy_perform(c) : CURLE_OUT_OF_MEMORY;
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (rc)
        st = swin_error_set(err, SWIN_ERR_IO, "%s (STOW-RS %s): %s", d->name, url,
                            curl_err[0] ? curl_err : curl_easy_strerror(rc));
    else st = judge(d, url, status, &answer, nfiles, err);
    if (!rc && status == 401 && d->oauth.on) node_oauth_forget(d); /* revoked early: the next try fetches anew */
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    free(parts.data);
    free(answer.data);
    return st;
}
