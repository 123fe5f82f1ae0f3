/* An unevenly spaced CT stack (a missing slice, slices of two spacings) on a regular grid.
 *
 * The n slices lie at distances dist[0] = 0 < dist[1] < ... < dist[n - 1] along the stack's
 * line (mm). The grid has nz planes from the first slice to the last, the finest spacing
 * apart (the mean of the finest gaps that at least a tenth of the gaps, two at least, share;
 * else the median gap; adjusted so that the last plane falls on the last slice): 2.5 mm
 * slices with a run of 1.25 mm ones give a 1.25 mm grid whichever spacing has more slices,
 * and 0.625 mm slices written as 0.62 and 0.63 mm gaps a 0.625 mm one. A plane's HU
 * are the linear interpolation between the two slices around it (a copy where it falls on a
 * slice, within the rounding of positions written with two decimals: swin_stack_grid_rounding).
 * Each slice's labels are read back from its nearest plane: the plane itself where it lies on one. */
#ifndef SWIN_DICOM_STACK_GRID_H
#define SWIN_DICOM_STACK_GRID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

/* The widest gap filled, in usual gaps: three missing slices. */
#define SWIN_DCM_MAX_GAP_STEPS 4.0

struct swin_stack_grid {
    int64_t nz;        /* planes */
    double rounding;   /* mm: a plane this close to a slice is on it (swin_stack_grid_plan's) */
    double step;       /* between planes, mm along the line */
    int64_t *plane_of; /* per slice: its nearest plane; NULL when the stack is even (slice k is plane k) */
    bool on_planes;    /* every slice on a plane of its own (missing slices): read in place */
    int filled;        /* planes that fall on no slice (interpolated) */
};

/* How far two slices' distances along the line may be moved by positions written with two
 * decimals, for a stack along the unit normal n: each coordinate rounded by up to 0.005 mm
 * moves a slice along n by up to 0.005 (|n_x| + |n_y| + |n_z|) mm, two slices apart by twice
 * that: 0.01 mm for an axial, coronal or sagittal stack, up to 0.0173 mm (0.01 sqrt 3) for an
 * oblique one, whose evenly spaced slices then show gaps up to that far from each other. */
double swin_stack_grid_rounding(const double normal[3]);
/* Even: every gap within 1 % (rounding mm at least: swin_stack_grid_rounding) of usual_gap
 * (the median gap), the grid is the slices. Else plane_of is allocated (SWIN_ERR_NOMEM) and nz
 * planes must not exceed max_planes (SWIN_ERR_FORMAT, a message naming the series' extent);
 * gaps within 2 % (2 rounding at least) of each other are one spacing, and a plane within
 * rounding of a slice is on it. */
swin_status swin_stack_grid_plan(const double *dist, int n, double usual_gap, double rounding, int64_t max_planes,
                                 struct swin_stack_grid *g, swin_error *err);
/* dst (g->nz planes of `plane` floats) from src (n planes, slice order). */
void swin_stack_grid_fill(const struct swin_stack_grid *g, const double *dist, int n, const float *src,
                          size_t plane, float *dst);
/* on_planes: grid (g->nz planes) holds slice k at plane plane_of[k]; the planes between are
 * filled from the slices around them, as swin_stack_grid_fill would (the same values), with
 * no second volume. */
void swin_stack_grid_fill_gaps(const struct swin_stack_grid *g, const double *dist, int n, size_t plane, float *grid);
void swin_stack_grid_free(struct swin_stack_grid *g);

#endif
