/* The listening side's TLS files followed (tls.h): the layer, made once at start, reads its
 * certificate, private_key, ca and crl again when any of them changes (inode, size or
 * modification time), so that a renewed certificate, a CA's rollover or the job refreshing the
 * revocation lists beside the node needs no restart. The check runs at each caller's
 * ClientHello, in the listening thread, before the node presents its certificate and verifies
 * the caller's: the whole TLS configuration is read as at start (every check, every message),
 * and only when all of it reads does the new certificate, key and trust store replace the old
 * ones (for this caller too); else the old ones stay. Events: tls_reloaded, tls_reload_failed,
 * and crl_expired once the lists in force pass their nextUpdate (OpenSSL then refuses every
 * caller until a newer list replaces them). */
#ifndef SWIN_NODE_TLS_FOLLOW_H
#define SWIN_NODE_TLS_FOLLOW_H

#include <sys/stat.h>
#include <time.h>

#include "apps/node/node_config.h"
#include "core/status.h"

typedef struct ssl_ctx_st SSL_CTX;

/* The four files as they are now (zeroed where one is absent or unreadable). */
struct node_tls_seen {
    struct stat certificate, private_key, ca, crl;
};
void node_tls_seen_now(const struct node_tls *t, struct node_tls_seen *seen);

/* Makes ctx, read from t after seen was taken, follow t's files; next_update: the soonest
 * nextUpdate of the lists read (0: none). */
swin_status node_tls_follow(SSL_CTX *ctx, const struct node_tls *t, const struct node_tls_seen *seen,
                            time_t next_update, swin_error *err);

#endif
