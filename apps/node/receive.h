/* What the node does with one C-STORE data set (C++: it takes DCMTK's dataset): checks it
 * against the request, admits it under the limits (spool.h), writes it as a DICOM file
 * (the file meta from the request: an anonymised data set may carry a blank SOPInstanceUID)
 * under tmp/, fsyncs it and commits it to incoming/, all before the answer is sent. The
 * status is the C-STORE response's; why says what a refusal was for, in one line. */
#ifndef SWIN_NODE_RECEIVE_H
#define SWIN_NODE_RECEIVE_H

#include <stddef.h>
#include <stdint.h>

#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmdata/dctk.h>

#include "apps/node/spool.h"

#define NODE_STORE_SUCCESS 0x0000
#define NODE_STORE_OUT_OF_RESOURCES 0xA700 /* PS3.4 B.2.3: Refused: Out of Resources */
#define NODE_STORE_NOT_SOP_CLASS 0xA900    /* Error: Data Set does not match SOP Class */
#define NODE_STORE_CANNOT_UNDERSTAND 0xC000
#define NODE_STORE_CLASS_NOT_SUPPORTED 0x0122

/* The CT storage classes the node takes: those swinrun's DICOM reader reads. */
extern const char *const node_ct_classes[3];
/* HTJ2K Lossless, Lossless RPCL and HTJ2K (PS3.5 A.4.11): syntaxes DCMTK 3.6.7 does not know. */
extern const char *const node_htj2k_syntaxes[3];
bool node_is_htj2k(const char *syntax_uid);

/* ds: the data set as received (ownership taken; NULL allowed, refused), in transfer syntax
 * xfer; syntax: the file meta's TransferSyntaxUID when it is not xfer's (an HTJ2K data set,
 * parsed as xfer = JPEG 2000's encoding), else NULL; bytes: its size as received. key: the
 * study's KEY when the instance was kept. */
Uint16 node_receive(struct node_spool *s, DcmDataset *ds, E_TransferSyntax xfer, const char *syntax,
                    const char *sop_class, const char *sop_instance, uint64_t bytes, char key[SPOOL_KEY_LEN + 1],
                    char *why, size_t why_size);

#endif
