/* Contours of one label on one slice, traced along voxel edges: every boundary edge
 * between a pixel of the label and one that is not becomes part of exactly one closed
 * loop, so that the even-odd rule at pixel centres gives the mask back exactly (holes are
 * loops of their own, single pixels are 4-corner loops, diagonal neighbours separate
 * loops). Vertices are pixel corners: (x, y) with x in 0..cols, y in 0..rows, corner
 * (x, y) at the top-left of pixel (column x, row y); only corners where the loop turns are
 * kept. Loops run clockwise on the image (y down), the label on their right. */
#ifndef SWIN_DICOM_CONTOUR_H
#define SWIN_DICOM_CONTOUR_H

#include <stdint.h>

#include "core/status.h"

struct swin_loops {
    int nloops;
    int *start;       /* nloops + 1 offsets into xy (in points) */
    int32_t *xy;      /* corners, x then y */
    int npoints, cap_points, cap_loops;
    uint8_t *out;     /* (cols + 1) * (rows + 1) outgoing-direction masks, scratch */
    int64_t out_cap;
};

/* Traces label `label` of the slice (cols * rows labels, row by row) into l (reused across
 * calls; its previous loops are dropped). */
swin_status swin_trace_slice(const uint16_t *slice, int cols, int rows, uint16_t label, struct swin_loops *l,
                             swin_error *err);
void swin_loops_free(struct swin_loops *l);

#endif
