/* libcurl transfers for swinrun fetch (apps/cli/fetch_http.h). */
#include "apps/cli/fetch_http.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>

#include "core/clock.h"
#include "pipeline/swinrun.h"

/* What one transfer's callbacks share. */
struct transfer {
    const struct fetch_http *h;
    CURL *c;
    char why[256]; /* set when a callback stopped the transfer */
    /* to memory */
    char *data;
    size_t len, max;
    /* to a file */
    FILE *f;
    long long offset;      /* bytes already in the file when the request was sent */
    long long range_start; /* the last response's Content-Range start; -1: none */
    int decided;           /* the final response's status was looked at */
    /* progress */
    const char *label;
    int tty, line_open, last_step;
    double last_draw;
};

swin_status fetch_http_init(swin_error *err)
{
    CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT);
    return rc ? swin_error_set(err, SWIN_ERR_IO, "libcurl could not start: %s", curl_easy_strerror(rc)) : SWIN_OK;
}

void fetch_http_cleanup(void)
{
    curl_global_cleanup();
}

static int on_progress(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
    struct transfer *t = user;
    if (t->h->cancel && *t->h->cancel) return 1;
    if (!t->label || !t->decided) return 0;
    const double MiB = 1024.0 * 1024.0;
    double have = (double)(t->offset + dlnow), total = dltotal > 0 ? (double)(t->offset + dltotal) : 0;
    int step = total > 0 ? (int)(10.0 * have / total) : (int)(have / (64 * MiB));
    if (t->tty) {
        double tn = swin_clock_seconds();
        if (tn - t->last_draw < 0.2 && have < total) return 0;
        t->last_draw = tn;
        if (total > 0)
            fprintf(stderr, "\rswinrun fetch: %s %.1f / %.1f MiB (%d%%)", t->label, have / MiB, total / MiB,
                    (int)(100.0 * have / total));
        else fprintf(stderr, "\rswinrun fetch: %s %.1f MiB", t->label, have / MiB);
        t->line_open = 1;
    } else if (step > t->last_step) {
        t->last_step = step;
        if (total > 0)
            fprintf(stderr, "swinrun fetch: %s %.1f / %.1f MiB (%d%%)\n", t->label, have / MiB, total / MiB,
                    (int)(100.0 * have / total));
        else fprintf(stderr, "swinrun fetch: %s %.1f MiB\n", t->label, have / MiB);
    }
    return 0;
}

/* The options every transfer has. */
static void common_options(struct transfer *t, const char *url, char *errbuf)
{
    CURL *c = t->c;
    const char *protocols = t->h->allow_http ? "http,https" : "https";
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, protocols);
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, protocols);
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(c, CURLOPT_MAXREDIRS, (long)FETCH_HTTP_MAX_REDIRECTS);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, t->h->timeout_s);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, t->h->timeout_s);
    curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "swinrun/" SWINRUN_VERSION);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, t);
}

/* The one-line message of a failed transfer. */
static swin_status failed(struct transfer *t, CURLcode rc, const char *url, const char *errbuf, swin_error *err)
{
    long code = 0;
    curl_easy_getinfo(t->c, CURLINFO_RESPONSE_CODE, &code);
    const char *where = NULL;
    curl_easy_getinfo(t->c, CURLINFO_EFFECTIVE_URL, &where);
    if (!where) where = url;
    switch (rc) {
    case CURLE_ABORTED_BY_CALLBACK: return swin_error_set(err, SWIN_ERR_CANCELLED, "interrupted");
    case CURLE_WRITE_ERROR:
        return swin_error_set(err, SWIN_ERR_IO, "%s: %s", where, t->why[0] ? t->why : "could not store the data");
    case CURLE_HTTP_RETURNED_ERROR: return swin_error_set(err, SWIN_ERR_IO, "HTTP status %ld from %s", code, where);
    case CURLE_PARTIAL_FILE:
        return swin_error_set(err, SWIN_ERR_IO, "%s: the transfer ended early (%s)", where,
                              errbuf[0] ? errbuf : curl_easy_strerror(rc));
    case CURLE_TOO_MANY_REDIRECTS:
        return swin_error_set(err, SWIN_ERR_IO, "%s: more than %d redirects", url, FETCH_HTTP_MAX_REDIRECTS);
    case CURLE_OPERATION_TIMEDOUT:
        return swin_error_set(err, SWIN_ERR_IO, "%s: timed out (no progress for %ld s; see --timeout)", where,
                              t->h->timeout_s);
    case CURLE_UNSUPPORTED_PROTOCOL:
        return swin_error_set(err, SWIN_ERR_IO, "%s: protocol refused (%s only)%s%s", where,
                              t->h->allow_http ? "http and https" : "https", errbuf[0] ? ": " : "", errbuf);
    default: return swin_error_set(err, SWIN_ERR_IO, "%s: %s", where, errbuf[0] ? errbuf : curl_easy_strerror(rc));
    }
}

static size_t to_memory(char *p, size_t size, size_t n, void *user)
{
    struct transfer *t = user;
    size_t bytes = size * n;
    if (bytes > t->max - t->len) {
        snprintf(t->why, sizeof t->why, "larger than %zu bytes", t->max);
        return 0;
    }
    char *d = realloc(t->data, t->len + bytes + 1);
    if (!d) {
        snprintf(t->why, sizeof t->why, "out of host memory");
        return 0;
    }
    memcpy(d + t->len, p, bytes);
    t->data = d;
    t->len += bytes;
    d[t->len] = 0;
    return bytes;
}

swin_status fetch_http_get(const struct fetch_http *h, const char *url, size_t max, char **data, size_t *len,
                           long *status, swin_error *err)
{
    struct transfer t = {.h = h, .max = max, .decided = 1};
    char errbuf[CURL_ERROR_SIZE] = "";
    if (!(t.c = curl_easy_init())) return swin_error_set(err, SWIN_ERR_NOMEM, "libcurl could not start a transfer");
    common_options(&t, url, errbuf);
    curl_easy_setopt(t.c, CURLOPT_WRITEFUNCTION, to_memory);
    curl_easy_setopt(t.c, CURLOPT_WRITEDATA, &t);
    CURLcode rc = curl_easy_perform(t.c);
    if (status) curl_easy_getinfo(t.c, CURLINFO_RESPONSE_CODE, status);
    swin_status st = rc ? failed(&t, rc, url, errbuf, err) : SWIN_OK;
    if (!st && !t.data && !(t.data = calloc(1, 1))) st = swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
    curl_easy_cleanup(t.c);
    if (st) {
        free(t.data);
        return st;
    }
    *data = t.data;
    *len = t.len;
    return SWIN_OK;
}

/* Notes each response's Content-Range start (redirects come with their own headers). */
static size_t on_header(char *p, size_t size, size_t n, void *user)
{
    struct transfer *t = user;
    size_t bytes = size * n;
    if (bytes >= 5 && !memcmp(p, "HTTP/", 5)) t->range_start = -1;
    static const char name[] = "content-range:";
    if (bytes > sizeof name && !strncasecmp(p, name, sizeof name - 1)) {
        char v[64];
        size_t k = bytes - (sizeof name - 1) < sizeof v - 1 ? bytes - (sizeof name - 1) : sizeof v - 1;
        memcpy(v, p + sizeof name - 1, k);
        v[k] = 0;
        long long start;
        if (sscanf(v, " bytes %lld-", &start) == 1 && start >= 0) t->range_start = start;
    }
    return bytes;
}

static size_t to_file(char *p, size_t size, size_t n, void *user)
{
    struct transfer *t = user;
    size_t bytes = size * n;
    if (!t->decided) {
        long code = 0;
        curl_easy_getinfo(t->c, CURLINFO_RESPONSE_CODE, &code);
        if (code == 206 && t->range_start != t->offset) {
            snprintf(t->why, sizeof t->why, "the server sent a range starting at byte %lld, not %lld", t->range_start,
                     t->offset);
            return 0;
        }
        if (code != 206 && t->offset) { /* the whole file instead of the range: start again */
            if (fflush(t->f) || ftruncate(fileno(t->f), 0)) {
                snprintf(t->why, sizeof t->why, "cannot truncate the partial file: %s", strerror(errno));
                return 0;
            }
            fprintf(stderr, "swinrun fetch: the server does not resume; %s starts again\n", t->label);
            t->offset = 0;
        }
        t->decided = 1;
    }
    if (fwrite(p, 1, bytes, t->f) != bytes) {
        snprintf(t->why, sizeof t->why, "cannot write the partial file: %s", strerror(errno));
        return 0;
    }
    return bytes;
}

/* One GET of url appended to part_path from its current size. */
static swin_status get_once(const struct fetch_http *h, const char *url, const char *part_path, const char *label,
                            long *http_code, swin_error *err)
{
    struct stat sb;
    long long have = stat(part_path, &sb) == 0 ? (long long)sb.st_size : 0;
    struct transfer t = {.h = h, .offset = have, .range_start = -1, .label = label, .tty = isatty(2), .last_step = -1};
    if (!(t.f = fopen(part_path, "ab")))
        return swin_error_set(err, SWIN_ERR_IO, "cannot write %s: %s", part_path, strerror(errno));
    char errbuf[CURL_ERROR_SIZE] = "", range[32];
    if (!(t.c = curl_easy_init())) {
        fclose(t.f);
        return swin_error_set(err, SWIN_ERR_NOMEM, "libcurl could not start a transfer");
    }
    common_options(&t, url, errbuf);
    if (have) {
        snprintf(range, sizeof range, "%lld-", have);
        curl_easy_setopt(t.c, CURLOPT_RANGE, range);
        fprintf(stderr, "swinrun fetch: %s: resuming at byte %lld\n", label, have);
    }
    curl_easy_setopt(t.c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(t.c, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(t.c, CURLOPT_WRITEFUNCTION, to_file);
    curl_easy_setopt(t.c, CURLOPT_WRITEDATA, &t);
    CURLcode rc = curl_easy_perform(t.c);
    if (t.line_open) fputc('\n', stderr);
    curl_easy_getinfo(t.c, CURLINFO_RESPONSE_CODE, http_code);
    swin_status st = rc ? failed(&t, rc, url, errbuf, err) : SWIN_OK;
    curl_easy_cleanup(t.c);
    int e = 0;
    if (fflush(t.f) || fsync(fileno(t.f))) e = errno;
    if (fclose(t.f) && !e) e = errno;
    if (!st && e) st = swin_error_set(err, SWIN_ERR_IO, "cannot write %s: %s", part_path, strerror(e));
    return st;
}

swin_status fetch_http_get_resumable(const struct fetch_http *h, const char *url, const char *part_path,
                                     const char *label, swin_error *err)
{
    long code = 0;
    swin_status st = get_once(h, url, part_path, label, &code, err);
    if (st && code == 416) { /* the range lies past what the server has: the partial file is not its file */
        fprintf(stderr, "swinrun fetch: the server refused the range (HTTP 416); %s starts again\n", label);
        if (truncate(part_path, 0))
            return swin_error_set(err, SWIN_ERR_IO, "cannot truncate %s: %s", part_path, strerror(errno));
        st = get_once(h, url, part_path, label, &code, err);
    }
    return st;
}
