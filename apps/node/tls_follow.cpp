// The listening side's TLS files followed (tls_follow.h).
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>
#include <new>

#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmtls/tlslayer.h>

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "apps/node/node_log.h"
#include "apps/node/tls_follow.h"
#include "apps/node/tls_layer.h"
#include "apps/node/tls_trust.h"

namespace {

// Its lock serialises the check (a ClientHello of a renegotiation could come from a worker's
// connection; renegotiation is off, the lock keeps it safe regardless).
struct tls_watch {
    std::mutex lock;
    struct node_tls t;
    struct node_tls_seen seen;
    time_t next_update;
    bool expired_logged;
};

bool same_file(const struct stat &a, const struct stat &b)
{
    return a.st_ino == b.st_ino && a.st_dev == b.st_dev && a.st_size == b.st_size &&
           a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec;
}

void look(const char *path, struct stat *st)
{
    if (!path[0] || stat(path, st) != 0) std::memset(st, 0, sizeof *st);
}

bool changed(const struct node_tls_seen &a, const struct node_tls_seen &b)
{
    return !same_file(a.certificate, b.certificate) || !same_file(a.private_key, b.private_key) ||
           !same_file(a.ca, b.ca) || !same_file(a.crl, b.crl);
}

// The certificate, its chain and key, and the trust store of `from` into ctx and into the
// connection s whose ClientHello is being handled (s took ctx's certificate when it was made).
bool take(SSL_CTX *ctx, SSL *s, SSL_CTX *from)
{
    X509 *cert = SSL_CTX_get0_certificate(from);
    EVP_PKEY *key = SSL_CTX_get0_privatekey(from);
    STACK_OF(X509) *chain = nullptr;
    X509_STORE *store = SSL_CTX_get_cert_store(from);
    if (!cert || !key || !store || !SSL_CTX_get0_chain_certs(from, &chain)) return false;
    if (SSL_CTX_use_cert_and_key(ctx, cert, key, chain, 1) != 1 || SSL_use_cert_and_key(s, cert, key, chain, 1) != 1 ||
        X509_STORE_up_ref(store) != 1)
        return false;
    SSL_CTX_set_cert_store(ctx, store); // frees the old store
    return true;
}

void reload(SSL *s, tls_watch *w)
{
    swin_error err = {SWIN_OK, ""};
    time_t next = 0;
    std::unique_ptr<DcmTLSTransportLayer> l(node_tls_layer_read(&w->t, true, "the configuration", "tls", &next, &err));
    char m[sizeof err.msg + 8], c[NODE_PATH_MAX + 8];
    if (!l || !take(SSL_get_SSL_CTX(s), s, l->getNativeHandle())) {
        node_log_event("tls_reload_failed", nullptr, "\"reason\": %s, \"kept\": \"the files read before\"",
                       node_log_str(l ? "OpenSSL did not take the certificate, key or store" : err.msg, m, sizeof m));
        return;
    }
    w->next_update = next;
    w->expired_logged = false;
    char when[32] = "none";
    if (next) node_tls_utc_text(next, when, sizeof when);
    node_log_event("tls_reloaded", nullptr, "\"certificate\": %s, \"crl_next_update\": \"%s\"",
                   node_log_str(w->t.certificate, c, sizeof c), when);
}

int on_client_hello(SSL *s, int *, void *arg)
{
    auto *w = static_cast<tls_watch *>(arg);
    std::lock_guard<std::mutex> g(w->lock);
    struct node_tls_seen now;
    node_tls_seen_now(&w->t, &now);
    if (changed(now, w->seen)) {
        w->seen = now; // a file that cannot be read now is read again when it changes again
        reload(s, w);
    }
    if (w->next_update && std::time(nullptr) >= w->next_update && !w->expired_logged) {
        char a[NODE_PATH_MAX + 8], when[32];
        node_tls_utc_text(w->next_update, when, sizeof when);
        node_log_event("crl_expired", nullptr,
                       "\"crl\": %s, \"next_update\": \"%s\", \"effect\": \"every caller refused until a newer list "
                       "replaces it\"",
                       node_log_str(w->t.crl, a, sizeof a), when);
        w->expired_logged = true;
    }
    return SSL_CLIENT_HELLO_SUCCESS;
}

void free_watch(void *, void *ptr, CRYPTO_EX_DATA *, int, long, void *)
{
    delete static_cast<tls_watch *>(ptr);
}

// The SSL_CTX slot that owns a context's watch (freed with the context).
int watch_slot()
{
    static std::once_flag once;
    static int slot = -1;
    std::call_once(once, [] { slot = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, free_watch); });
    return slot;
}

} // namespace

void node_tls_seen_now(const struct node_tls *t, struct node_tls_seen *seen)
{
    look(t->certificate, &seen->certificate);
    look(t->private_key, &seen->private_key);
    look(t->ca, &seen->ca);
    look(t->crl, &seen->crl);
}

swin_status node_tls_follow(SSL_CTX *ctx, const struct node_tls *t, const struct node_tls_seen *seen,
                            time_t next_update, swin_error *err)
{
    auto *w = new (std::nothrow) tls_watch();
    int slot = watch_slot();
    if (!w || slot < 0 || SSL_CTX_set_ex_data(ctx, slot, w) != 1) {
        delete w;
        return swin_error_set(err, SWIN_ERR_NOMEM, "no memory to follow the TLS files");
    }
    w->t = *t;
    w->seen = *seen;
    w->next_update = next_update;
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
    SSL_CTX_set_client_hello_cb(ctx, on_client_hello, w);
    return SWIN_OK;
}
