/* A study: the DICOM files of the inputs, grouped into series, and the series a run reads.
 *
 * Inputs: folders (read recursively: hidden entries skipped, symbolic links to folders not
 * followed; a folder holding a DICOMDIR is read through the DICOMDIR's records instead),
 * DICOMDIR files, and DICOM files. Files that are not DICOM are ignored.
 *
 * Each file is an image, a localizer (ImageType holds LOCALIZER) or a non-image object (a
 * structured report such as a dose report, RT objects such as RT Dose, secondary captures,
 * presentation states, SEG, encapsulated documents, waveforms, raw data, or no pixel matrix
 * at all). Localizers and non-image objects are never slices: a run skips them and says how
 * many. An image of another class mixed into a series stays in it (and is refused there).
 *
 * The series read: the one asked for (its SeriesInstanceUID, or its SeriesNumber when that
 * names one series); else the only CT series (CT Image Storage images); else,
 * among the axial ones (all of them when none is axial), the one with the most slices; a
 * tie is ambiguous and no series is chosen. */
#ifndef SWIN_DICOM_STUDY_H
#define SWIN_DICOM_STUDY_H

#include "formats/dicom/dcm.h"
#include "formats/format.h"

enum swin_dcm_kind { SWIN_DCM_IMAGE = 0, SWIN_DCM_LOCALIZER = 1, SWIN_DCM_NON_IMAGE = 2 };

struct swin_dcm_study {
    struct swin_dcm_slice *files; /* n: the DICOM files read (a multi-frame file: its first frame) */
    struct swin_dcm_slice **frames; /* n: every frame of each file (nframes[i]; 1 for single-frame) */
    int *nframes;
    int n;
    int *row;                     /* the row of list each file belongs to */
    unsigned char *kind;          /* enum swin_dcm_kind of each file */
    struct swin_series_list list; /* the series, and list.chosen: the one a run reads */
};

/* Reads the headers of every file of the inputs, groups and classifies them and chooses the
 * series (pick: a UID or a number; NULL: the default). A study with no series chosen is no
 * error here: list.chosen is -1 and list.reason says why. */
swin_status swin_dcm_study_read(const char *const *paths, int npaths, const char *pick, struct swin_dcm_study *s,
                                swin_error *err);
/* The one-line refusal of a study with no series chosen: why, and its series. */
swin_status swin_dcm_study_refuse(const struct swin_dcm_study *s, const char *input, swin_error *err);
/* What a run of the chosen series skips: the number of files, and what they are. */
int swin_dcm_study_skipped(const struct swin_dcm_study *s, char *what, size_t n);
/* Moves the list out of s (the caller frees list.rows). */
void swin_dcm_study_take_list(struct swin_dcm_study *s, struct swin_series_list *out);
void swin_dcm_study_free(struct swin_dcm_study *s);

#endif
