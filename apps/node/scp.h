/* The node's Storage SCP: DCMTK's DcmSCPPool (one thread per association, at most
 * limits.associations at once) with an SCP class of the node's own. An association is
 * accepted only when it calls the node's AE title from a calling AE title (and host, when the
 * allow-list names one) on the allow-list; every refusal is logged with its reason. It answers
 * C-ECHO, and C-STORE of the CT image classes in the transfer syntaxes swinrun's reader
 * decodes (receive.h writes each instance to the spool before the response). With the
 * configuration's tls the port speaks only DICOM TLS (tls.h). */
#ifndef SWIN_NODE_SCP_H
#define SWIN_NODE_SCP_H

#ifdef __cplusplus
extern "C" {
#endif

#include "apps/node/spool.h"
#include "core/status.h"

/* DCMTK's logger off (the node logs its own events) and its data dictionary loaded, or a
 * one-line error naming DCMDICTPATH. */
swin_status node_dcmtk_init(swin_error *err);
/* Listens until node_scp_stop (then waits for the associations in progress); returns at once
 * with an error when the port cannot be opened. */
swin_status node_scp_run(const struct node_config *cfg, struct node_spool *spool, swin_error *err);
/* From any thread: no new association; node_scp_run returns once the current ones end. */
void node_scp_stop(void);
/* Associations in progress. */
int node_scp_associations(void);

#ifdef __cplusplus
}
#endif

#endif
