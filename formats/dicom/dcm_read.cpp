// Reading CT files with DCMTK: the attributes the series reader checks and the pixels in HU.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <utility>

#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmdata/dctk.h>
#include <dcmtk/dcmdata/dcrledrg.h>
#include <dcmtk/dcmjpeg/djdecode.h>
#include <dcmtk/dcmjpls/djdecode.h>
#include <dcmtk/oflog/oflog.h>

#include "formats/dicom/dcm.h"

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

// A US or SS value (PixelPaddingValue's VR follows PixelRepresentation) as the stored value.
static bool get_stored(DcmItem *d, const DcmTagKey &t, int signed_repr, int *out)
{
    Uint16 u;
    Sint16 v;
    if (d->findAndGetUint16(t, u).good()) *out = signed_repr ? (int)(Sint16)u : (int)u;
    else if (d->findAndGetSint16(t, v).good()) *out = signed_repr ? (int)v : (int)(Uint16)v;
    else return false;
    return true;
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
    DcmXfer x(d->getOriginalXfer());
    std::snprintf(s->transfer_syntax, sizeof s->transfer_syntax, "%s", x.getXferID());
    s->series_number = get_int(d, DCM_SeriesNumber, -1);
    s->rows = get_int(d, DCM_Rows, 0);
    s->cols = get_int(d, DCM_Columns, 0);
    s->bits_allocated = get_int(d, DCM_BitsAllocated, 0);
    s->pixel_representation = get_int(d, DCM_PixelRepresentation, 0);
    s->samples_per_pixel = get_int(d, DCM_SamplesPerPixel, 1);
    s->has_position = get_ds(d, DCM_ImagePositionPatient, s->position, 3);
    s->has_orientation = get_ds(d, DCM_ImageOrientationPatient, s->orientation, 6);
    s->has_spacing = get_ds(d, DCM_PixelSpacing, s->spacing, 2);
    if (!get_ds(d, DCM_RescaleSlope, &s->slope, 1)) s->slope = 1.0;
    if (!get_ds(d, DCM_RescaleIntercept, &s->intercept, 1)) s->intercept = 0.0;
    if (!get_ds(d, DCM_GantryDetectorTilt, &s->gantry_tilt, 1)) s->gantry_tilt = 0.0;
    s->has_padding = get_stored(d, DCM_PixelPaddingValue, s->pixel_representation, &s->padding[0]);
    if (s->has_padding && !get_stored(d, DCM_PixelPaddingRangeLimit, s->pixel_representation, &s->padding[1]))
        s->padding[1] = s->padding[0];
    if (s->padding[0] > s->padding[1]) std::swap(s->padding[0], s->padding[1]);
    return SWIN_OK;
}

swin_status swin_dcm_read_pixels(const struct swin_dcm_slice *s, float *out, swin_error *err)
{
    DcmFileFormat ff;
    OFCondition c = ff.loadFile(s->path);
    if (c.bad()) return swin_error_set(err, SWIN_ERR_FORMAT, "%s: unreadable DICOM file (%s)", s->path, c.text());
    DcmDataset *d = ff.getDataset();
    E_TransferSyntax xs = d->getOriginalXfer();
    DcmXfer x(xs);
    if (x.isEncapsulated()) {
        c = d->chooseRepresentation(EXS_LittleEndianExplicit, NULL);
        if (c.bad() || !d->canWriteXfer(EXS_LittleEndianExplicit))
            return swin_error_set(err, SWIN_ERR_FORMAT,
                                  "%s: cannot decode transfer syntax %s (%s); swinrun reads uncompressed, RLE, "
                                  "JPEG lossless and JPEG-LS: convert the series (e.g. dcmdjpeg, gdcmconv --raw)",
                                  s->path, x.getXferName(), s->transfer_syntax);
    }
    const size_t n = (size_t)s->rows * (size_t)s->cols;
    const double a = s->slope, b = s->intercept;
    const int pad_lo = s->has_padding ? s->padding[0] : 1, pad_hi = s->has_padding ? s->padding[1] : 0;
    auto hu = [&](int v) { return v >= pad_lo && v <= pad_hi ? SWIN_DCM_PADDING_HU : (float)(v * a + b); };
    if (s->bits_allocated == 16) {
        const Uint16 *px = NULL;
        unsigned long count = 0;
        if (d->findAndGetUint16Array(DCM_PixelData, px, &count).bad() || !px || count < n)
            return swin_error_set(err, SWIN_ERR_FORMAT, "%s: pixel data missing or shorter than %d x %d", s->path,
                                  s->rows, s->cols);
        // stored values above BitsStored are not masked: CT writers keep them sign-extended
        for (size_t i = 0; i < n; i++)
            out[i] = hu(s->pixel_representation ? (int)(Sint16)px[i] : (int)px[i]);
    } else if (s->bits_allocated == 8) {
        const Uint8 *px = NULL;
        unsigned long count = 0;
        if (d->findAndGetUint8Array(DCM_PixelData, px, &count).bad() || !px || count < n)
            return swin_error_set(err, SWIN_ERR_FORMAT, "%s: pixel data missing or shorter than %d x %d", s->path,
                                  s->rows, s->cols);
        for (size_t i = 0; i < n; i++)
            out[i] = hu(s->pixel_representation ? (int)(Sint8)px[i] : (int)px[i]);
    } else {
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: BitsAllocated %d; swinrun reads 8- and 16-bit CT pixels",
                              s->path, s->bits_allocated);
    }
    return SWIN_OK;
}
