/* DICOMweb STOW-RS delivery (PS3.18 10.5): the outputs POSTed to a destination's URL/studies
 * in one multipart/related request of application/dicom parts, through libcurl (https: peer
 * and host verified against the destination's ca or the system's trusted certificates, its
 * client certificate when it has one), with its credentials (HTTP Basic, or a bearer token)
 * read from their files (secret.h) for each request, or a bearer token from its OAuth 2
 * authorization server (oauth.h). Built without libcurl, stow_stub.c
 * refuses such destinations at start. */
#ifndef SWIN_NODE_STOW_H
#define SWIN_NODE_STOW_H

#include "apps/node/node_config.h"
#include "core/status.h"

/* libcurl's global state, before any thread starts; an error when the node has no libcurl. */
swin_status node_stow_init(swin_error *err);
/* SWIN_OK when the server answered 200 and listed no failed instance; else one line (the
 * transfer's error, or the HTTP status and what the answer said). */
swin_status node_stow(const struct node_dest *d, int timeout_s, const char *const *files, int nfiles, swin_error *err);

#endif
