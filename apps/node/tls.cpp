// The node's TLS layers (tls.h).
#include <ctime>
#include <memory>

#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmtls/tlslayer.h>

#include "apps/node/tls.h"
#include "apps/node/tls_follow.h"
#include "apps/node/tls_layer.h"

DcmTLSTransportLayer *node_tls_layer(const struct node_tls *t, bool server, const char *file, const char *key,
                                     swin_error *err)
{
    struct node_tls_seen seen; // before reading: a change meanwhile is read again at the next caller
    node_tls_seen_now(t, &seen);
    time_t next_update;
    std::unique_ptr<DcmTLSTransportLayer> l(node_tls_layer_read(t, server, file, key, &next_update, err));
    if (l && server && node_tls_follow(l->getNativeHandle(), t, &seen, next_update, err)) return nullptr;
    return l.release();
}

extern "C" swin_status node_tls_check(const struct node_tls *t, bool server, const char *file, const char *key,
                                      swin_error *err)
{
    DcmTLSTransportLayer *l = node_tls_layer(t, server, file, key, err);
    delete l;
    return l ? SWIN_OK : err->status;
}
