/* Organ statistics of a label map over the intensities it was made from (core/segment_report.h's
 * swin_label_stats): voxel count, volume in mL, mean and standard deviation of HU. */
#ifndef SWIN_PIPELINE_LABEL_STATS_H
#define SWIN_PIPELINE_LABEL_STATS_H

#include <stdint.h>

#include "pipeline/segment_api.h"

/* Accumulates planes of intensities and labels (uint16), n voxels at a time. */
struct swin_stats_acc {
    int classes;          /* labels 0..classes-1 counted; others ignored */
    long long *count;
    double *sum, *sumsq;
};

swin_status swin_stats_begin(struct swin_stats_acc *a, int classes, swin_error *err);
/* hu: n intensities of the given type (float32 or int16). */
void swin_stats_add(struct swin_stats_acc *a, swin_voxel_type type, const void *hu, const uint16_t *labels, size_t n);
/* The statistics of labels over a volume in memory into rep (label map on v's grid). */
swin_status swin_stats_volume(const swin_volume *v, const uint16_t *labels, int classes, int masks,
                              swin_segment_report *rep, swin_error *err);
/* Labels that were bit masks of `masks` channels (a multi-label run): the statistics of each
 * channel's voxels, as label c + 1 for channel c (label 0, no channel, dropped). */
void swin_stats_fold_masks(struct swin_stats_acc *a, int masks);
/* |det| of the affine's 3x3 part: one voxel's volume in mm^3. */
double swin_voxel_mm3(const double affine[4][4]);
/* Fills rep->stats, rep->nstats and rep->labels_present; voxel_mm3 = |det| of the 3x3 part. */
void swin_stats_end(struct swin_stats_acc *a, double voxel_mm3, swin_segment_report *rep);
void swin_stats_free(struct swin_stats_acc *a);

#endif
