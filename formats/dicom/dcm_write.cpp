// DICOM SEG and RT Structure Set from a label map on a CT series' own grid, built as
// DCMTK datasets attribute by attribute (PS3.3 A.51 Segmentation, A.19 RT Structure Set).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <set>
#include <string>
#include <vector>

#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmdata/dctk.h>

extern "C" {
#include "formats/dicom/contour.h"
}
#include "formats/dicom/uid.h"
#include "formats/dicom/dcm.h"

namespace {

const char *const SEG_STORAGE = "1.2.840.10008.5.1.4.1.1.66.4";
const char *const LABELMAP_SEG_STORAGE = "1.2.840.10008.5.1.4.1.1.66.7"; // DICOM 2024c, Supplement 243
const char *const RTSTRUCT_STORAGE = "1.2.840.10008.5.1.4.1.1.481.3";
const char *const STUDY_COMPONENT = "1.2.840.10008.3.1.2.3.1"; // RT Referenced Study's SOP class (PS3.3 C.8.8.5)

struct fail {
    OFCondition c;
    std::string what;
};

void ok(OFCondition c, const char *what)
{
    if (c.bad()) throw fail{c, what};
}

void put(DcmItem *d, const DcmTagKey &t, const std::string &v)
{
    OFCondition c = d->putAndInsertOFStringArray(t, v.c_str());
    if (c.bad()) throw fail{c, DcmTag(t).getTagName()}; // copied: the tag is a temporary
}

DcmItem *new_item(DcmItem *d, const DcmTagKey &seq)
{
    DcmItem *it = nullptr;
    ok(d->findOrCreateSequenceItem(seq, it, -2), "a sequence item");
    return it;
}

void code(DcmItem *d, const DcmTagKey &seq, const char *value, const char *scheme, const char *meaning)
{
    DcmItem *it = new_item(d, seq);
    put(it, DCM_CodeValue, value);
    put(it, DCM_CodingSchemeDesignator, scheme);
    put(it, DCM_CodeMeaning, meaning);
}

std::string uid(const char *root)
{
    char buf[100];
    dcmGenerateUniqueIdentifier(buf, root);
    return buf;
}

// An output's UID: new under root, or derived from the seed and the CT series (what names it).
std::string out_uid(const swin_dcm_ref *ref, const swin_dcm_content *c, const char *root, const std::string &what)
{
    if (!c->uid_seed) return uid(root);
    char buf[SWIN_UID_MAX];
    swin_dcm_uid_derived(c->uid_seed, ref->series_uid, what.c_str(), buf);
    return buf;
}

// Decimal string of at most 16 characters (DS), as precise as fits.
std::string ds(double v)
{
    char buf[32];
    if (std::fabs(v) < 5e-11) v = 0;
    for (int p = 12; p > 1; p--) {
        std::snprintf(buf, sizeof buf, "%.*g", p, v);
        if (std::strlen(buf) <= 16) return buf;
    }
    return buf;
}

std::string ds_list(const double *v, int n)
{
    std::string s;
    for (int i = 0; i < n; i++) s += (i ? "\\" : "") + ds(v[i]);
    return s;
}

// A DA, TM or AS value out of its syntax (e.g. an anonymiser's "REMOVED").
bool bad_date(DcmElement *e)
{
    const DcmEVR vr = e->ident();
    return (vr == EVR_DA || vr == EVR_TM || vr == EVR_AS) && e->checkValue("1").bad();
}

// Patient, study, frame of reference and character set, copied from the first CT slice; a
// value its VR does not allow (an anonymiser's placeholder date) is left empty instead.
void copy_from_ct(const char *ct_path, DcmDataset *out)
{
    DcmFileFormat ff;
    ok(ff.loadFileUntilTag(ct_path, EXS_Unknown, EGL_noChange, DCM_MaxReadLength, ERM_autoDetect, DCM_PixelData),
       "reading the CT's patient and study");
    DcmDataset *ct = ff.getDataset();
    static const DcmTagKey tags[] = {DCM_SpecificCharacterSet, DCM_PatientName, DCM_PatientID, DCM_PatientBirthDate,
                                     DCM_PatientSex, DCM_PatientAge, DCM_StudyInstanceUID, DCM_StudyDate,
                                     DCM_StudyTime, DCM_ReferringPhysicianName, DCM_StudyID, DCM_AccessionNumber,
                                     DCM_StudyDescription, DCM_FrameOfReferenceUID, DCM_PositionReferenceIndicator};
    for (const DcmTagKey &t : tags) {
        DcmElement *e = nullptr;
        if (ct->findAndGetElement(t, e).good() && e && !bad_date(e))
            ok(out->insert(OFstatic_cast(DcmElement *, e->clone()), true), "copying");
    }
    // type 2 attributes the CT may lack: present, empty
    static const DcmTagKey type2[] = {DCM_PatientName, DCM_PatientID, DCM_PatientBirthDate, DCM_PatientSex,
                                      DCM_StudyDate, DCM_StudyTime, DCM_ReferringPhysicianName, DCM_StudyID,
                                      DCM_AccessionNumber, DCM_PositionReferenceIndicator};
    for (const DcmTagKey &t : type2)
        if (!out->tagExists(t)) ok(out->insertEmptyElement(t), "an empty attribute");
}

struct now_str {
    std::string date, time;
    now_str()
    {
        char d[16], t[16];
        std::time_t s = std::time(nullptr);
        std::tm tm;
        gmtime_r(&s, &tm);
        std::strftime(d, sizeof d, "%Y%m%d", &tm);
        std::strftime(t, sizeof t, "%H%M%S", &tm);
        date = d, time = t;
    }
};

void common(DcmDataset *d, const swin_dcm_ref *ref, const swin_dcm_content *c, const char *sop_class,
            const char *modality, const std::string &series_description)
{
    copy_from_ct(ref->slices[0]->path, d);
    put(d, DCM_StudyInstanceUID, ref->study_uid);
    put(d, DCM_FrameOfReferenceUID, ref->frame_of_ref);
    now_str now;
    put(d, DCM_SOPClassUID, sop_class);
    put(d, DCM_SOPInstanceUID, out_uid(ref, c, SITE_INSTANCE_UID_ROOT, std::string(sop_class) + " instance"));
    put(d, DCM_InstanceCreationDate, now.date);
    put(d, DCM_InstanceCreationTime, now.time);
    put(d, DCM_Modality, modality);
    put(d, DCM_SeriesInstanceUID, out_uid(ref, c, SITE_SERIES_UID_ROOT, std::string(sop_class) + " series"));
    put(d, DCM_SeriesNumber, "901");
    put(d, DCM_SeriesDescription, series_description);
    put(d, DCM_InstanceNumber, "1");
    put(d, DCM_Manufacturer, "swinrun");
    put(d, DCM_ManufacturerModelName, "swinrun");
    put(d, DCM_DeviceSerialNumber, "0");
    put(d, DCM_SoftwareVersions, c->software_version);
}

const swin_dcm_slice &slice(const swin_dcm_ref *ref, int k)
{
    return *ref->slices[k];
}

// A reference to the CT image of slice s (Image SOP Instance Reference Macro, PS3.3 10-3):
// with frames, a multi-frame image's frame too.
void reference_image(DcmItem *it, const swin_dcm_slice &s, bool frames)
{
    put(it, DCM_ReferencedSOPClassUID, s.sop_class);
    put(it, DCM_ReferencedSOPInstanceUID, s.sop_instance);
    if (frames && s.frame) put(it, DCM_ReferencedFrameNumber, std::to_string(s.frame));
}

// Every CT image, in (0008,1115) ReferencedSeriesSequence style items: with frames, one item
// per slice (frame); without, one per instance.
void reference_instances(DcmItem *series_item, const DcmTagKey &seq, const swin_dcm_ref *ref, bool frames)
{
    std::set<std::string> seen;
    for (int k = 0; k < ref->nz; k++)
        if (frames || seen.insert(slice(ref, k).sop_instance).second)
            reference_image(new_item(series_item, seq), slice(ref, k), frames);
}

// DICOM's CIELab (PS3.3 C.10.7.1.1): L* 0..100, a* b* -128..127, scaled to 0..65535, from
// sRGB with the D65 white point.
void cielab(const unsigned char rgb[3], Uint16 out[3])
{
    double lin[3];
    for (int i = 0; i < 3; i++) {
        double v = rgb[i] / 255.0;
        lin[i] = v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
    }
    double X = (0.4124 * lin[0] + 0.3576 * lin[1] + 0.1805 * lin[2]) / 0.95047;
    double Y = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2];
    double Z = (0.0193 * lin[0] + 0.1192 * lin[1] + 0.9505 * lin[2]) / 1.08883;
    auto f = [](double t) { return t > 216.0 / 24389 ? std::cbrt(t) : (24389.0 / 27 * t + 16) / 116; };
    double L = 116 * f(Y) - 16, a = 500 * (f(X) - f(Y)), b = 200 * (f(Y) - f(Z));
    auto clamp = [](double v) { return (Uint16)std::lround(std::fmin(65535, std::fmax(0, v))); };
    out[0] = clamp(L * 65535 / 100);
    out[1] = clamp((a + 128) * 65535 / 255);
    out[2] = clamp((b + 128) * 65535 / 255);
}

swin_status save(DcmFileFormat &ff, const char *path, const char *what, swin_error *err)
{
    // RT Structure Sets in implicit VR: ContourData of a long contour outgrows the 16-bit length of
    // explicit VR DS
    E_TransferSyntax xs = std::strcmp(what, "DICOM SEG") ? EXS_LittleEndianImplicit : EXS_LittleEndianExplicit;
    OFCondition c = ff.saveFile(path, xs, EET_ExplicitLength, EGL_recalcGL, EPD_noChange, 0, 0,
                                EWM_createNewMeta);
    if (c.bad()) return swin_error_set(err, SWIN_ERR_IO, "%s: writing the %s failed: %s", path, what, c.text());
    return SWIN_OK;
}

// Whether a voxel's value v belongs to label: v is the label, or with overlapping masks
// (masks > 0: v a bit mask, bit c channel c) label c + 1's bit is set.
inline bool in_label(uint16_t v, int label, int masks)
{
    return masks ? ((v >> (label - 1)) & 1) != 0 : v == label;
}

bool has_voxel(const uint16_t *plane, size_t n, int label, int masks)
{
    for (size_t i = 0; i < n; i++)
        if (in_label(plane[i], label, masks)) return true;
    return false;
}

// Whether a voxel lies in two of the written segments (only overlapping masks can).
bool overlap(const swin_dcm_content *c, size_t n)
{
    if (!c->masks) return false;
    unsigned written = 0;
    for (int i = 0; i < c->nclasses; i++) written |= 1u << (c->classes[i].label - 1);
    for (size_t q = 0; q < n; q++) {
        const unsigned v = c->labels[q] & written;
        if (v & (v - 1)) return true;
    }
    return false;
}

} // namespace

namespace {

void segment_item(DcmItem *d, int number, const swin_dicom_class &k)
{
    DcmItem *it = new_item(d, DCM_SegmentSequence);
    ok(it->putAndInsertUint16(DCM_SegmentNumber, (Uint16)number), "SegmentNumber");
    put(it, DCM_SegmentLabel, k.name);
    code(it, DCM_SegmentedPropertyCategoryCodeSequence, "123037004", "SCT", "Anatomical Structure");
    code(it, DCM_SegmentedPropertyTypeCodeSequence, k.type_code, k.type_scheme, k.type_meaning);
    if (k.modifier_code) {
        DcmItem *type = nullptr;
        ok(it->findAndGetSequenceItem(DCM_SegmentedPropertyTypeCodeSequence, type, 0), "type code");
        code(type, DCM_SegmentedPropertyTypeModifierCodeSequence, k.modifier_code, "SCT", k.modifier_meaning);
    }
    put(it, DCM_SegmentAlgorithmType, "AUTOMATIC");
    put(it, DCM_SegmentAlgorithmName, "swinrun");
    Uint16 lab[3];
    cielab(k.rgb, lab);
    ok(it->putAndInsertUint16Array(DCM_RecommendedDisplayCIELabValue, lab, 3), "CIELab");
}

// A label map's pixel value 0 (as highdicom writes it): segment 0, DCM Background, black.
void background_item(DcmItem *d)
{
    DcmItem *it = new_item(d, DCM_SegmentSequence);
    ok(it->putAndInsertUint16(DCM_SegmentNumber, 0), "SegmentNumber");
    put(it, DCM_SegmentLabel, "Background");
    code(it, DCM_SegmentedPropertyCategoryCodeSequence, "125040", "DCM", "Background");
    code(it, DCM_SegmentedPropertyTypeCodeSequence, "125040", "DCM", "Background");
    put(it, DCM_SegmentAlgorithmType, "AUTOMATIC");
    put(it, DCM_SegmentAlgorithmName, "swinrun");
    const Uint16 black[3] = {0, 32896, 32896};
    ok(it->putAndInsertUint16Array(DCM_RecommendedDisplayCIELabValue, black, 3), "CIELab");
}

// One frame's functional groups: its source CT slice k, its dimension index values, its
// position, and (binary form) its segment.
void frame_item(DcmSequenceOfItems *per, const swin_dcm_ref *ref, int k, const Uint32 *idx, int nidx, int segment)
{
    DcmItem *f = new DcmItem();
    ok(per->append(f), "a frame");
    DcmItem *der = new_item(f, DCM_DerivationImageSequence);
    code(der, DCM_DerivationCodeSequence, "113076", "DCM", "Segmentation");
    DcmItem *src = new_item(der, DCM_SourceImageSequence);
    reference_image(src, slice(ref, k), true);
    code(src, DCM_PurposeOfReferenceCodeSequence, "121322", "DCM", "Source image for image processing operation");
    put(src, DCM_SpatialLocationsPreserved, "YES"); // the frame is on the slice's own grid
    DcmItem *fc = new_item(f, DCM_FrameContentSequence);
    ok(fc->putAndInsertUint32Array(DCM_DimensionIndexValues, idx, (unsigned long)nidx), "DimensionIndexValues");
    DcmItem *pp = new_item(f, DCM_PlanePositionSequence);
    put(pp, DCM_ImagePositionPatient, ds_list(slice(ref, k).position, 3));
    if (segment) {
        DcmItem *si = new_item(f, DCM_SegmentIdentificationSequence);
        ok(si->putAndInsertUint16(DCM_ReferencedSegmentNumber, (Uint16)segment), "ReferencedSegmentNumber");
    }
}

// Binary form: per segment, the slices where it has a voxel, bits packed across frames.
size_t binary_frames(DcmSequenceOfItems *per, const swin_dcm_ref *ref, const swin_dcm_content *c, size_t plane,
                     std::vector<Uint8> &bits)
{
    size_t frames = 0;
    for (int i = 0; i < c->nclasses; i++) {
        const int lab = c->classes[i].label;
        for (int k = 0; k < ref->nz; k++) {
            const uint16_t *p = c->labels + plane * (size_t)k;
            if (!has_voxel(p, plane, lab, c->masks)) continue;
            bits.resize((((frames + 1) * plane + 7) / 8), 0);
            for (size_t q = 0; q < plane; q++)
                if (in_label(p[q], lab, c->masks)) {
                    size_t b = frames * plane + q;
                    bits[b >> 3] |= (Uint8)(1u << (b & 7));
                }
            frames++;
            const Uint32 idx[2] = {(Uint32)(i + 1), (Uint32)(k + 1)};
            frame_item(per, ref, k, idx, 2, i + 1);
        }
    }
    return frames;
}

// Label-map form: the slices with a voxel of any segment, each pixel its segment number
// (T: Uint8 up to 255 segments, else Uint16).
template <typename T>
size_t labelmap_frames(DcmSequenceOfItems *per, const swin_dcm_ref *ref, const swin_dcm_content *c, size_t plane,
                       std::vector<T> &px)
{
    int top = 0;
    for (int i = 0; i < c->nclasses; i++) top = std::max(top, c->classes[i].label);
    std::vector<T> segment_of((size_t)top + 1, 0); // label -> segment number; 0 for labels not written
    for (int i = 0; i < c->nclasses; i++) segment_of[(size_t)c->classes[i].label] = (T)(i + 1);
    size_t frames = 0;
    for (int k = 0; k < ref->nz; k++) {
        const uint16_t *p = c->labels + plane * (size_t)k;
        bool any = false;
        for (size_t q = 0; q < plane && !any; q++) any = p[q] <= top && segment_of[p[q]];
        if (!any) continue;
        px.resize((frames + 1) * plane);
        T *out = px.data() + frames * plane;
        for (size_t q = 0; q < plane; q++) out[q] = p[q] <= top ? segment_of[p[q]] : 0;
        frames++;
        const Uint32 idx = (Uint32)(k + 1);
        frame_item(per, ref, k, &idx, 1, 0);
    }
    return frames;
}

} // namespace

extern "C" swin_status swin_dcm_write_seg(const struct swin_dcm_ref *ref, const struct swin_dcm_content *c,
                                          const char *tmp_path, swin_error *err)
{
    if (c->masks && c->seg_type == SWIN_SEG_LABELMAP)
        return swin_error_set(err, SWIN_ERR_ARG,
                              "a label map SEG holds one segment per pixel; overlapping masks need the binary SEG");
    try {
        const swin_dcm_slice &s0 = slice(ref, 0);
        const size_t plane = (size_t)s0.rows * (size_t)s0.cols;
        const bool labelmap = c->seg_type == SWIN_SEG_LABELMAP;
        const Uint16 bits_allocated = !labelmap ? 1 : c->nclasses <= 255 ? 8 : 16;
        DcmFileFormat ff;
        DcmDataset *d = ff.getDataset();
        common(d, ref, c, labelmap ? LABELMAP_SEG_STORAGE : SEG_STORAGE, "SEG", "swinrun segmentation");
        now_str now;
        put(d, DCM_ContentDate, now.date);
        put(d, DCM_ContentTime, now.time);
        put(d, DCM_ImageType, "DERIVED\\PRIMARY");
        put(d, DCM_ContentLabel, "SWINRUN");
        put(d, DCM_ContentDescription, "swinrun Swin UNETR segmentation");
        ok(d->insertEmptyElement(DCM_ContentCreatorName), "ContentCreatorName");
        put(d, DCM_PhotometricInterpretation, "MONOCHROME2");
        ok(d->putAndInsertUint16(DCM_Rows, (Uint16)s0.rows), "Rows");
        ok(d->putAndInsertUint16(DCM_Columns, (Uint16)s0.cols), "Columns");
        ok(d->putAndInsertUint16(DCM_SamplesPerPixel, 1), "SamplesPerPixel");
        ok(d->putAndInsertUint16(DCM_BitsAllocated, bits_allocated), "BitsAllocated");
        ok(d->putAndInsertUint16(DCM_BitsStored, bits_allocated), "BitsStored");
        ok(d->putAndInsertUint16(DCM_HighBit, (Uint16)(bits_allocated - 1)), "HighBit");
        ok(d->putAndInsertUint16(DCM_PixelRepresentation, 0), "PixelRepresentation");
        put(d, DCM_LossyImageCompression, "00");
        put(d, DCM_SegmentationType, labelmap ? "LABELMAP" : "BINARY");
        put(d, DCM_SegmentsOverlap, overlap(c, plane * (size_t)ref->nz) ? "YES" : "NO");
        if (labelmap) {
            put(d, DCM_PresentationLUTShape, "IDENTITY");
            ok(d->putAndInsertUint16(DCM_PixelPaddingValue, 0), "PixelPaddingValue");
            background_item(d);
        }
        for (int i = 0; i < c->nclasses; i++) segment_item(d, i + 1, c->classes[i]);

        // dimensions: segment number (binary form), then position
        std::string dim_uid = out_uid(ref, c, SITE_INSTANCE_UID_ROOT, "dimension organization");
        DcmItem *org = new_item(d, DCM_DimensionOrganizationSequence);
        put(org, DCM_DimensionOrganizationUID, dim_uid);
        put(d, DCM_DimensionOrganizationType, "3D");
        const DcmTagKey ptr[2][2] = {{DCM_ReferencedSegmentNumber, DCM_SegmentIdentificationSequence},
                                     {DCM_ImagePositionPatient, DCM_PlanePositionSequence}};
        const char *labels[2] = {"ReferencedSegmentNumber", "ImagePositionPatient"};
        for (int i = labelmap ? 1 : 0; i < 2; i++) {
            DcmItem *it = new_item(d, DCM_DimensionIndexSequence);
            DcmAttributeTag *p = new DcmAttributeTag(DCM_DimensionIndexPointer);
            ok(p->putTagVal(ptr[i][0]), "DimensionIndexPointer");
            ok(it->insert(p, true), "DimensionIndexPointer");
            DcmAttributeTag *g = new DcmAttributeTag(DCM_FunctionalGroupPointer);
            ok(g->putTagVal(ptr[i][1]), "FunctionalGroupPointer");
            ok(it->insert(g, true), "FunctionalGroupPointer");
            put(it, DCM_DimensionOrganizationUID, dim_uid);
            put(it, DCM_DimensionDescriptionLabel, labels[i]);
        }

        // shared: spacing and orientation of the CT
        DcmItem *shared = new_item(d, DCM_SharedFunctionalGroupsSequence);
        DcmItem *pm = new_item(shared, DCM_PixelMeasuresSequence);
        put(pm, DCM_PixelSpacing, ds_list(s0.spacing, 2));
        // the distance between neighbouring slice planes: along the normal, also when a gantry
        // tilt steps each slice sideways; SpacingBetweenSlices only when it is one for all (not
        // across a missing slice)
        const double *r = s0.orientation, *cd = s0.orientation + 3;
        const double nrm[3] = {r[1] * cd[2] - r[2] * cd[1], r[2] * cd[0] - r[0] * cd[2], r[0] * cd[1] - r[1] * cd[0]};
        auto along = [&](int k) {
            const double *p = slice(ref, k).position;
            return p[0] * nrm[0] + p[1] * nrm[1] + p[2] * nrm[2];
        };
        double step = ref->nz > 1 ? std::fabs(along(ref->nz - 1) - along(0)) / (ref->nz - 1) : 0;
        bool even = true;
        for (int k = 0; k + 1 < ref->nz; k++)
            even = even && std::fabs(std::fabs(along(k + 1) - along(k)) - step) <= std::fmax(1e-2, 1e-2 * step);
        put(pm, DCM_SliceThickness, ds(step));
        if (even) put(pm, DCM_SpacingBetweenSlices, ds(step));
        DcmItem *po = new_item(shared, DCM_PlaneOrientationSequence);
        put(po, DCM_ImageOrientationPatient, ds_list(s0.orientation, 6));

        DcmSequenceOfItems *per = new DcmSequenceOfItems(DCM_PerFrameFunctionalGroupsSequence);
        ok(d->insert(per, true), "PerFrameFunctionalGroupsSequence");
        DcmPixelData *px = new DcmPixelData(DCM_PixelData);
        ok(d->insert(px, true), "PixelData");
        size_t frames;
        if (bits_allocated == 16) {
            std::vector<Uint16> v;
            frames = labelmap_frames(per, ref, c, plane, v);
            px->setVR(EVR_OW);
            ok(px->putUint16Array(v.data(), (unsigned long)v.size()), "PixelData");
        } else {
            std::vector<Uint8> v;
            frames = labelmap ? labelmap_frames(per, ref, c, plane, v) : binary_frames(per, ref, c, plane, v);
            if (v.size() & 1) v.push_back(0);
            px->setVR(EVR_OB);
            ok(px->putUint8Array(v.data(), (unsigned long)v.size()), "PixelData");
        }
        put(d, DCM_NumberOfFrames, std::to_string(frames));

        // every CT instance, referenced from the one series
        DcmItem *rs = new_item(d, DCM_ReferencedSeriesSequence);
        put(rs, DCM_SeriesInstanceUID, ref->series_uid);
        reference_instances(rs, DCM_ReferencedInstanceSequence, ref, false);
        return save(ff, tmp_path, "DICOM SEG", err);
    } catch (const fail &f) {
        return swin_error_set(err, SWIN_ERR_INTERNAL, "building the DICOM SEG: %s: %s", f.what.c_str(), f.c.text());
    } catch (const std::bad_alloc &) {
        return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory building the DICOM SEG");
    }
}

extern "C" swin_status swin_dcm_write_rtstruct(const struct swin_dcm_ref *ref, const struct swin_dcm_content *c,
                                               const char *tmp_path, swin_error *err)
{
    struct swin_loops loops = {};
    try {
        const swin_dcm_slice &s0 = slice(ref, 0);
        const size_t plane = (size_t)s0.rows * (size_t)s0.cols;
        DcmFileFormat ff;
        DcmDataset *d = ff.getDataset();
        common(d, ref, c, RTSTRUCT_STORAGE, "RTSTRUCT", "swinrun structures");
        ok(d->insertEmptyElement(DCM_OperatorsName), "OperatorsName");
        now_str now;
        put(d, DCM_StructureSetLabel, "swinrun");
        put(d, DCM_StructureSetName, "swinrun");
        put(d, DCM_StructureSetDate, now.date);
        put(d, DCM_StructureSetTime, now.time);
        const std::string for_uid = ref->frame_of_ref, study_uid = ref->study_uid;
        std::vector<uint16_t> bit(c->masks ? plane : 0);

        DcmItem *rfor = new_item(d, DCM_ReferencedFrameOfReferenceSequence);
        put(rfor, DCM_FrameOfReferenceUID, for_uid.c_str());
        DcmItem *rstudy = new_item(rfor, DCM_RTReferencedStudySequence);
        put(rstudy, DCM_ReferencedSOPClassUID, STUDY_COMPONENT);
        put(rstudy, DCM_ReferencedSOPInstanceUID, study_uid.c_str());
        DcmItem *rseries = new_item(rstudy, DCM_RTReferencedSeriesSequence);
        put(rseries, DCM_SeriesInstanceUID, ref->series_uid);
        reference_instances(rseries, DCM_ContourImageSequence, ref, true);

        const double *r = s0.orientation, *cd = s0.orientation + 3;
        for (int i = 0; i < c->nclasses; i++) {
            const swin_dicom_class &k = c->classes[i];
            const std::string num = std::to_string(i + 1);
            DcmItem *roi = new_item(d, DCM_StructureSetROISequence);
            put(roi, DCM_ROINumber, num);
            put(roi, DCM_ReferencedFrameOfReferenceUID, for_uid.c_str());
            put(roi, DCM_ROIName, k.name);
            put(roi, DCM_ROIGenerationAlgorithm, "AUTOMATIC");
            put(roi, DCM_ROIGenerationDescription, std::string("swinrun ") + c->software_version);

            DcmItem *rc = new_item(d, DCM_ROIContourSequence);
            put(rc, DCM_ROIDisplayColor, std::to_string(k.rgb[0]) + "\\" + std::to_string(k.rgb[1]) + "\\" +
                                             std::to_string(k.rgb[2]));
            DcmSequenceOfItems *contours = new DcmSequenceOfItems(DCM_ContourSequence);
            ok(rc->insert(contours, true), "ContourSequence");
            int contour_number = 0;
            for (int z = 0; z < ref->nz; z++) {
                const uint16_t *p = c->labels + plane * (size_t)z;
                if (!has_voxel(p, plane, k.label, c->masks)) continue;
                uint16_t traced = (uint16_t)k.label;
                if (c->masks) { // the tracer follows one value: the label's bit as 0 / 1
                    for (size_t q = 0; q < plane; q++) bit[q] = in_label(p[q], k.label, c->masks);
                    p = bit.data(), traced = 1;
                }
                if (swin_trace_slice(p, s0.cols, s0.rows, traced, &loops, err)) {
                    swin_loops_free(&loops);
                    return err->status;
                }
                const swin_dcm_slice &s = slice(ref, z);
                for (int l = 0; l < loops.nloops; l++) {
                    int a = loops.start[l], b = loops.start[l + 1];
                    std::string pts;
                    pts.reserve((size_t)(b - a) * 3 * 12);
                    for (int q = a; q < b; q++) {
                        // corner (x, y) is at pixel index (x - 0.5, y - 0.5)
                        double u = (loops.xy[2 * q] - 0.5) * s.spacing[1], v = (loops.xy[2 * q + 1] - 0.5) * s.spacing[0];
                        for (int x = 0; x < 3; x++) {
                            if (!pts.empty()) pts += '\\';
                            pts += ds(s.position[x] + u * r[x] + v * cd[x]);
                        }
                    }
                    DcmItem *ci = new DcmItem();
                    ok(contours->append(ci), "a contour");
                    reference_image(new_item(ci, DCM_ContourImageSequence), s, true);
                    put(ci, DCM_ContourNumber, std::to_string(++contour_number));
                    put(ci, DCM_ContourGeometricType, "CLOSED_PLANAR");
                    put(ci, DCM_NumberOfContourPoints, std::to_string(b - a));
                    DcmDecimalString *cdata = new DcmDecimalString(DCM_ContourData);
                    ok(cdata->putString(pts.c_str()), "ContourData");
                    ok(ci->insert(cdata, true), "ContourData");
                }
            }
            put(rc, DCM_ReferencedROINumber, num);

            DcmItem *obs = new_item(d, DCM_RTROIObservationsSequence);
            put(obs, DCM_ObservationNumber, num);
            put(obs, DCM_ReferencedROINumber, num);
            // ORGAN for the organs of the class tables; a name of the model's own (coded Tissue)
            // may be a lesion or a target: the type is left empty, for the user to say
            if (std::strcmp(k.type_code, SWIN_DICOM_TISSUE_CODE))
                put(obs, DCM_RTROIInterpretedType, "ORGAN");
            else
                ok(obs->insertEmptyElement(DCM_RTROIInterpretedType), "RTROIInterpretedType");
            ok(obs->insertEmptyElement(DCM_ROIInterpreter), "ROIInterpreter");
        }
        swin_loops_free(&loops);
        return save(ff, tmp_path, "RT Structure Set", err);
    } catch (const fail &f) {
        swin_loops_free(&loops);
        return swin_error_set(err, SWIN_ERR_INTERNAL, "building the RT Structure Set: %s: %s", f.what.c_str(), f.c.text());
    } catch (const std::bad_alloc &) {
        swin_loops_free(&loops);
        return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory building the RT Structure Set");
    }
}

// swin_dcm_ref_identity (dcm.h), DCMTK allocating as it reads
static swin_status identity(struct swin_dcm_ref *ref, char *notice, size_t notice_size, swin_error *err)
{
    const swin_dcm_slice &s0 = slice(ref, 0);
    DcmFileFormat ff;
    OFCondition c = ff.loadFileUntilTag(s0.path, EXS_Unknown, EGL_noChange, DCM_MaxReadLength, ERM_autoDetect,
                                        DCM_PixelData);
    if (c.bad()) return swin_error_set(err, SWIN_ERR_IO, "%s: reading the CT's study: %s", s0.path, c.text());
    OFString study;
    ff.getDataset()->findAndGetOFString(DCM_StudyInstanceUID, study);
    struct {
        const char *ct;
        char *out;
        const char *name, *root;
    } ids[3] = {{study.c_str(), ref->study_uid, "StudyInstanceUID", SITE_STUDY_UID_ROOT},
                {s0.series_uid, ref->series_uid, "SeriesInstanceUID", SITE_SERIES_UID_ROOT},
                {s0.frame_of_ref, ref->frame_of_ref, "FrameOfReferenceUID", SITE_INSTANCE_UID_ROOT}};
    char generated[160] = "";
    size_t len = 0;
    for (auto &id : ids) {
        if (swin_dcm_uid_valid(id.ct)) {
            std::snprintf(id.out, SWIN_UID_MAX, "%s", id.ct);
            continue;
        }
        char buf[100];
        std::snprintf(id.out, SWIN_UID_MAX, "%s", dcmGenerateUniqueIdentifier(buf, id.root));
        len += (size_t)std::snprintf(generated + len, sizeof generated - len, "%s%s (%s)", len ? ", " : "", id.name,
                                     id.ct[0] ? "invalid" : "blank");
    }
    notice[0] = 0;
    if (len)
        std::snprintf(notice, notice_size,
                      "the CT's %s: new UIDs generated for the DICOM outputs, which will not file into the source "
                      "study",
                      generated);
    return SWIN_OK;
}

extern "C" swin_status swin_dcm_ref_identity(struct swin_dcm_ref *ref, char *notice, size_t notice_size,
                                             swin_error *err)
{
    try {
        return identity(ref, notice, notice_size, err);
    } catch (const std::bad_alloc &) {
        return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory reading the CT's study");
    }
}
