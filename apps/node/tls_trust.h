/* The trust store of the node's TLS layers (tls.h): tls.ca's certificates and tls.crl's
 * revocation lists. A ca file is read for its certificates and the lists it may hold, a crl file
 * for its lists only (a certificate there is not made a trust anchor). The listening side's
 * layer, made once at start, follows both files: when either changes (inode, size or
 * modification time) both are read into a new store that replaces the old one whole, so that
 * the job refreshing the lists beside the node (or a CA's rollover) needs no restart. The check
 * runs at each caller's ClientHello, in the listening thread, before the caller's certificate
 * is verified; a file that cannot be read then keeps the store read before. */
#ifndef SWIN_NODE_TLS_TRUST_H
#define SWIN_NODE_TLS_TRUST_H

#include "apps/node/node_config.h"
#include "core/status.h"

typedef struct ssl_ctx_st SSL_CTX;

/* Reads t->ca and t->crl (those given) into ctx's store and, with a crl, turns on the check of
 * the peer's certificate against the lists. A file that cannot be read, a ca without a
 * certificate, a crl without a list or with one cut short: an error naming the key
 * ("FILE: KEY.crl PATH: ..."). server: the layer then follows the files, logging
 * trust_reloaded, trust_reload_failed, and crl_expired once a list's nextUpdate has passed
 * (OpenSSL then refuses every caller until a newer list replaces it). */
swin_status node_tls_trust_use(SSL_CTX *ctx, const struct node_tls *t, bool server, const char *file, const char *key,
                               swin_error *err);

#endif
