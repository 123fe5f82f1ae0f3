// Reading CT files with DCMTK: the attributes the series reader checks and the pixels in HU.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmdata/dctk.h>
#include <dcmtk/dcmdata/dcpxitem.h>
#include <dcmtk/dcmdata/dcrledrg.h>
#include <dcmtk/dcmjpeg/djdecode.h>
#include <dcmtk/dcmjpls/djdecode.h>
#include <dcmtk/oflog/oflog.h>

#include "formats/dicom/dcm.h"
#include "formats/dicom/j2k_decode.h"

static std::once_flag init_once;

swin_status swin_dcm_init(swin_error *err)
{
    std::call_once(init_once, [] {
        // The library never prints: every DCMTK logger below the root is switched off.
        OFLog::configure(OFLogger::OFF_LOG_LEVEL);
        DcmRLEDecoderRegistration::registerCodecs();
        DJDecoderRegistration::registerCodecs();
        DJLSDecoderRegistration::registerCodecs();
    });
    if (!dcmDataDict.isDictionaryLoaded())
        return swin_error_set(err, SWIN_ERR_IO,
                              "DICOM data dictionary not found (DCMTK looks at $DCMDICTPATH, default %s): install "
                              "DCMTK's dictionary (Debian: libdcmtk17) or set DCMDICTPATH to its dicom.dic",
                              DCM_DICT_DEFAULT_PATH);
    return SWIN_OK;
}

static void get_str(DcmItem *d, const DcmTagKey &t, char *out, size_t n)
{
    OFString v;
    out[0] = 0;
    if (d->findAndGetOFStringArray(t, v).good()) {
        std::snprintf(out, n, "%s", v.c_str());
        // trailing spaces of padded values; control characters would break one-line messages
        for (size_t len = std::strlen(out); len && out[len - 1] == ' '; len--) out[len - 1] = 0;
        for (char *p = out; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
    }
}

// n decimal values of a multi-valued DS; false when absent, short or not finite.
static bool get_ds(DcmItem *d, const DcmTagKey &t, double *out, int n)
{
    for (int i = 0; i < n; i++) {
        Float64 v;
        if (d->findAndGetFloat64(t, v, (unsigned long)i).bad() || !std::isfinite(v)) return false;
        out[i] = v;
    }
    return true;
}

static int get_int(DcmItem *d, const DcmTagKey &t, int fallback)
{
    Uint16 u;
    if (d->findAndGetUint16(t, u).good()) return u;
    Sint32 s;
    if (d->findAndGetSint32(t, s).good()) return (int)s;
    OFString v;
    if (d->findAndGetOFString(t, v).good() && !v.empty()) return std::atoi(v.c_str());
    return fallback;
}

swin_status swin_dcm_read_header(const char *path, struct swin_dcm_slice *s, bool *is_dicom, swin_error *err)
{
    std::memset(s, 0, sizeof *s);
    std::snprintf(s->path, sizeof s->path, "%s", path);
    *is_dicom = false;
    DcmFileFormat ff;
    OFCondition c = ff.loadFileUntilTag(path, EXS_Unknown, EGL_noChange, DCM_MaxReadLength, ERM_autoDetect,
                                        DCM_PixelData);
    if (c.bad()) {
        FILE *f = std::fopen(path, "rb");
        if (!f) return swin_error_set(err, SWIN_ERR_IO, "%s: cannot open: %s", path, std::strerror(errno));
        unsigned char pre[132] = {0};
        size_t got = std::fread(pre, 1, sizeof pre, f);
        std::fclose(f);
        if (got == sizeof pre && !std::memcmp(pre + 128, "DICM", 4))
            return swin_error_set(err, SWIN_ERR_FORMAT, "%s: unreadable DICOM file (%s)", path, c.text());
        return SWIN_OK; // not DICOM: the caller skips it
    }
    *is_dicom = true;
    DcmDataset *d = ff.getDataset();
    DcmMetaInfo *m = ff.getMetaInfo();
    get_str(d, DCM_SOPClassUID, s->sop_class, sizeof s->sop_class);
    if (!s->sop_class[0]) get_str(m, DCM_MediaStorageSOPClassUID, s->sop_class, sizeof s->sop_class);
    get_str(d, DCM_SOPInstanceUID, s->sop_instance, sizeof s->sop_instance);
    get_str(d, DCM_SeriesInstanceUID, s->series_uid, sizeof s->series_uid);
    get_str(d, DCM_FrameOfReferenceUID, s->frame_of_ref, sizeof s->frame_of_ref);
    get_str(d, DCM_SeriesDescription, s->series_description, sizeof s->series_description);
    // the meta's UID string: DCMTK reads a syntax it does not know (HTJ2K) as explicit VR
    get_str(m, DCM_TransferSyntaxUID, s->transfer_syntax, sizeof s->transfer_syntax);
    if (!s->transfer_syntax[0])
        std::snprintf(s->transfer_syntax, sizeof s->transfer_syntax, "%s", DcmXfer(d->getOriginalXfer()).getXferID());
    s->series_number = get_int(d, DCM_SeriesNumber, -1);
    s->rows = get_int(d, DCM_Rows, 0);
    s->cols = get_int(d, DCM_Columns, 0);
    s->bits_allocated = get_int(d, DCM_BitsAllocated, 0);
    s->bits_stored = get_int(d, DCM_BitsStored, s->bits_allocated);
    s->pixel_representation = get_int(d, DCM_PixelRepresentation, 0);
    s->samples_per_pixel = get_int(d, DCM_SamplesPerPixel, 1);
    s->has_position = get_ds(d, DCM_ImagePositionPatient, s->position, 3);
    s->has_orientation = get_ds(d, DCM_ImageOrientationPatient, s->orientation, 6);
    s->has_spacing = get_ds(d, DCM_PixelSpacing, s->spacing, 2);
    if (!get_ds(d, DCM_RescaleSlope, &s->slope, 1)) s->slope = 1.0;
    if (!get_ds(d, DCM_RescaleIntercept, &s->intercept, 1)) s->intercept = 0.0;
    if (!get_ds(d, DCM_GantryDetectorTilt, &s->gantry_tilt, 1)) s->gantry_tilt = 0.0;
    return SWIN_OK;
}

// What swin_dcm_read_pixels decodes, for the message that refuses the rest.
#define SWIN_DCM_READS                                                                                          \
    "uncompressed (implicit / explicit VR, deflate), RLE, JPEG baseline, extended and lossless, JPEG-LS, JPEG " \
    "2000 (lossless and lossy) and HTJ2K"

// The transfer syntaxes OpenJPEG decodes: JPEG 2000 lossless only and lossy, HTJ2K lossless,
// lossless RPCL and lossy. DCMTK 3.6.7 has no decoder for the first two and no name for the rest.
static bool is_j2k(const char *uid)
{
    static const char *const uids[] = {"1.2.840.10008.1.2.4.90", "1.2.840.10008.1.2.4.91", "1.2.840.10008.1.2.4.201",
                                       "1.2.840.10008.1.2.4.202", "1.2.840.10008.1.2.4.203"};
    for (const char *u : uids)
        if (!std::strcmp(uid, u)) return true;
    return false;
}

static swin_status refuse_syntax(const struct swin_dcm_slice *s, swin_error *err)
{
    return swin_error_set(err, SWIN_ERR_FORMAT,
                          "%s: cannot decode transfer syntax %s (%s); swinrun reads " SWIN_DCM_READS
                          ": convert the series (e.g. gdcmconv --raw)",
                          s->path, DcmXfer(s->transfer_syntax).getXferName(), s->transfer_syntax);
}

// The codestream of a single-frame file: its encapsulated fragments after the basic offset
// table, concatenated.
static swin_status j2k_codestream(DcmDataset *d, const struct swin_dcm_slice *s, std::vector<Uint8> &cs,
                                  swin_error *err)
{
    DcmElement *e = NULL;
    if (d->findAndGetElement(DCM_PixelData, e).bad() || !e)
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: no pixel data", s->path);
    DcmPixelData *pd = OFstatic_cast(DcmPixelData *, e);
    E_TransferSyntax xs = EXS_Unknown;
    const DcmRepresentationParameter *rp = NULL;
    pd->getOriginalRepresentationKey(xs, rp);
    DcmPixelSequence *seq = NULL;
    if (pd->getEncapsulatedRepresentation(xs, rp, seq).bad() || !seq || seq->card() < 2)
        return swin_error_set(err, SWIN_ERR_FORMAT,
                              "%s: transfer syntax %s but the pixel data holds no encapsulated fragment: a corrupt "
                              "file",
                              s->path, s->transfer_syntax);
    for (unsigned long i = 1; i < seq->card(); i++) {
        DcmPixelItem *it = NULL;
        Uint8 *p = NULL;
        if (seq->getItem(it, i).bad() || !it) continue;
        const Uint32 len = it->getLength();
        if (len && (it->getUint8Array(p).bad() || !p))
            return swin_error_set(err, SWIN_ERR_FORMAT, "%s: unreadable pixel data fragment %lu", s->path, i);
        if (len) cs.insert(cs.end(), p, p + len);
    }
    return SWIN_OK;
}

// A JPEG 2000 / HTJ2K frame in HU.
static swin_status read_j2k(DcmDataset *d, const struct swin_dcm_slice *s, float *out, swin_error *err)
{
    if (s->bits_stored < 1 || s->bits_stored > s->bits_allocated)
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: BitsStored %d with BitsAllocated %d: a corrupt file", s->path,
                              s->bits_stored, s->bits_allocated);
    try {
        std::vector<Uint8> cs;
        swin_status st = j2k_codestream(d, s, cs, err);
        if (st) return st;
        std::vector<int32_t> px((size_t)s->rows * (size_t)s->cols);
        const struct swin_j2k_expect want = {s->rows, s->cols, s->bits_stored, s->pixel_representation != 0};
        if ((st = swin_j2k_decode(cs.data(), cs.size(), &want, px.data(), s->path, err))) return st;
        for (size_t i = 0; i < px.size(); i++) out[i] = (float)((double)px[i] * s->slope + s->intercept);
    } catch (const std::bad_alloc &) {
        return swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of memory decoding a %d x %d JPEG 2000 frame", s->path,
                              s->rows, s->cols);
    }
    return SWIN_OK;
}

swin_status swin_dcm_read_pixels(const struct swin_dcm_slice *s, float *out, swin_error *err)
{
    DcmFileFormat ff;
    OFCondition c = ff.loadFile(s->path);
    if (c.bad()) return swin_error_set(err, SWIN_ERR_FORMAT, "%s: unreadable DICOM file (%s)", s->path, c.text());
    DcmDataset *d = ff.getDataset();
    if (s->bits_allocated != 16 && s->bits_allocated != 8)
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: BitsAllocated %d; swinrun reads 8- and 16-bit CT pixels",
                              s->path, s->bits_allocated);
    if (is_j2k(s->transfer_syntax)) return read_j2k(d, s, out, err);
    // a syntax DCMTK does not know was parsed as another: refused before its bytes are read as pixels
    if (DcmXfer(s->transfer_syntax).getXfer() == EXS_Unknown) return refuse_syntax(s, err);
    if (DcmXfer(d->getOriginalXfer()).isEncapsulated()) {
        c = d->chooseRepresentation(EXS_LittleEndianExplicit, NULL);
        if (c.bad() || !d->canWriteXfer(EXS_LittleEndianExplicit)) return refuse_syntax(s, err);
    }
    const size_t n = (size_t)s->rows * (size_t)s->cols;
    const double a = s->slope, b = s->intercept;
    if (s->bits_allocated == 16) {
        const Uint16 *px = NULL;
        unsigned long count = 0;
        if (d->findAndGetUint16Array(DCM_PixelData, px, &count).bad() || !px || count < n)
            return swin_error_set(err, SWIN_ERR_FORMAT, "%s: pixel data missing or shorter than %d x %d", s->path,
                                  s->rows, s->cols);
        // stored values above BitsStored are not masked: CT writers keep them sign-extended
        for (size_t i = 0; i < n; i++)
            out[i] = (float)((s->pixel_representation ? (double)(Sint16)px[i] : (double)px[i]) * a + b);
    } else {
        const Uint8 *px = NULL;
        unsigned long count = 0;
        if (d->findAndGetUint8Array(DCM_PixelData, px, &count).bad() || !px || count < n)
            return swin_error_set(err, SWIN_ERR_FORMAT, "%s: pixel data missing or shorter than %d x %d", s->path,
                                  s->rows, s->cols);
        for (size_t i = 0; i < n; i++)
            out[i] = (float)((s->pixel_representation ? (double)(Sint8)px[i] : (double)px[i]) * a + b);
    }
    return SWIN_OK;
}
