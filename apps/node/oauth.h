/* OAuth 2.0 client credentials (RFC 6749 4.4) for a STOW-RS destination with `oauth`: the node
 * POSTs grant_type=client_credentials, its client_id and client_secret (read from
 * client_secret_file at each request, so an outside job can rotate it) and the scope to the
 * token endpoint (application/x-www-form-urlencoded, client_secret_post, as Azure's, Keycloak's
 * and most authorization servers take it), and sends the access token it answers as a bearer
 * token until shortly before expires_in runs out (then fetches another). Tokens live in this
 * process only, one per destination; neither secret nor token is ever logged. */
#ifndef SWIN_NODE_OAUTH_H
#define SWIN_NODE_OAUTH_H

#include <stddef.h>

#include "apps/node/node_config.h"
#include "core/status.h"

/* The destination's current access token into token (cap bytes), fetched when none is held or
 * it is about to expire; one line naming the endpoint and what it answered on failure. */
swin_status node_oauth_token(const struct node_dest *d, int timeout_s, char *token, size_t cap, swin_error *err);

/* The server refused the token (HTTP 401): the next call fetches a new one. */
void node_oauth_forget(const struct node_dest *d);

#endif
