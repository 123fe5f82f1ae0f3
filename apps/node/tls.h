/* DICOM TLS for the node's two sides (DCMTK's dcmtls on OpenSSL): a transport layer made from
 * a node_tls (node_config.h) with the BCP 195 profile, its files checked one by one so that a
 * missing file, an unreadable or encrypted key, a certificate that is not the key's, or a CA
 * or CRL file without one is one line naming the key. A verified peer's certificate must be
 * signed by ca, not be revoked in crl (when given), and, for a destination, name its
 * peer_name (its host unless given). */
#ifndef SWIN_NODE_TLS_H
#define SWIN_NODE_TLS_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stdbool.h>

#include "apps/node/node_config.h"
#include "core/status.h"

/* Makes the layer and frees it: the check at start. key names the configuration's key in the
 * messages ("tls", "destinations[1].tls"); server: the listening side. */
swin_status node_tls_check(const struct node_tls *t, bool server, const char *file, const char *key, swin_error *err);

#ifdef __cplusplus
}

class DcmTLSTransportLayer;
/* The layer (the caller deletes it), or NULL with err set. */
DcmTLSTransportLayer *node_tls_layer(const struct node_tls *t, bool server, const char *file, const char *key,
                                     swin_error *err);
#endif

#endif
