// The node's TLS layers (tls.h).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmtls/tlslayer.h>

#include <arpa/inet.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "apps/node/tls.h"
#include "apps/node/tls_trust.h"

namespace {

// A file the service user can read, or why not (the errno of opening it).
swin_status readable(const char *path, const char *file, const char *key, const char *what, swin_error *err)
{
    FILE *f = std::fopen(path, "rb");
    if (!f) return swin_error_set(err, SWIN_ERR_ARG, "%s: %s.%s %s: %s", file, key, what, path, std::strerror(errno));
    std::fclose(f);
    return SWIN_OK;
}

// Every connection the layer makes checks that the peer's certificate names name: an IP
// address against its subjectAltName addresses, a host name against its DNS names (the common
// name where it has none), wildcards only whole-label, as https clients check (RFC 6125).
// DCMTK leaves this to the caller: it has the OpenSSL context, whose parameters each
// connection copies.
bool check_peer_name(DcmTLSTransportLayer *l, const char *name)
{
    SSL_CTX *ctx = l->getNativeHandle();
    X509_VERIFY_PARAM *p = ctx ? SSL_CTX_get0_param(ctx) : nullptr;
    if (!p) return false;
    X509_VERIFY_PARAM_set_hostflags(p, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    unsigned char addr[16];
    bool ip = inet_pton(AF_INET, name, addr) == 1 || inet_pton(AF_INET6, name, addr) == 1;
    return (ip ? X509_VERIFY_PARAM_set1_ip_asc(p, name) : X509_VERIFY_PARAM_set1_host(p, name, 0)) == 1;
}

} // namespace

DcmTLSTransportLayer *node_tls_layer(const struct node_tls *t, bool server, const char *file, const char *key,
                                     swin_error *err)
{
    std::unique_ptr<DcmTLSTransportLayer> l(
        new DcmTLSTransportLayer(server ? NET_ACCEPTOR : NET_REQUESTOR, nullptr, OFTrue));
    OFCondition c = l->setTLSProfile(TSP_Profile_BCP195);
    if (c.good()) c = l->activateCipherSuites();
    if (c.bad()) {
        swin_error_set(err, SWIN_ERR_IO, "%s: %s: the TLS profile BCP 195: %s", file, key, c.text());
        return nullptr;
    }
    // an encrypted key fails here rather than OpenSSL asking for its passphrase on a terminal
    l->setPrivateKeyPasswd("");
    if (t->private_key[0]) {
        if (readable(t->private_key, file, key, "private_key", err) ||
            readable(t->certificate, file, key, "certificate", err))
            return nullptr;
        if (l->setPrivateKeyFile(t->private_key, DCF_Filetype_PEM).bad()) {
            swin_error_set(err, SWIN_ERR_ARG, "%s: %s.private_key %s: not an unencrypted PEM private key", file, key,
                           t->private_key);
            return nullptr;
        }
        if (l->setCertificateFile(t->certificate, DCF_Filetype_PEM).bad()) {
            swin_error_set(err, SWIN_ERR_ARG, "%s: %s.certificate %s: not a PEM certificate", file, key,
                           t->certificate);
            return nullptr;
        }
        if (!l->checkPrivateKeyMatchesCertificate()) {
            swin_error_set(err, SWIN_ERR_ARG, "%s: %s: certificate %s is not private_key %s's", file, key,
                           t->certificate, t->private_key);
            return nullptr;
        }
    }
    if (node_tls_trust_use(l->getNativeHandle(), t, file, key, err)) return nullptr;
    if (!server && t->verify_peer && t->peer_name[0] && !check_peer_name(l.get(), t->peer_name)) {
        swin_error_set(err, SWIN_ERR_ARG, "%s: %s.peer_name '%s': not a host name or address OpenSSL can check", file,
                       key, t->peer_name);
        return nullptr;
    }
    l->setCertificateVerification(t->verify_peer ? DCV_requireCertificate : DCV_ignoreCertificate);
    return l.release();
}

extern "C" swin_status node_tls_check(const struct node_tls *t, bool server, const char *file, const char *key,
                                      swin_error *err)
{
    DcmTLSTransportLayer *l = node_tls_layer(t, server, file, key, err);
    delete l;
    return l ? SWIN_OK : err->status;
}
