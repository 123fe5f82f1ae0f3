// Reading CT files with DCMTK: the attributes the series reader checks and the pixels in HU.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <new>
#include <stdexcept>
#include <utility>
#include <vector>

#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmdata/dcfcache.h>
#include <dcmtk/dcmdata/dctk.h>
#include <dcmtk/dcmdata/dcpxitem.h>
#include <dcmtk/dcmdata/dcrledrg.h>
#include <dcmtk/dcmjpeg/djdecode.h>
#include <dcmtk/dcmjpls/djdecode.h>
#include <dcmtk/oflog/oflog.h>

#include "formats/dicom/dcm.h"
#include "formats/dicom/frame_fragments.h"
#include "formats/dicom/j2k_decode.h"
#include "formats/dicom/ordered_work.h"

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

// The item of a functional group macro (e.g. PlanePositionSequence) for one frame: the
// frame's own, else the shared one; NULL when neither has it.
static DcmItem *group(DcmItem *per_frame, DcmItem *shared, const DcmTagKey &seq)
{
    DcmItem *it = NULL;
    if (per_frame && per_frame->findAndGetSequenceItem(seq, it, 0).good() && it) return it;
    if (shared && shared->findAndGetSequenceItem(seq, it, 0).good() && it) return it;
    return NULL;
}

// The geometry and rescale of one frame from its functional groups (PS3.3 C.7.6.16).
static void read_frame_groups(DcmItem *per_frame, DcmItem *shared, struct swin_dcm_slice *s)
{
    DcmItem *g;
    s->has_position = (g = group(per_frame, shared, DCM_PlanePositionSequence)) &&
                      get_ds(g, DCM_ImagePositionPatient, s->position, 3);
    s->has_orientation = (g = group(per_frame, shared, DCM_PlaneOrientationSequence)) &&
                         get_ds(g, DCM_ImageOrientationPatient, s->orientation, 6);
    s->has_spacing = (g = group(per_frame, shared, DCM_PixelMeasuresSequence)) &&
                     get_ds(g, DCM_PixelSpacing, s->spacing, 2);
    if (g && !get_ds(g, DCM_SliceThickness, &s->slice_thickness, 1)) s->slice_thickness = 0.0;
    g = group(per_frame, shared, DCM_PixelValueTransformationSequence);
    if (!g || !get_ds(g, DCM_RescaleSlope, &s->slope, 1)) s->slope = 1.0;
    if (!g || !get_ds(g, DCM_RescaleIntercept, &s->intercept, 1)) s->intercept = 0.0;
}

swin_status swin_dcm_read_header(const char *path, struct swin_dcm_slice **slices, int *n, bool *is_dicom,
                                 swin_error *err)
{
    *slices = NULL;
    *n = 0;
    *is_dicom = false;
    DcmFileFormat ff;
    OFCondition c = EC_CorruptedData;
    char why[160] = "";
    try {
        c = ff.loadFileUntilTag(path, EXS_Unknown, EGL_noChange, DCM_MaxReadLength, ERM_autoDetect, DCM_PixelData);
    } catch (const std::exception &e) { // DCMTK 3.6.7 throws on some malformed values (a directory record's type)
        std::snprintf(why, sizeof why, "%s", e.what()); // the exception ends with this block
    }
    if (c.bad()) {
        FILE *f = std::fopen(path, "rb");
        if (!f) return swin_error_set(err, SWIN_ERR_IO, "%s: cannot open: %s", path, std::strerror(errno));
        unsigned char pre[132] = {0};
        size_t got = std::fread(pre, 1, sizeof pre, f);
        std::fclose(f);
        if (got == sizeof pre && !std::memcmp(pre + 128, "DICM", 4))
            return swin_error_set(err, SWIN_ERR_FORMAT, "%s: unreadable DICOM file (%s)", path, why[0] ? why : c.text());
        return SWIN_OK; // not DICOM: the caller skips it
    }
    *is_dicom = true;
    DcmDataset *d = ff.getDataset();
    DcmMetaInfo *m = ff.getMetaInfo();
    // frames: one slice per item of PerFrameFunctionalGroupsSequence, which must be NumberOfFrames long
    DcmSequenceOfItems *per = NULL;
    int frames = 1;
    if (d->findAndGetSequence(DCM_PerFrameFunctionalGroupsSequence, per).good() && per) {
        frames = get_int(d, DCM_NumberOfFrames, 0);
        if (frames < 1 || (unsigned long)frames != per->card())
            return swin_error_set(err, SWIN_ERR_FORMAT,
                                  "%s: NumberOfFrames %d but %lu items in PerFrameFunctionalGroupsSequence: a "
                                  "damaged multi-frame file",
                                  path, frames, per->card());
        if (frames > SWIN_DCM_MAX_FRAMES)
            return swin_error_set(err, SWIN_ERR_FORMAT, "%s: %d frames, more than the %d swinrun reads in one file",
                                  path, frames, SWIN_DCM_MAX_FRAMES);
    }
    struct swin_dcm_slice *sl = (struct swin_dcm_slice *)std::calloc((size_t)frames, sizeof *sl);
    if (!sl) return swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of host memory for %d frames", path, frames);
    struct swin_dcm_slice *s = &sl[0];
    std::snprintf(s->path, sizeof s->path, "%s", path);
    get_str(d, DCM_SOPClassUID, s->sop_class, sizeof s->sop_class);
    if (!s->sop_class[0]) get_str(m, DCM_MediaStorageSOPClassUID, s->sop_class, sizeof s->sop_class);
    get_str(d, DCM_SOPInstanceUID, s->sop_instance, sizeof s->sop_instance);
    // anonymisers blank the dataset's UID and keep the meta's (as a C-STORE carries it apart)
    if (!s->sop_instance[0])
        get_str(m, DCM_MediaStorageSOPInstanceUID, s->sop_instance, sizeof s->sop_instance);
    get_str(d, DCM_SeriesInstanceUID, s->series_uid, sizeof s->series_uid);
    get_str(d, DCM_FrameOfReferenceUID, s->frame_of_ref, sizeof s->frame_of_ref);
    get_str(d, DCM_SeriesDescription, s->series_description, sizeof s->series_description);
    get_str(d, DCM_Modality, s->modality, sizeof s->modality);
    get_str(d, DCM_ImageType, s->image_type, sizeof s->image_type);
    // the meta's UID string: DCMTK reads a syntax it does not know (HTJ2K) as explicit VR
    get_str(m, DCM_TransferSyntaxUID, s->transfer_syntax, sizeof s->transfer_syntax);
    if (!s->transfer_syntax[0])
        std::snprintf(s->transfer_syntax, sizeof s->transfer_syntax, "%s", DcmXfer(d->getOriginalXfer()).getXferID());
    s->series_number = get_int(d, DCM_SeriesNumber, -1);
    s->rows = get_int(d, DCM_Rows, 0);
    s->cols = get_int(d, DCM_Columns, 0);
    s->bits_allocated = get_int(d, DCM_BitsAllocated, 0);
    s->bits_stored = get_int(d, DCM_BitsStored, s->bits_allocated);
    s->high_bit = get_int(d, DCM_HighBit, s->bits_stored - 1);
    s->pixel_representation = get_int(d, DCM_PixelRepresentation, 0);
    s->samples_per_pixel = get_int(d, DCM_SamplesPerPixel, 1);
    s->has_padding = get_stored(d, DCM_PixelPaddingValue, s->pixel_representation, &s->padding[0]);
    if (s->has_padding && !get_stored(d, DCM_PixelPaddingRangeLimit, s->pixel_representation, &s->padding[1]))
        s->padding[1] = s->padding[0];
    if (s->padding[0] > s->padding[1]) std::swap(s->padding[0], s->padding[1]);
    if (!get_ds(d, DCM_SliceThickness, &s->slice_thickness, 1)) s->slice_thickness = 0.0;
    if (!per) {
        s->has_position = get_ds(d, DCM_ImagePositionPatient, s->position, 3);
        s->has_orientation = get_ds(d, DCM_ImageOrientationPatient, s->orientation, 6);
        s->has_spacing = get_ds(d, DCM_PixelSpacing, s->spacing, 2);
        if (!get_ds(d, DCM_RescaleSlope, &s->slope, 1)) s->slope = 1.0;
        if (!get_ds(d, DCM_RescaleIntercept, &s->intercept, 1)) s->intercept = 0.0;
    } else {
        DcmItem *shared = NULL;
        d->findAndGetSequenceItem(DCM_SharedFunctionalGroupsSequence, shared, 0);
        for (int f = 0; f < frames; f++) {
            if (f) sl[f] = sl[0];
            sl[f].frame = f + 1;
            read_frame_groups(per->getItem((unsigned long)f), shared, &sl[f]);
        }
    }
    *slices = sl;
    *n = frames;
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

// The encapsulated fragments of a file's pixel data (their values stay in the dataset) and
// the offset table's value, for frame_fragments.h.
struct encapsulated {
    std::vector<swin_fragment> frag;
    const Uint8 *bot = NULL;
    size_t bot_len = 0;
};

static swin_status read_fragments(DcmDataset *d, const struct swin_dcm_slice *s, encapsulated &px, swin_error *err)
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
    for (unsigned long i = 0; i < seq->card(); i++) {
        DcmPixelItem *it = NULL;
        Uint8 *p = NULL;
        if (seq->getItem(it, i).bad() || !it)
            return swin_error_set(err, SWIN_ERR_FORMAT, "%s: unreadable pixel data item %lu", s->path, i);
        const Uint32 len = it->getLength();
        if (len && (it->getUint8Array(p).bad() || !p))
            return swin_error_set(err, SWIN_ERR_FORMAT, "%s: unreadable pixel data fragment %lu", s->path, i);
        if (i)
            px.frag.push_back({len ? p : NULL, len});
        else
            px.bot = p, px.bot_len = len;
    }
    return SWIN_OK;
}

static inline bool is_padding(const struct swin_dcm_slice *s, int v)
{
    return s->has_padding && v >= s->padding[0] && v <= s->padding[1];
}

// One stored value v in HU: v * slope + intercept, or air for a padding value (outside the
// reconstructed field of view). whole: the sample read at its full width (a padding value
// outside BitsStored's range, as 63536 with 12 bits stored, is matched there).
static inline float stored_to_hu(const struct swin_dcm_slice *s, int v, int whole)
{
    if (is_padding(s, v) || is_padding(s, whole)) return SWIN_DCM_PADDING_HU;
    return (float)((double)v * s->slope + s->intercept);
}

// JPEG 2000 / HTJ2K frames in HU: s[i]'s frame into out[i]. The codestream of a frame split
// over fragments is decoded from their concatenation. The fragments are in memory, so frames
// are decoded side by side (ordered_work.h: the refusal is the first failing frame's).
struct j2k_frames {
    const struct swin_dcm_slice *const *s;
    float *const *out;
    int nframes;
    const encapsulated *px;
    const size_t *first;
};

static swin_status decode_frame(void *user, int i, swin_error *err)
{
    const j2k_frames &j = *static_cast<const j2k_frames *>(user);
    const struct swin_dcm_slice &a = *j.s[0];
    const int f = j.s[i]->frame ? j.s[i]->frame - 1 : 0;
    if (f >= j.nframes)
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: frame %d of NumberOfFrames %d", a.path, f + 1, j.nframes);
    try {
        std::vector<Uint8> cs;
        for (size_t k = j.first[(size_t)f]; k < j.first[(size_t)f + 1]; k++) {
            const swin_fragment &g = j.px->frag[k];
            if (g.len) cs.insert(cs.end(), g.bytes, g.bytes + g.len);
        }
        std::vector<int32_t> v((size_t)a.rows * (size_t)a.cols);
        const struct swin_j2k_expect want = {a.rows, a.cols, a.bits_allocated, a.pixel_representation != 0};
        char what[sizeof a.path + 32];
        if (j.s[i]->frame)
            std::snprintf(what, sizeof what, "%s frame %d", a.path, f + 1);
        else
            std::snprintf(what, sizeof what, "%s", a.path);
        swin_status st = swin_j2k_decode(cs.data(), cs.size(), &want, v.data(), what, err);
        if (st) return st;
        for (size_t p = 0; p < v.size(); p++) j.out[i][p] = stored_to_hu(j.s[i], v[p], v[p]);
    } catch (const std::bad_alloc &) {
        return swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of memory decoding a %d x %d JPEG 2000 frame", a.path,
                              a.rows, a.cols);
    }
    return SWIN_OK;
}

static swin_status read_j2k(DcmDataset *d, const struct swin_dcm_slice *const *s, float *const *out, int n,
                            int threads, swin_error *err)
{
    const struct swin_dcm_slice &a = *s[0];
    const int nframes = a.frame ? get_int(d, DCM_NumberOfFrames, 0) : 1;
    try {
        encapsulated px;
        swin_status st = read_fragments(d, &a, px, err);
        if (st) return st;
        std::vector<size_t> first((size_t)std::max(nframes, 1) + 1);
        if ((st = swin_frame_fragments(px.bot, px.bot_len, px.frag.data(), px.frag.size(), nframes, first.data(),
                                       a.path, err)))
            return st;
        j2k_frames j = {s, out, nframes, &px, first.data()};
        return swin_dcm_run_ordered(n, threads, decode_frame, &j, err);
    } catch (const std::bad_alloc &) {
        return swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of memory decoding a %d x %d JPEG 2000 frame", a.path,
                              a.rows, a.cols);
    }
}

// The stored value in a sample: BitsStored bits ending at HighBit, two's complement when
// PixelRepresentation is 1. The bits around it are ignored, as DCMTK, GDCM and pydicom ignore
// them: old scanners kept overlays there, and 12-bit signed values need not be sign-extended.
static inline int stored_value(unsigned sample, unsigned shift, unsigned bits, bool is_signed)
{
    const unsigned v = (sample >> shift) & ((1u << bits) - 1u);
    return is_signed && (v >> (bits - 1)) ? (int)v - (int)(1u << bits) : (int)v;
}

// The stored values of one frame as HU, from a frame buffer of bits_allocated-bit samples.
static void to_hu(const struct swin_dcm_slice *s, const Uint8 *buf, float *out)
{
    const size_t n = (size_t)s->rows * (size_t)s->cols;
    const unsigned bits = (unsigned)s->bits_stored, shift = (unsigned)(s->high_bit + 1 - s->bits_stored);
    const bool is_signed = s->pixel_representation != 0;
    if (s->bits_allocated == 16) {
        const Uint16 *px = (const Uint16 *)(const void *)buf;
        for (size_t i = 0; i < n; i++)
            out[i] = stored_to_hu(s, stored_value(px[i], shift, bits, is_signed), stored_value(px[i], 0, 16, is_signed));
    } else {
        for (size_t i = 0; i < n; i++)
            out[i] = stored_to_hu(s, stored_value(buf[i], shift, bits, is_signed), stored_value(buf[i], 0, 8, is_signed));
    }
}

swin_status swin_dcm_read_pixels(const struct swin_dcm_slice *const *s, float *const *out, int n, int threads,
                                 swin_error *err)
{
    if (n < 1) return SWIN_OK;
    const struct swin_dcm_slice &a = *s[0];
    if (a.bits_allocated != 16 && a.bits_allocated != 8)
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: BitsAllocated %d; swinrun reads 8- and 16-bit CT pixels",
                              a.path, a.bits_allocated);
    // HighBit places the stored value in a sample; a JPEG 2000 / HTJ2K codestream holds the
    // values themselves (of its own precision), so there, as in pydicom, HighBit is not read
    const bool j2k = is_j2k(a.transfer_syntax);
    for (int i = 0; i < n; i++)
        if (s[i]->bits_stored < 1 || s[i]->bits_stored > s[i]->bits_allocated ||
            (!j2k && (s[i]->high_bit < s[i]->bits_stored - 1 || s[i]->high_bit >= s[i]->bits_allocated)))
            return swin_error_set(err, SWIN_ERR_FORMAT,
                                  "%s: BitsStored %d, HighBit %d with BitsAllocated %d: a corrupt file", s[i]->path,
                                  s[i]->bits_stored, s[i]->high_bit, s[i]->bits_allocated);
    // values longer than DCM_MaxReadLength stay in the file: the pixel data is read frame by frame
    DcmFileFormat ff;
    OFCondition c = EC_CorruptedData;
    try {
        c = ff.loadFile(a.path);
    } catch (const std::exception &e) { // DCMTK 3.6.7 throws on some malformed values
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: unreadable DICOM file (%s)", a.path, e.what());
    }
    if (c.bad()) return swin_error_set(err, SWIN_ERR_FORMAT, "%s: unreadable DICOM file (%s)", a.path, c.text());
    DcmDataset *d = ff.getDataset();
    if (j2k) return read_j2k(d, s, out, n, threads, err);
    // a syntax DCMTK does not know was parsed as another: refused before its bytes are read as pixels
    if (DcmXfer(a.transfer_syntax).getXfer() == EXS_Unknown) return refuse_syntax(&a, err);
    DcmXfer x(d->getOriginalXfer());
    DcmElement *e = NULL;
    DcmPixelData *px = NULL;
    if (d->findAndGetElement(DCM_PixelData, e).good() && e) px = OFdynamic_cast(DcmPixelData *, e);
    if (!px) return swin_error_set(err, SWIN_ERR_FORMAT, "%s: no pixel data", a.path);
    const size_t frame_bytes = (size_t)a.rows * (size_t)a.cols * (size_t)(a.bits_allocated / 8);
    Uint32 size = 0;
    if (px->getUncompressedFrameSize(d, size).bad() || size != frame_bytes * (size_t)a.samples_per_pixel)
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: %d x %d pixels of %d bits do not make the frame size %lu",
                              a.path, a.rows, a.cols, a.bits_allocated, (unsigned long)size);
    Uint8 *buf = (Uint8 *)std::malloc((size_t)size + 1); // getUncompressedFrame may write a pad byte
    if (!buf) return swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of host memory for a frame", a.path);
    DcmFileCache cache;
    Uint32 fragment = 0; // where the next frame's fragments start (encapsulated); 0: DCMTK finds it
    OFString colour;
    for (int i = 0; i < n; i++) {
        const Uint32 f = s[i]->frame ? (Uint32)(s[i]->frame - 1) : 0;
        c = px->getUncompressedFrame(d, f, fragment, buf, size + 1, colour, &cache);
        if (c.bad()) {
            std::free(buf);
            if (x.isEncapsulated()) return refuse_syntax(&a, err);
            return swin_error_set(err, SWIN_ERR_FORMAT,
                                  "%s: pixel data of frame %u missing or shorter than %d x %d (%s)", a.path,
                                  (unsigned)f + 1, a.rows, a.cols, c.text());
        }
        to_hu(s[i], buf, out[i]);
    }
    std::free(buf);
    return SWIN_OK;
}
