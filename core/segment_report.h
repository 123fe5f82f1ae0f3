/* What a segmentation found and did (swin_segment_report): the pipeline (pipeline/) and the
 * formats (formats/) fill it. */
#ifndef SWIN_SEGMENT_REPORT_H
#define SWIN_SEGMENT_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "plan_info.h"

/* A tilt below this (degrees) is the rounding of positions, not a tilted gantry. */
#define SWIN_DICOM_TILT_NOTICE_DEG 0.1

/* Per label present (not 0), on the input's own grid: what TotalSegmentator's --statistics
 * gives. */
#define SWIN_STATS_MAX 256
typedef struct swin_label_stats {
    int label;
    long long voxels;
    double volume_ml;                     /* voxels x |det| of the affine's 3x3 part / 1000 */
    double hu_mean, hu_std;               /* of the input's intensities there (population std) */
} swin_label_stats;

typedef struct swin_segment_report {
    long long input_dim[3], grid_dim[3];  /* the input, and the preprocessed grid the model saw */
    char input_axcodes[4];                /* e.g. "LPS" */
    double input_spacing[3], grid_spacing[3];
    long long cubes;                      /* sliding cubes run (forward passes) */
    int classes;                          /* the model's output channels */
    size_t pipeline_bytes;                /* host bytes the pipeline planned (besides the context) */
    swin_plan_info plan;                  /* the context's plan: bytes, backend chosen and why */
    double seconds_read, seconds_preprocess, seconds_infer, seconds_write;
    /* of seconds_infer: cutting the cubes out of the volume, the forward passes, blending
     * their logits, and averaging the finished planes into labels (argmax; the softmax for
     * probabilities and the linear way back, when asked for) */
    double seconds_cut, seconds_forward, seconds_blend, seconds_argmax;
    /* the file form's label map written plane by plane on a thread of its own while the cubes
     * ran (pipeline/label_writer.h): the seconds that thread worked, beside seconds_infer and
     * not in seconds_write; 0 when the planes were written after the cubes */
    double seconds_write_overlapped;
    /* on a device (CUDA): the seconds it had nothing queued between its first and its last
     * piece of work of this volume (a cube from its input to its logits, a ring's finish),
     * timed by events; -1 on the CPU backend (or when a gap could not be timed) */
    double seconds_device_idle;
    int labels_present;                   /* labels other than 0 with at least one voxel */
    bool dicom_input;                     /* the input was a DICOM series */
    bool dicom_written;                   /* a SEG (and RTSTRUCT) was written: false when no organ was found */
    double seconds_seg, seconds_rtstruct; /* of seconds_write: building and writing each DICOM output */
    int nstats;                           /* entries of stats: the labels present, ascending, at most
                                             SWIN_STATS_MAX (labels_present says how many there are) */
    swin_label_stats stats[SWIN_STATS_MAX];
    /* DICOM input: the series read and why ("the only CT series", "asked for by its UID",
     * "the axial CT series with the most slices (...)"); on a refusal for want of a choice,
     * dicom_series_uid is "" and dicom_series_reason says why. */
    int dicom_series_found;               /* series in the inputs */
    char dicom_series_uid[65];
    char dicom_series_reason[256];
    int dicom_skipped;                    /* DICOM files not read as slices: localizers, non-image
                                             objects (dose reports, secondary captures, ...), other series */
    char dicom_skipped_what[192];         /* e.g. "2 localizer images in the series; 3 files of 1 other series" */
    /* DICOM outputs whose study, CT series or frame of reference UID the CT left blank or
     * invalid (an anonymised series): which, and that new UIDs were generated, so that the
     * outputs will not file into the source study; "" when the outputs use the CT's own. */
    char dicom_notice[256];
    /* Where the cubes were blended (swin_segment_params.blend_on): on the device, in a ring of
     * ring_bytes device bytes (besides plan.total_bytes), or on the host; blend_note says why
     * the host when the backend could have blended ("" otherwise). */
    bool blended_on_device;
    size_t ring_bytes;
    char blend_note[256];
    /* A DICOM series' gantry tilt: the angle of its slice step off the normal (0: none; the CLI
     * names it from SWIN_DICOM_TILT_NOTICE_DEG up) */
    double dicom_tilt_deg;
    /* A DICOM series' slices, and the planes of its grid that fall on none (a missing slice,
     * uneven spacing: interpolated between the slices around them; in the NIfTI label map,
     * not in the SEG or RT Structure Set, which cover the slices) */
    int dicom_slices, dicom_planes_filled;
} swin_segment_report;

#endif
