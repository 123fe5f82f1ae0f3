// Sending the outputs to a destination (scu.h).
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmdata/dctk.h>
#include <dcmtk/dcmnet/scu.h>
#include <dcmtk/dcmtls/tlslayer.h>

#include "apps/node/scu.h"
#include "apps/node/tls.h"

namespace {

struct out_file {
    std::string path, sop_class, syntax;
};

swin_status describe(const char *path, out_file &f, swin_error *err)
{
    DcmFileFormat ff;
    OFCondition c =
        ff.loadFileUntilTag(path, EXS_Unknown, EGL_noChange, DCM_MaxReadLength, ERM_fileOnly, DCM_PixelData);
    OFString k, x;
    if (c.bad() || ff.getMetaInfo()->findAndGetOFString(DCM_MediaStorageSOPClassUID, k).bad() ||
        ff.getMetaInfo()->findAndGetOFString(DCM_TransferSyntaxUID, x).bad())
        return swin_error_set(err, SWIN_ERR_IO, "%s: cannot read its file meta: %s", path, c.text());
    f = {path, k.c_str(), x.c_str()};
    return SWIN_OK;
}

// DCMTK 3.6.7 keeps DcmSCU's transport layer setter for its subclasses.
class NodeSCU : public DcmSCU {
  public:
    using DcmSCU::useSecureConnection;
};

bool stored(Uint16 status)
{
    // success, or PS3.4 B.2.3's warnings: coerced, elements discarded, data set does not match
    return status == 0x0000 || status == 0xB000 || status == 0xB007 || status == 0xB006;
}

} // namespace

extern "C" swin_status node_send(const struct node_dest *d, const char *ae, int timeout_s, const char *const *files,
                                 int nfiles, swin_error *err)
{
    std::vector<out_file> out((size_t)nfiles);
    for (int i = 0; i < nfiles; i++) {
        swin_status st = describe(files[i], out[(size_t)i], err);
        if (st) return st;
    }
    // the layer outlives the SCU, whose network refers to it
    std::unique_ptr<DcmTLSTransportLayer> tls(d->tls.on ? node_tls_layer(&d->tls, false, d->name, "tls", err)
                                                        : nullptr);
    if (d->tls.on && !tls) return err->status;
    NodeSCU scu;
    scu.setAETitle(ae);
    scu.setPeerAETitle(d->ae);
    scu.setPeerHostName(d->host);
    scu.setPeerPort((Uint16)d->port);
    scu.setConnectionTimeout(timeout_s);
    scu.setACSETimeout((Uint32)timeout_s);
    scu.setDIMSETimeout((Uint32)timeout_s);
    scu.setDIMSEBlockingMode(DIMSE_NONBLOCKING);
    for (const out_file &f : out) {
        OFList<OFString> xs;
        xs.push_back(f.syntax.c_str());
        if (f.syntax != UID_LittleEndianImplicitTransferSyntax) xs.push_back(UID_LittleEndianImplicitTransferSyntax);
        scu.addPresentationContext(f.sop_class.c_str(), xs);
    }
    OFCondition c = scu.initNetwork();
    if (c.good() && tls) c = scu.useSecureConnection(tls.get()); // on the network initNetwork made
    if (c.good()) c = scu.negotiateAssociation();
    if (c.bad() && tls && std::strstr(c.text(), "certificate verify failed")) // OpenSSL does not say which check
        return swin_error_set(err, SWIN_ERR_IO,
                              "%s (%s at %s:%d): no association: %s (it must be signed by tls.ca, name %s "
                              "(tls.peer_name)%s)",
                              d->name, d->ae, d->host, d->port, c.text(), d->tls.peer_name,
                              d->tls.crl[0] ? " and not be revoked in tls.crl" : "");
    if (c.bad())
        return swin_error_set(err, SWIN_ERR_IO, "%s (%s at %s:%d): no association: %s", d->name, d->ae, d->host,
                              d->port, c.text());
    swin_status st = SWIN_OK;
    for (const out_file &f : out) {
        T_ASC_PresentationContextID id = scu.findPresentationContextID(f.sop_class.c_str(), f.syntax.c_str());
        if (!id) id = scu.findPresentationContextID(f.sop_class.c_str(), "");
        Uint16 status = 0;
        if (!id) {
            st = swin_error_set(err, SWIN_ERR_IO, "%s: refuses SOP class %s", d->name, f.sop_class.c_str());
            break;
        }
        c = scu.sendSTORERequest(id, f.path.c_str(), nullptr, status);
        if (c.bad() || !stored(status)) {
            const char *base = f.path.c_str() + f.path.rfind('/') + 1;
            st = c.bad() ? swin_error_set(err, SWIN_ERR_IO, "%s: sending %s failed: %s", d->name, base, c.text())
                         : swin_error_set(err, SWIN_ERR_IO, "%s: answered status 0x%04X to %s", d->name, status, base);
            break;
        }
    }
    if (st) scu.abortAssociation();
    else scu.releaseAssociation();
    return st;
}
