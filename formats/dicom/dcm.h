/* The DCMTK side of swinrun's DICOM support (formats/dicom/dcm_*.cpp, C++17 behind this C
 * header): the attributes of one file, its pixels in HU, and the two objects swinrun writes
 * (DICOM SEG, RT Structure Set). Nothing here prints: DCMTK's logger is switched off and
 * every failure comes back as a status and a one-line message. */
#ifndef SWIN_DICOM_DCM_H
#define SWIN_DICOM_DCM_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" { /* status.h declares C functions without saying so */
#endif

#include "core/segment_params.h"
#include "core/status.h"

#define SWIN_UID_MAX 65 /* 64 characters + NUL */
#define SWIN_CT_IMAGE_STORAGE "1.2.840.10008.5.1.4.1.1.2"
#define SWIN_ENHANCED_CT_IMAGE_STORAGE "1.2.840.10008.5.1.4.1.1.2.1"
#define SWIN_LEGACY_ENHANCED_CT_IMAGE_STORAGE "1.2.840.10008.5.1.4.1.1.2.2" /* Legacy Converted Enhanced CT */
#define SWIN_DCM_MAX_FRAMES 100000 /* frames of one multi-frame file */
#define SWIN_DCM_PADDING_HU (-1024.0f) /* pixel padding: air */

/* What the series reader needs of one slice: a single-frame file, or one frame of a
 * multi-frame file (its attributes from the frame's per-frame functional groups, else the
 * shared ones). */
struct swin_dcm_slice {
    char path[4096];
    int frame;                     /* 1-based frame number in a multi-frame file; 0 for a single-frame file */
    char sop_class[SWIN_UID_MAX], sop_instance[SWIN_UID_MAX], series_uid[SWIN_UID_MAX];
    char frame_of_ref[SWIN_UID_MAX], transfer_syntax[SWIN_UID_MAX];
    char series_description[65];
    char modality[17];             /* Modality */
    char image_type[65];           /* ImageType, values joined by '\' (e.g. ORIGINAL\PRIMARY\LOCALIZER) */
    int series_number;             /* -1 when absent */
    double slice_thickness;        /* SliceThickness in mm (0 when absent) */
    int rows, cols, bits_allocated, bits_stored, pixel_representation, samples_per_pixel;
    int high_bit;                  /* HighBit (BitsStored - 1 when absent): the stored value's top bit */
    bool has_position, has_orientation, has_spacing;
    double position[3];            /* ImagePositionPatient (LPS mm): centre of the first pixel */
    double orientation[6];         /* ImageOrientationPatient: row direction, then column direction */
    double spacing[2];             /* PixelSpacing: between rows (down a column), between columns */
    double slope, intercept;       /* RescaleSlope / RescaleIntercept (1, 0 when absent) */
    bool has_padding;              /* PixelPaddingValue present */
    int padding[2];                /* stored values from PixelPaddingValue to PixelPaddingRangeLimit
                                      (both the value when no limit), in the pixel representation */
};

/* Nonzero when the data dictionary is loaded; else a message naming DCMDICTPATH. Also
 * switches DCMTK's logger off and registers its RLE, JPEG and JPEG-LS decoders (once). */
swin_status swin_dcm_init(swin_error *err);

/* Reads the attributes of a file (up to the pixel data) as *n slices in *slices (malloc'd;
 * the caller frees it): one for a single-frame file, one per frame (frame 1..n) for a file
 * with per-frame functional groups (Enhanced CT, Legacy Converted Enhanced CT).
 * transfer_syntax is the file meta's UID string (DCMTK does not know every syntax). *is_dicom
 * false (SWIN_OK, *slices NULL, *n 0) when the file is not DICOM at all (no preamble and no
 * parsable dataset), so that a folder's other files can be skipped. */
swin_status swin_dcm_read_header(const char *path, struct swin_dcm_slice **slices, int *n, bool *is_dicom,
                                 swin_error *err);

/* The files a DICOMDIR (Media Storage Directory) references, in the order of its directory
 * records: each ReferencedFileID resolved against the DICOMDIR's folder (components of
 * letters, digits and '_' only, so that no path leaves that folder). add(user, path) takes
 * each; a record naming a file that does not exist is refused, naming it. */
swin_status swin_dcm_read_dicomdir(const char *path, swin_status (*add)(void *user, const char *file, swin_error *err),
                                   void *user, swin_error *err);

/* Decodes n slices of one file (s[i]->path all the same; multi-frame: in increasing frame
 * order), s[i] into out[i] (rows x cols, row by row) as HU (stored value * slope +
 * intercept; stored values in the padding range are outside the scan: SWIN_DCM_PADDING_HU).
 * The file is opened once and its pixel data read one frame at a time; JPEG 2000 / HTJ2K
 * frames on up to `threads` threads (at least 1, the caller's included; a refusal is the
 * first frame's that has one). Reads
 * uncompressed (implicit and explicit VR little endian, explicit big endian, deflate), RLE,
 * JPEG (baseline, extended, lossless), JPEG-LS (DCMTK's decoders), JPEG 2000 and HTJ2K
 * (j2k_decode.h; a multi-frame file's frames found by frame_fragments.h); refuses other
 * transfer syntaxes, naming them. */
swin_status swin_dcm_read_pixels(const struct swin_dcm_slice *const *s, float *const *out, int n, int threads,
                                 swin_error *err);

/* The CT series an output refers to: slices sorted along the slice normal. */
struct swin_dcm_ref {
    const struct swin_dcm_slice *const *slices; /* nz, in voxel k order */
    int nz;
    /* what the outputs name as the study, the CT series and the frame of reference
     * (swin_dcm_ref_identity): the CT's own UIDs, or new ones where the CT's are blank or invalid */
    char study_uid[SWIN_UID_MAX], series_uid[SWIN_UID_MAX], frame_of_ref[SWIN_UID_MAX];
};

/* Fills ref's study, series and frame of reference UIDs from the first CT slice; each one
 * blank or invalid there gets a new UID under DCMTK's root (1.2.276.0.7230010.3), the same
 * for every output built from ref. notice: "" when every UID is the CT's own, else one line
 * naming the generated ones. */
swin_status swin_dcm_ref_identity(struct swin_dcm_ref *ref, char *notice, size_t notice_size, swin_error *err);

/* Labels present: which classes get a segment / ROI, in this order. */
struct swin_dcm_content {
    const swin_dicom_class *classes;        /* the classes present, in segment / ROI order */
    int nclasses;
    const uint16_t *labels;                 /* cols * rows * nz, the CT's own order */
    const char *software_version;
    int masks;                              /* 0: labels are label values; else labels are bit masks of
                                               this many overlapping channels, class label l is bit l - 1 */
    swin_seg_type seg_type;                 /* the SEG's form (binary only with masks) */
    const char *uid_seed;                   /* NULL: new series and instance UIDs; else derived
                                               (swin_segment_params.dicom_uid_seed) */
};

/* DICOM SEG (binary: one segment per class, frames only where the segment has voxels;
 * label map: one frame per slice with voxels, pixel = segment number) and
 * RT Structure Set (one ROI per class, contours from contour.h), written to a temporary
 * file that tmp_path names; the caller renames it into place. */
swin_status swin_dcm_write_seg(const struct swin_dcm_ref *ref, const struct swin_dcm_content *c, const char *tmp_path,
                               swin_error *err);
swin_status swin_dcm_write_rtstruct(const struct swin_dcm_ref *ref, const struct swin_dcm_content *c,
                                    const char *tmp_path, swin_error *err);

#ifdef __cplusplus
}
#endif

#endif
