/* One TLS layer read from a node_tls's files (node_config.h), checked file by file (tls.h says
 * what is checked and refused); made at start, for each delivery, and by the listening side
 * again when its files change (tls_follow.h). */
#ifndef SWIN_NODE_TLS_LAYER_H
#define SWIN_NODE_TLS_LAYER_H

#include <time.h>

#include "apps/node/node_config.h"
#include "core/status.h"

class DcmTLSTransportLayer;
/* The layer (the caller deletes it), or NULL with err set ("FILE: KEY.private_key ..."); server:
 * the listening side's. *next_update: the soonest nextUpdate of the crl's lists (0: none). */
DcmTLSTransportLayer *node_tls_layer_read(const struct node_tls *t, bool server, const char *file, const char *key,
                                          time_t *next_update, swin_error *err);

#endif
