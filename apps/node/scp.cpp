// The node's Storage SCP on DcmSCPPool (scp.h).
#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>

#include <netdb.h>
#include <sys/socket.h>

#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmnet/dcmtrans.h>
#include <dcmtk/dcmnet/scppool.h>
#include <dcmtk/dcmnet/scpthrd.h>
#include <dcmtk/dcmtls/tlslayer.h>
#include <dcmtk/oflog/oflog.h>

#include "apps/node/node_log.h"
#include "apps/node/receive.h"
#include "apps/node/scp.h"
#include "apps/node/tls.h"

namespace {

// DcmSCPPool constructs its SCPs itself: what they share is here, set before it listens.
const node_config *g_cfg;
node_spool *g_spool;
std::atomic<int> g_associations{0};
std::mutex g_pool_lock;
DcmBaseSCPPool *g_pool;
bool g_stop; // node_scp_stop came before the pool was listening

// Whether host (a name or an address from the allow-list) is the peer's address.
bool host_is(const char *host, const OFString &peer)
{
    if (peer == host) return true;
    addrinfo hints{}, *res = nullptr;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, nullptr, &hints, &res) != 0) return false;
    bool same = false;
    for (addrinfo *a = res; a && !same; a = a->ai_next) {
        char num[NI_MAXHOST];
        if (getnameinfo(a->ai_addr, a->ai_addrlen, num, sizeof num, nullptr, 0, NI_NUMERICHOST) == 0)
            same = peer == num;
    }
    freeaddrinfo(res);
    return same;
}

void log_refused(const OFString &calling, const OFString &called, const OFString &peer, const char *reason)
{
    char a[64], b[64], h[300], r[300];
    node_log_event("association_refused", nullptr,
                   "\"calling_ae\": %s, \"called_ae\": %s, \"host\": %s, \"reason\": %s",
                   node_log_str(calling.c_str(), a, sizeof a), node_log_str(called.c_str(), b, sizeof b),
                   node_log_str(peer.c_str(), h, sizeof h), node_log_str(reason, r, sizeof r));
}

class NodeSCP : public DcmThreadSCP {
  public:
    // DcmSCPPool's worker runs each association through here: the association is kept for
    // relabel_htj2k.
    OFCondition run(T_ASC_Association *assoc) override
    {
        assoc_ = assoc;
        std::memset(relabelled_, 0, sizeof relabelled_);
        OFCondition c = DcmThreadSCP::run(assoc);
        assoc_ = nullptr;
        return c;
    }

  protected:
    OFBool checkCalledAETitleAccepted(const OFString &called) override
    {
        if (called == g_cfg->ae) return OFTrue;
        char why[80];
        std::snprintf(why, sizeof why, "called AE title is not this node's (%s)", g_cfg->ae);
        log_refused(getPeerAETitle(), called, getPeerIP(), why);
        return OFFalse;
    }

    OFBool checkCallingAETitleAccepted(const OFString &calling) override
    {
        const OFString peer = getPeerIP();
        const char *from_elsewhere = nullptr;
        for (int i = 0; i < g_cfg->ncallers; i++) {
            const node_caller &c = g_cfg->callers[i];
            if (calling != c.ae) continue;
            if (!c.host[0] || host_is(c.host, peer)) return OFTrue;
            from_elsewhere = c.host;
        }
        char why[320];
        if (from_elsewhere) std::snprintf(why, sizeof why, "calling AE title allowed from %s only", from_elsewhere);
        else std::snprintf(why, sizeof why, "calling AE title not on the allow-list (callers)");
        log_refused(calling, g_cfg->ae, peer, why);
        return OFFalse;
    }

    void notifyAssociationAcknowledge() override
    {
        acknowledged_ = true;
        g_associations++;
        relabel_htj2k();
    }
    void notifyAssociationTermination() override
    {
        if (acknowledged_) g_associations--;
        acknowledged_ = false;
    }

    // DIMSE calls this as the data set arrives: an instance over the limit ends the association
    // before it is all in memory (nothing of it was acknowledged).
    void notifyRECEIVEProgress(const unsigned long bytes) override
    {
        received_ = bytes;
        if (bytes > g_cfg->instance_bytes && !too_big_) {
            too_big_ = true;
            abortAssociation();
        }
    }

    OFCondition handleIncomingCommand(T_DIMSE_Message *msg, const DcmPresentationContextInfo &pc) override
    {
        if (msg->CommandField != DIMSE_C_STORE_RQ) return DcmThreadSCP::handleIncomingCommand(msg, pc);
        T_DIMSE_C_StoreRQ &req = msg->msg.CStoreRQ;
        received_ = 0;
        too_big_ = false;
        DcmDataset *ds = nullptr;
        OFCondition c = receiveSTORERequest(req, pc.presentationContextID, ds);
        if (c.bad() || too_big_) {
            delete ds;
            if (too_big_) {
                char why[120];
                std::snprintf(why, sizeof why, "instance over %zu bytes (limits.instance_bytes): association aborted",
                              g_cfg->instance_bytes);
                log_store(NODE_STORE_OUT_OF_RESOURCES, why);
            }
            return c.bad() ? c : DIMSE_RECEIVEFAILED;
        }
        char key[SPOOL_KEY_LEN + 1], why[400];
        const char *syntax = relabelled_[pc.presentationContextID][0] ? relabelled_[pc.presentationContextID] : nullptr;
        const Uint16 status = node_receive(g_spool, ds, DcmXfer(pc.acceptedTransferSyntax.c_str()).getXfer(), syntax,
                                           req.AffectedSOPClassUID, req.AffectedSOPInstanceUID, received_, key, why,
                                           sizeof why);
        if (status != NODE_STORE_SUCCESS) log_store(status, why);
        return sendSTOREResponse(pc.presentationContextID, req, status);
    }

  private:
    // HTJ2K (PS3.5 A.4.11) encodes a data set as JPEG 2000 does (explicit VR little endian, the
    // pixel data encapsulated), but DCMTK 3.6.7 does not know its UIDs, and its DIMSE layer
    // refuses a context in a syntax it does not know at every step (the command, the data set,
    // the answer). Once the A-ASSOCIATE-AC is sent, the node's own record of each accepted HTJ2K
    // context is relabelled JPEG 2000 Lossless, its UID kept here for the file meta.
    void relabel_htj2k()
    {
        LST_HEAD **l = &assoc_->params->DULparams.requestedPresentationContext;
        auto *pc = static_cast<DUL_PRESENTATIONCONTEXT *>(LST_Head(l));
        (void)LST_Position(l, pc);
        for (; pc; pc = static_cast<DUL_PRESENTATIONCONTEXT *>(LST_Next(l)))
            if (pc->result == ASC_P_ACCEPTANCE && node_is_htj2k(pc->acceptedTransferSyntax)) {
                std::snprintf(relabelled_[pc->presentationContextID], sizeof relabelled_[0], "%s",
                              pc->acceptedTransferSyntax);
                std::snprintf(pc->acceptedTransferSyntax, sizeof pc->acceptedTransferSyntax, "%s",
                              UID_JPEG2000LosslessOnlyTransferSyntax);
            }
    }

    void log_store(Uint16 status, const char *why)
    {
        char a[64], w[600], s[500];
        node_log_event("store_refused", nullptr, "\"calling_ae\": %s, \"status\": \"0x%04X\", \"reason\": %s",
                       node_log_str(getPeerAETitle().c_str(), a, sizeof a), status,
                       node_log_str(node_log_scrub(why, s, sizeof s), w, sizeof w));
    }

    unsigned long received_ = 0;
    bool too_big_ = false, acknowledged_ = false;
    T_ASC_Association *assoc_ = nullptr;
    char relabelled_[256][DUL_LEN_UID + 1]; // by presentation context ID: the HTJ2K UID, or ""
};

// The pool refuses an association itself when all its workers are busy (and drops one whose
// request could not be read): this is where both end.
class NodePool : public DcmBaseSCPPool {
  protected:
    void dropAndDestroyAssociation(T_ASC_Association *assoc) override
    {
        if (assoc && assoc->params) {
            const DUL_ASSOCIATESERVICEPARAMETERS &p = assoc->params->DULparams;
            char why[200];
            if (!p.callingAPTitle[0]) // no request read: the TLS handshake failed, or not DICOM
                std::snprintf(why, sizeof why, "%s",
                              !g_cfg->tls.on ? "no association request read"
                              : g_cfg->tls.crl[0]
                                  ? "TLS handshake refused (no certificate, not signed by tls.ca, revoked in "
                                    "tls.crl, or tls.crl out of date), or not DICOM"
                                  : "TLS handshake refused (no certificate, or not signed by tls.ca), or not DICOM");
            else
                std::snprintf(why, sizeof why, "all %d associations busy (limits.associations)",
                              g_cfg->max_associations);
            log_refused(p.callingAPTitle, p.calledAPTitle, p.callingPresentationAddress, why);
        }
        DcmBaseSCPPool::dropAndDestroyAssociation(assoc);
    }
};

// The transfer syntaxes of the reader DCMTK knows; the HTJ2K ones (receive.h) join them, relabelled
// after negotiation (NodeSCP).
const char *const syntaxes[] = {UID_LittleEndianExplicitTransferSyntax,
                                UID_LittleEndianImplicitTransferSyntax,
                                UID_BigEndianExplicitTransferSyntax,
                                UID_DeflatedExplicitVRLittleEndianTransferSyntax,
                                UID_RLELosslessTransferSyntax,
                                UID_JPEGProcess1TransferSyntax,
                                UID_JPEGProcess2_4TransferSyntax,
                                UID_JPEGProcess14TransferSyntax,
                                UID_JPEGProcess14SV1TransferSyntax,
                                UID_JPEGLSLosslessTransferSyntax,
                                UID_JPEGLSLossyTransferSyntax,
                                UID_JPEG2000LosslessOnlyTransferSyntax,
                                UID_JPEG2000TransferSyntax};

} // namespace

extern "C" swin_status node_dcmtk_init(swin_error *err)
{
    OFLog::configure(OFLogger::OFF_LOG_LEVEL);
    if (!dcmDataDict.isDictionaryLoaded())
        return swin_error_set(err, SWIN_ERR_IO,
                              "DICOM data dictionary not found (DCMTK looks at $DCMDICTPATH, default %s): install "
                              "DCMTK's dictionary (Debian: libdcmtk17) or set DCMDICTPATH to its dicom.dic",
                              DCM_DICT_DEFAULT_PATH);
    return SWIN_OK;
}

extern "C" swin_status node_scp_run(const struct node_config *cfg, struct node_spool *spool, swin_error *err)
{
    g_cfg = cfg;
    g_spool = spool;
    std::unique_ptr<DcmTLSTransportLayer> tls(
        cfg->tls.on ? node_tls_layer(&cfg->tls, true, "the configuration", "tls", err) : nullptr);
    if (cfg->tls.on && !tls) return err->status;
    DcmSCPPool<NodeSCP, NodePool> pool;
    DcmSCPConfig &c = pool.getConfig();
    if (tls) c.setTransportLayer(tls.get());
    c.setPort((Uint16)cfg->port);
    c.setAETitle(cfg->ae);
    c.setHostLookupEnabled(OFFalse); // the peer as its address, for the allow-list
    c.setConnectionBlockingMode(DUL_NOBLOCK);
    c.setConnectionTimeout(1); // the listening loop looks at node_scp_stop every second
    c.setDIMSEBlockingMode(DIMSE_NONBLOCKING);
    c.setDIMSETimeout((Uint32)cfg->timeout_s);
    c.setACSETimeout((Uint32)cfg->timeout_s);
    // the TLS handshake runs in the listening thread: a peer that connects and stays silent
    // holds it for the socket timeout (DCMTK's default: 60 s)
    dcmSocketReceiveTimeout.set(cfg->timeout_s);
    dcmSocketSendTimeout.set(cfg->timeout_s);
    OFList<OFString> all, plain;
    for (const char *s : syntaxes) all.push_back(s);
    for (const char *s : node_htj2k_syntaxes) all.push_back(s);
    plain.push_back(UID_LittleEndianExplicitTransferSyntax);
    plain.push_back(UID_LittleEndianImplicitTransferSyntax);
    c.addPresentationContext(UID_VerificationSOPClass, plain);
    for (const char *k : node_ct_classes) c.addPresentationContext(k, all);
    pool.setMaxThreads((Uint16)cfg->max_associations);
    {
        std::lock_guard<std::mutex> g(g_pool_lock);
        g_pool = &pool;
        if (g_stop) pool.stopAfterCurrentAssociations();
    }
    OFCondition r = pool.listen();
    {
        std::lock_guard<std::mutex> g(g_pool_lock);
        g_pool = nullptr;
    }
    if (r.bad()) return swin_error_set(err, SWIN_ERR_IO, "port %d: cannot listen: %s", cfg->port, r.text());
    return SWIN_OK;
}

extern "C" void node_scp_stop(void)
{
    std::lock_guard<std::mutex> g(g_pool_lock);
    g_stop = true;
    if (g_pool) g_pool->stopAfterCurrentAssociations();
}

extern "C" int node_scp_associations(void)
{
    return g_associations.load();
}
