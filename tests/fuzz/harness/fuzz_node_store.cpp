// libFuzzer harness: the DICOM node's C-STORE data set handler (apps/node/receive.h) on the
// fuzzed bytes as a DICOM file, its data set handed over as DCMTK gives it to the SCP, with the
// request's UIDs from the file meta. A refusal must say why in one line; an instance kept must
// be a file DCMTK reads back with the request's SOP class and instance in its meta.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <unistd.h>

#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmdata/dctk.h>
#include <dcmtk/oflog/oflog.h>

extern "C" {
#include "tests/fuzz/harness/fuzz_input.h"
}
#include "apps/node/durable.h"
#include "apps/node/receive.h"

static node_config cfg;
static node_spool spool;

static void setup(const char *dir)
{
    OFLog::configure(OFLogger::OFF_LOG_LEVEL);
    std::snprintf(cfg.spool, sizeof cfg.spool, "%s/spool", dir);
    cfg.instances_per_study = 1000000, cfg.queued_studies = 1000000, cfg.instance_bytes = 1 << 24;
    swin_error err;
    if (spool_open(&spool, &cfg, &err)) {
        std::fprintf(stderr, "fuzz harness: %s\n", err.msg);
        std::abort();
    }
}

// The instance kept under incoming/: read back, its meta the request's, then removed.
static void check_kept(const char *key, const char *sop_class, const char *sop_instance, const char *syntax)
{
    char path[PATH_MAX], dir[PATH_MAX];
    node_path(dir, sizeof dir, "%s/incoming/%s", spool.root, key);
    node_path(path, sizeof path, "%s/%s.dcm", dir, sop_instance);
    DcmFileFormat ff;
    OFString k, i, t;
    if (ff.loadFile(path).bad() || ff.getMetaInfo()->findAndGetOFString(DCM_MediaStorageSOPClassUID, k).bad() ||
        ff.getMetaInfo()->findAndGetOFString(DCM_MediaStorageSOPInstanceUID, i).bad() || k != sop_class ||
        i != sop_instance ||
        (syntax && (ff.getMetaInfo()->findAndGetOFString(DCM_TransferSyntaxUID, t).bad() || t != syntax))) {
        std::fprintf(stderr, "fuzz harness: kept %s, which does not read back as its request\n", path);
        std::abort();
    }
    swin_error err;
    durable_remove_tree(dir, &err);
    pthread_mutex_lock(&spool.lock);
    spool.nstudies = 0; // the next input starts from an empty spool
    spool.used = 0;
    pthread_mutex_unlock(&spool.lock);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
    const char *path = fuzz_input_write("instance.dcm", bytes, size);
    static bool ready;
    if (!ready) {
        char dir[PATH_MAX];
        std::snprintf(dir, sizeof dir, "%s", path);
        *std::strrchr(dir, '/') = 0;
        setup(dir);
        ready = true;
    }
    DcmFileFormat ff;
    OFCondition c = EC_IllegalCall;
    try {
        c = ff.loadFile(path);
    } catch (const std::exception &) { // DCMTK 3.6.7 throws on some malformed values
        return 0;
    }
    if (c.bad()) return 0; // DCMTK's network layer would not have handed this over
    OFString sop_class, sop_instance;
    ff.getMetaInfo()->findAndGetOFString(DCM_MediaStorageSOPClassUID, sop_class);
    ff.getMetaInfo()->findAndGetOFString(DCM_MediaStorageSOPInstanceUID, sop_instance);
    OFString syntax;
    ff.getMetaInfo()->findAndGetOFString(DCM_TransferSyntaxUID, syntax);
    // an HTJ2K file as the SCP hands it over: parsed as JPEG 2000, its own UID for the meta
    const bool htj2k = node_is_htj2k(syntax.c_str());
    const E_TransferSyntax xfer = htj2k ? EXS_JPEG2000LosslessOnly : ff.getDataset()->getOriginalXfer();
    DcmDataset *ds = ff.getAndRemoveDataset();
    char key[SPOOL_KEY_LEN + 1], why[400];
    Uint16 status = node_receive(&spool, ds, xfer, htj2k ? syntax.c_str() : nullptr, sop_class.c_str(),
                                 sop_instance.c_str(), size, key, why, sizeof why);
    if (status != NODE_STORE_SUCCESS && (!why[0] || std::strchr(why, '\n'))) {
        std::fprintf(stderr, "fuzz harness: status 0x%04X without a one-line reason: '%s'\n", status, why);
        std::abort();
    }
    if (status == NODE_STORE_SUCCESS)
        check_kept(key, sop_class.c_str(), sop_instance.c_str(), htj2k ? syntax.c_str() : nullptr);
    return 0;
}
