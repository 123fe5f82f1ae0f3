// The trust store of the node's TLS layers (tls_trust.h).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "apps/node/tls_trust.h"

namespace {

// A store read from the files, or why not: key the configuration key at fault ("ca", "crl").
struct trust_read {
    X509_STORE *store = nullptr;
    int lists = 0;
    time_t earliest = 0; // the soonest nextUpdate of the lists (0: none has one)
    const char *key = nullptr;
    char why[256] = "";
};

bool fail(trust_read *r, const char *key, const char *why, const char *detail = nullptr)
{
    r->key = key;
    std::snprintf(r->why, sizeof r->why, "%s%s%s%s", why, detail ? " (OpenSSL: " : "", detail ? detail : "",
                  detail ? ")" : "");
    return false;
}

const char *openssl_reason()
{
    const char *s = ERR_reason_error_string(ERR_peek_last_error());
    return s ? s : "no reason given";
}

bool add_ca(const char *path, trust_read *r)
{
    FILE *f = std::fopen(path, "rb");
    if (!f) return fail(r, "ca", std::strerror(errno));
    std::fclose(f);
    if (X509_STORE_load_file(r->store, path) != 1) return fail(r, "ca", "no PEM certificate in it");
    int certs = 0;
    STACK_OF(X509_OBJECT) *objects = X509_STORE_get0_objects(r->store);
    for (int i = 0; i < sk_X509_OBJECT_num(objects); i++)
        certs += X509_OBJECT_get_type(sk_X509_OBJECT_value(objects, i)) == X509_LU_X509;
    return certs ? true : fail(r, "ca", "no PEM certificate in it");
}

// The revocation lists of path, every other PEM block skipped. PEM_read_X509_CRL stops at the
// end of the file (no further BEGIN line) or at a block or list it cannot read.
bool add_crls(const char *path, trust_read *r)
{
    FILE *f = std::fopen(path, "rb");
    if (!f) return fail(r, "crl", std::strerror(errno));
    bool ok = true;
    while (X509_CRL *c = PEM_read_X509_CRL(f, nullptr, nullptr, nullptr)) {
        const ASN1_TIME *next = X509_CRL_get0_nextUpdate(c);
        struct tm tm;
        if (next && ASN1_TIME_to_tm(next, &tm) == 1) {
            time_t t = timegm(&tm);
            if (!r->earliest || t < r->earliest) r->earliest = t;
        }
        ok = X509_STORE_add_crl(r->store, c) == 1;
        X509_CRL_free(c);
        if (!ok) break;
        r->lists++;
    }
    std::fclose(f);
    unsigned long e = ERR_peek_last_error();
    bool at_end = ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE;
    if (!ok || !at_end)
        return fail(r, "crl", "a list cut short or not a PEM certificate revocation list", openssl_reason());
    return r->lists ? true : fail(r, "crl", "no PEM certificate revocation list in it");
}

// ca and crl: paths, "" where not given.
trust_read read_trust(const char *ca, const char *crl)
{
    trust_read r;
    ERR_clear_error();
    r.store = X509_STORE_new();
    bool ok = r.store ? true : fail(&r, ca[0] ? "ca" : "crl", "out of memory");
    if (ok && ca[0]) ok = add_ca(ca, &r);
    if (ok && crl[0]) ok = add_crls(crl, &r);
    ERR_clear_error();
    if (!ok) {
        X509_STORE_free(r.store);
        r.store = nullptr;
    }
    return r;
}

// t as 2026-12-03T13:06:15Z.
void utc_text(time_t t, char *buf, size_t size)
{
    struct tm tm;
    gmtime_r(&t, &tm);
    std::strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

} // namespace

swin_status node_tls_trust_use(SSL_CTX *ctx, const struct node_tls *t, const char *file, const char *key,
                               swin_error *err)
{
    if (!t->ca[0] && !t->crl[0]) return SWIN_OK;
    trust_read r = read_trust(t->ca, t->crl);
    if (!r.store)
        return swin_error_set(err, SWIN_ERR_ARG, "%s: %s.%s %s: %s", file, key, r.key,
                              !std::strcmp(r.key, "ca") ? t->ca : t->crl, r.why);
    SSL_CTX_set_cert_store(ctx, r.store);
    if (t->crl[0]) {
        X509_VERIFY_PARAM *p = SSL_CTX_get0_param(ctx); // copied into each connection
        if (!p || X509_VERIFY_PARAM_set_flags(p, X509_V_FLAG_CRL_CHECK) != 1)
            return swin_error_set(err, SWIN_ERR_IO, "%s: %s.crl: OpenSSL did not take the revocation check", file, key);
    }
    return SWIN_OK;
}

extern "C" void node_tls_crl_describe(const struct node_tls *t, char *buf, size_t size)
{
    buf[0] = 0;
    if (!t->crl[0]) return;
    trust_read r = read_trust("", t->crl);
    if (!r.store) return;
    X509_STORE_free(r.store);
    if (!r.earliest) {
        std::snprintf(buf, size, "%d list%s, without a next update", r.lists, r.lists == 1 ? "" : "s");
        return;
    }
    char when[32];
    utc_text(r.earliest, when, sizeof when);
    bool past = std::time(nullptr) >= r.earliest;
    std::snprintf(buf, size, "%d list%s, the soonest next update %s%s", r.lists, r.lists == 1 ? "" : "s", when,
                  past ? ": PASSED, peers are refused until a newer list replaces it" : "");
}
