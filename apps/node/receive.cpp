// One C-STORE data set into the spool (receive.h).
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

#include "apps/node/durable.h"
#include "apps/node/receive.h"

const char *const node_ct_classes[3] = {"1.2.840.10008.5.1.4.1.1.2", "1.2.840.10008.5.1.4.1.1.2.1",
                                        "1.2.840.10008.5.1.4.1.1.2.2"};
const char *const node_htj2k_syntaxes[3] = {"1.2.840.10008.1.2.4.201", "1.2.840.10008.1.2.4.202",
                                            "1.2.840.10008.1.2.4.203"};

bool node_is_htj2k(const char *syntax_uid)
{
    for (const char *h : node_htj2k_syntaxes)
        if (!std::strcmp(syntax_uid, h)) return true;
    return false;
}

// PS3.5 9.1: 1 to 64 characters, digit components separated by single dots, no leading zero.
static bool valid_uid(const char *u)
{
    size_t n = std::strlen(u);
    if (n == 0 || n > 64) return false;
    for (const char *c = u;;) {
        const char *start = c;
        while (*c >= '0' && *c <= '9') c++;
        if (c == start || (*start == '0' && c - start > 1)) return false;
        if (*c == 0) return true;
        if (*c++ != '.') return false;
    }
}

static void get(DcmDataset *ds, const DcmTagKey &t, char *out, size_t n)
{
    OFString v;
    out[0] = 0;
    if (ds->findAndGetOFString(t, v).good()) std::snprintf(out, n, "%s", v.c_str());
    for (size_t len = std::strlen(out); len && out[len - 1] == ' '; len--) out[len - 1] = 0;
}

__attribute__((format(printf, 4, 5))) static Uint16 refuse(Uint16 status, char *why, size_t size, const char *fmt,
                                                            ...)
{
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(why, size, fmt, ap);
    va_end(ap);
    return status;
}

Uint16 node_receive(struct node_spool *s, DcmDataset *received, E_TransferSyntax xfer, const char *syntax,
                    const char *sop_class, const char *sop_instance, uint64_t bytes, char key[SPOOL_KEY_LEN + 1],
                    char *why, size_t why_size)
{
    key[0] = 0;
    why[0] = 0;
    if (!received) return refuse(NODE_STORE_CANNOT_UNDERSTAND, why, why_size, "no data set");
    DcmFileFormat ff(received, OFFalse); // owns the data set from here
    DcmDataset *ds = ff.getDataset();
    bool ct = false;
    for (const char *c : node_ct_classes) ct = ct || !std::strcmp(sop_class, c);
    if (!ct)
        return refuse(NODE_STORE_CLASS_NOT_SUPPORTED, why, why_size, "SOP class %.64s is not a CT image class",
                      sop_class);
    if (!valid_uid(sop_instance))
        return refuse(NODE_STORE_CANNOT_UNDERSTAND, why, why_size, "Affected SOP Instance UID \"%.64s\" is not a UID",
                      sop_instance);
    char v[80];
    get(ds, DCM_SOPClassUID, v, sizeof v);
    if (v[0] && std::strcmp(v, sop_class))
        return refuse(NODE_STORE_NOT_SOP_CLASS, why, why_size, "the data set's SOPClassUID %.64s is not the request's",
                      v);
    get(ds, DCM_SOPInstanceUID, v, sizeof v);
    if (v[0] && std::strcmp(v, sop_instance))
        return refuse(NODE_STORE_NOT_SOP_CLASS, why, why_size,
                      "the data set's SOPInstanceUID %.64s is not the request's", v);
    char study[80], series[80];
    get(ds, DCM_StudyInstanceUID, study, sizeof study);
    get(ds, DCM_SeriesInstanceUID, series, sizeof series);
    char k[SPOOL_KEY_LEN + 1];
    spool_key(study, series, k);
    const uint64_t encoded = ds->calcElementLength(xfer, EET_ExplicitLength); // about the file's size
    if (spool_admit(s, k, encoded > bytes ? encoded : bytes, why, why_size)) return NODE_STORE_OUT_OF_RESOURCES;

    // the file meta from the request: MediaStorageSOP*UID filled before DCMTK would copy blanks
    DcmMetaInfo *meta = ff.getMetaInfo();
    if (meta->putAndInsertString(DCM_MediaStorageSOPClassUID, sop_class).bad() ||
        meta->putAndInsertString(DCM_MediaStorageSOPInstanceUID, sop_instance).bad())
        return refuse(NODE_STORE_OUT_OF_RESOURCES, why, why_size, "out of memory for the file meta");
    // a syntax DCMTK does not know: the meta as xfer's, then that syntax's UID in it
    if (syntax && (ff.validateMetaInfo(xfer, EWM_fileformat).bad() ||
                   meta->putAndInsertString(DCM_TransferSyntaxUID, syntax).bad()))
        return refuse(NODE_STORE_OUT_OF_RESOURCES, why, why_size, "out of memory for the file meta");
    char tmp[PATH_MAX];
    spool_tmp_name(s, tmp, sizeof tmp);
    OFCondition c = EC_IllegalCall;
    errno = 0;
    try {
        c = ff.saveFile(tmp, xfer, EET_ExplicitLength, EGL_recalcGL, EPD_noChange, 0, 0,
                        syntax ? EWM_dontUpdateMeta : EWM_fileformat);
    } catch (const std::exception &e) { // DCMTK 3.6.7 throws on some malformed values
        unlink(tmp);
        return refuse(NODE_STORE_CANNOT_UNDERSTAND, why, why_size, "the data set cannot be written: %.160s", e.what());
    }
    int e = errno;
    swin_error err;
    if (c.bad()) {
        unlink(tmp);
        if (c == EC_InvalidStream || c == EC_CorruptedData || c == EC_IllegalParameter)
            return refuse(NODE_STORE_CANNOT_UNDERSTAND, why, why_size, "the data set cannot be written: %.160s",
                          c.text());
        std::snprintf(why, why_size, "writing the instance failed: %s (%s)", c.text(), e ? std::strerror(e) : "");
        return NODE_STORE_OUT_OF_RESOURCES; // a full disk, most likely
    }
    struct stat sb;
    const uint64_t size = stat(tmp, &sb) == 0 ? (uint64_t)sb.st_size : encoded;
    if (durable_sync_file(tmp, &err) || spool_commit(s, k, tmp, sop_instance, size, &err)) {
        unlink(tmp);
        return refuse(NODE_STORE_OUT_OF_RESOURCES, why, why_size, "%.200s", err.msg);
    }
    std::memcpy(key, k, sizeof k);
    return NODE_STORE_SUCCESS;
}
