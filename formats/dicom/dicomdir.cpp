// The files a DICOMDIR references (dcm.h): its directory records' ReferencedFileID, read
// with DCMTK, each resolved inside the DICOMDIR's folder.
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <sys/stat.h>

#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmdata/dctk.h>

#include "formats/dicom/dcm.h"

#define DICOMDIR_MAX_BYTES (64L << 20) // a DICOMDIR of a million records is about 300 MiB; 64 MiB is generous

static bool is_file(const std::string &p)
{
    struct stat sb;
    return stat(p.c_str(), &sb) == 0 && S_ISREG(sb.st_mode);
}

// A file ID component as PS3.10 allows it: 1 to 8 of A-Z, 0-9, '_' (lower case accepted:
// media copied to a disk often are).
static bool component_ok(const OFString &c)
{
    if (c.empty() || c.length() > 8) return false;
    for (size_t i = 0; i < c.length(); i++)
        if (!std::isalnum((unsigned char)c[i]) && c[i] != '_') return false;
    return true;
}

swin_status swin_dcm_read_dicomdir(const char *path, swin_status (*add)(void *user, const char *file, swin_error *err),
                                   void *user, swin_error *err)
{
    struct stat sb;
    if (stat(path, &sb) != 0) return swin_error_set(err, SWIN_ERR_IO, "%s: %s", path, std::strerror(errno));
    if (sb.st_size > DICOMDIR_MAX_BYTES)
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: a DICOMDIR of %lld bytes (more than %ld MiB): not read", path,
                              (long long)sb.st_size, DICOMDIR_MAX_BYTES >> 20);
    DcmFileFormat ff;
    OFCondition c = EC_CorruptedData;
    try {
        c = ff.loadFile(path);
    } catch (const std::exception &e) { // DCMTK 3.6.7 throws on some malformed directory records
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: unreadable DICOMDIR (%s)", path, e.what());
    }
    if (c.bad()) return swin_error_set(err, SWIN_ERR_FORMAT, "%s: unreadable DICOMDIR (%s)", path, c.text());
    DcmSequenceOfItems *records = NULL;
    if (ff.getDataset()->findAndGetSequence(DCM_DirectoryRecordSequence, records).bad() || !records)
        return swin_error_set(err, SWIN_ERR_FORMAT,
                              "%s: no DirectoryRecordSequence: not a DICOMDIR; pass the folder of the files instead",
                              path);
    std::string dir(path);
    size_t slash = dir.rfind('/');
    dir = slash == std::string::npos ? std::string(".") : dir.substr(0, slash ? slash : 1);
    for (unsigned long r = 0; r < records->card(); r++) {
        DcmItem *rec = records->getItem(r);
        DcmElement *id = NULL;
        if (!rec || rec->findAndGetElement(DCM_ReferencedFileID, id).bad() || !id) continue;
        unsigned long vm = id->getVM();
        if (vm < 1 || vm > 8)
            return swin_error_set(err, SWIN_ERR_FORMAT, "%s: directory record %lu: a ReferencedFileID of %lu components",
                                  path, r + 1, vm);
        std::string rel, lower;
        for (unsigned long i = 0; i < vm; i++) {
            OFString comp;
            if (id->getOFString(comp, i).bad() || !component_ok(comp))
                return swin_error_set(err, SWIN_ERR_FORMAT,
                                      "%s: directory record %lu: ReferencedFileID component %lu is not 1-8 letters, "
                                      "digits or '_'",
                                      path, r + 1, i + 1);
            rel += "/" + std::string(comp.c_str());
        }
        for (char ch : rel) lower += (char)std::tolower((unsigned char)ch);
        std::string file = dir + rel;
        if (!is_file(file) && is_file(dir + lower)) file = dir + lower;
        if (!is_file(file))
            return swin_error_set(err, SWIN_ERR_IO,
                                  "%s references %s, which is not there: copy the whole medium (or pass the folder of "
                                  "the files instead)",
                                  path, file.c_str());
        swin_status st = add(user, file.c_str(), err);
        if (st) return st;
    }
    return SWIN_OK;
}
