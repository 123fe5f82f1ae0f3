/* The trust store of the node's TLS layers (tls.h): tls.ca's certificates and tls.crl's
 * revocation lists. A ca file is read for its certificates and the lists it may hold, a crl file
 * for its lists only (a certificate there is not made a trust anchor). */
#ifndef SWIN_NODE_TLS_TRUST_H
#define SWIN_NODE_TLS_TRUST_H

#include <stddef.h>

#include "apps/node/node_config.h"
#include "core/status.h"

typedef struct ssl_ctx_st SSL_CTX;

/* Reads t->ca and t->crl (those given) into a new store that replaces ctx's and, with a crl,
 * turns on the check of the peer's certificate against the lists. A file that cannot be read,
 * a ca without a certificate, a crl without a list or with one cut short: an error naming the
 * key ("FILE: KEY.crl PATH: ..."). Read once, when the layer is made: at start for the
 * listening side, at each delivery for a destination. */
swin_status node_tls_trust_use(SSL_CTX *ctx, const struct node_tls *t, const char *file, const char *key,
                               swin_error *err);

#ifdef __cplusplus
extern "C" {
#endif
/* For swinrun serve --check: t->crl's lists in one line into buf ("2 lists, the soonest next
 * update 2026-12-03T13:06:15Z", and, once that has passed, that peers are refused until a newer
 * list replaces them); "" without a crl or when it cannot be read (node_tls_check says why). */
void node_tls_crl_describe(const struct node_tls *t, char *buf, size_t size);
#ifdef __cplusplus
}
#endif

#endif
