/* C-STORE SCU: the node's outputs to one destination (DCMTK's DcmSCU), all files in one
 * association, each offered in its own transfer syntax (and implicit VR little endian); over
 * DICOM TLS when the destination has tls (tls.h). */
#ifndef SWIN_NODE_SCU_H
#define SWIN_NODE_SCU_H

#ifdef __cplusplus
extern "C" {
#endif

#include "apps/node/node_config.h"
#include "core/status.h"

/* SWIN_OK when the destination answered success (or a warning) for every file; else one line
 * saying which step failed (connection, association, a status). ae: the node's AE title. */
swin_status node_send(const struct node_dest *d, const char *ae, int timeout_s, const char *const *files, int nfiles,
                      swin_error *err);

#ifdef __cplusplus
}
#endif

#endif
