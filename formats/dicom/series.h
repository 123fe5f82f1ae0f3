/* A CT series from DICOM files: grouping, the checks that make it one regular volume, the
 * order along the slice normal, the pixels in HU, and the affine.
 *
 * Voxel (i, j, k): i the column in a slice (along the row direction, ImageOrientationPatient
 * [0:3]), j the row (along the column direction, [3:6]), k the slice (the grid plane) in
 * increasing position along the normal row x column. World coordinates: NIfTI's RAS+ (DICOM's LPS with x and y
 * negated). The affine comes from ImagePositionPatient, ImageOrientationPatient and
 * PixelSpacing only: column spacing PixelSpacing[1] along i, row spacing PixelSpacing[0]
 * along j, and the step between the first and last slice positions along k (an unevenly
 * spaced stack, e.g. with a missing slice, is read onto a regular grid: stack_grid.h). A gantry-tilted
 * stack (each slice offset in its own plane by the same step) is read as it was acquired: a
 * sheared affine, the third column off the normal by the tilt (the pipeline resamples it as
 * MONAI's Spacing does a NIfTI file with that affine: onto an unsheared grid). */
#ifndef SWIN_DICOM_SERIES_H
#define SWIN_DICOM_SERIES_H

#include <stdint.h>

#include "formats/dicom/dcm.h"
#include "formats/dicom/stack_grid.h"

/* Which series of the inputs was read, and why (study.h). */
struct swin_dcm_choice {
    char uid[SWIN_UID_MAX];
    char reason[256];
    int nseries;            /* series in the inputs */
    int skipped;            /* DICOM files not read as slices */
    char skipped_what[192]; /* what they are, e.g. "2 localizer images in the series; 1 file of 1 other series" */
};

struct swin_dcm_series {
    struct swin_dcm_slice *slices;          /* nslices, sorted along the normal */
    int nslices;
    const struct swin_dcm_slice **order;    /* pointers into slices, for swin_dcm_ref */
    double *dist;                           /* nslices: distance from the first along the normal (mm) */
    struct swin_stack_grid grid;            /* the regular grid's planes; plane_of NULL: slice k is plane k */
    int64_t dim[3];                         /* cols, rows, grid planes */
    double affine[4][4];                    /* voxel -> RAS mm: sheared for a tilted stack */
    double tilt_deg;                        /* angle between the slice step and the normal */
    float *hu;                              /* cols * rows * grid planes */
    struct swin_dcm_choice choice;          /* set as far as the reading came, also on a refusal */
};

/* True when path is a directory or a file that starts like DICOM (preamble "DICM"). */
int swin_dcm_is_dicom_input(const char *path);

/* paths: folders, DICOMDIRs and files (study.h); the series read is the one pick names (a
 * UID or a number), else the default of study.h. Every refusal is one line naming the files
 * and saying what to do; SWIN_ERR_FORMAT for a series swinrun will not read (or none chosen).
 * pixel_threads 0: only the checks and geometry (hu NULL); else the pixels too, the files
 * decoded by that many threads side by side (the caller's included; a refusal is the one of
 * the first file in slice-file order that has one, whatever the thread count). */
swin_status swin_dcm_series_read(const char *const *paths, int npaths, const char *pick, int pixel_threads,
                                 struct swin_dcm_series *s, swin_error *err);
/* What the DICOM outputs need beyond the volume: every slice's SOPInstanceUID (the dataset's,
 * else the file meta's) a valid UID, as the SEG and the RT Structure Set reference each slice
 * by it. A NIfTI label map needs none. */
swin_status swin_dcm_series_check_references(const struct swin_dcm_series *s, swin_error *err);
void swin_dcm_series_free(struct swin_dcm_series *s);

#endif
