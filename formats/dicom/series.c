/* The CT series reader (series.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/dicom/series.h"
#include "formats/dicom/decode_files.h"
#include "formats/dicom/stack_grid.h"
#include "formats/dicom/study.h"
#include "formats/format.h"
#include "formats/dicom/uid.h"

static double dot3(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void cross3(const double *a, const double *b, double *o)
{
    o[0] = a[1] * b[2] - a[2] * b[1];
    o[1] = a[2] * b[0] - a[0] * b[2];
    o[2] = a[0] * b[1] - a[1] * b[0];
}

static const char *base_name(const char *p)
{
    const char *b = strrchr(p, '/');
    return b ? b + 1 : p;
}

/* How a message names a slice: its file (whole path or base name), and its frame in a
 * multi-frame file. */
struct slice_name {
    char s[4128];
};

static struct slice_name name_of(const struct swin_dcm_slice *sl, int whole_path)
{
    struct slice_name n;
    const char *p = whole_path ? sl->path : base_name(sl->path);
    if (sl->frame) snprintf(n.s, sizeof n.s, "%s frame %d", p, sl->frame);
    else snprintf(n.s, sizeof n.s, "%s", p);
    return n;
}

struct sort_item {
    double d;
    int i;
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int cmp_item(const void *a, const void *b)
{
    const struct sort_item *x = a, *y = b;
    return x->d < y->d ? -1 : x->d > y->d ? 1 : x->i - y->i;
}

/* Same geometry on every slice: size, orientation, spacing, frame of reference. */
static swin_status check_geometry(const struct swin_dcm_slice *sl, int n, swin_error *err)
{
    const struct swin_dcm_slice *a = &sl[0];
    for (int i = 0; i < n; i++) {
        const struct swin_dcm_slice *s = &sl[i];
        if (strcmp(s->sop_class, SWIN_CT_IMAGE_STORAGE) && strcmp(s->sop_class, SWIN_ENHANCED_CT_IMAGE_STORAGE) &&
            strcmp(s->sop_class, SWIN_LEGACY_ENHANCED_CT_IMAGE_STORAGE))
            return swin_error_set(err, SWIN_ERR_FORMAT,
                                  "%s: SOP class %s is not CT Image Storage (%s), Enhanced CT (%s) or Legacy "
                                  "Converted Enhanced CT (%s): swinrun segments CT series only",
                                  s->path, s->sop_class[0] ? s->sop_class : "(none)", SWIN_CT_IMAGE_STORAGE,
                                  SWIN_ENHANCED_CT_IMAGE_STORAGE, SWIN_LEGACY_ENHANCED_CT_IMAGE_STORAGE);
        if (!s->has_position || !s->has_orientation || !s->has_spacing)
            return swin_error_set(err, SWIN_ERR_FORMAT,
                                  "%s: no %s: the slice cannot be placed in patient space", name_of(s, 1).s,
                                  !s->has_position ? "ImagePositionPatient"
                                  : !s->has_orientation ? "ImageOrientationPatient" : "PixelSpacing");
        if (s->samples_per_pixel != 1 || s->rows < 1 || s->cols < 1 || s->rows > 16384 || s->cols > 16384)
            return swin_error_set(err, SWIN_ERR_FORMAT, "%s: %d x %d pixels of %d samples: not a CT slice",
                                  name_of(s, 1).s, s->rows, s->cols, s->samples_per_pixel);
        if (!(s->spacing[0] > 0 && s->spacing[1] > 0 && s->spacing[0] < 1000 && s->spacing[1] < 1000))
            return swin_error_set(err, SWIN_ERR_FORMAT, "%s: PixelSpacing %g\\%g mm is not a spacing", name_of(s, 1).s,
                                  s->spacing[0], s->spacing[1]);
        if (!(s->slope != 0 && fabs(s->slope) < 1e6 && fabs(s->intercept) < 1e9))
            return swin_error_set(err, SWIN_ERR_FORMAT, "%s: RescaleSlope %g / RescaleIntercept %g are not usable",
                                  name_of(s, 1).s, s->slope, s->intercept);
        bool same = s->rows == a->rows && s->cols == a->cols && strcmp(s->frame_of_ref, a->frame_of_ref) == 0 &&
                    fabs(s->spacing[0] - a->spacing[0]) <= 1e-4 * a->spacing[0] &&
                    fabs(s->spacing[1] - a->spacing[1]) <= 1e-4 * a->spacing[1];
        for (int c = 0; c < 6; c++) same = same && fabs(s->orientation[c] - a->orientation[c]) <= 1e-4;
        if (!same)
            return swin_error_set(err, SWIN_ERR_FORMAT,
                                  "mixed geometry in one series: %s is %d x %d at %g\\%g mm, orientation "
                                  "%g\\%g\\%g\\%g\\%g\\%g, but %s is %d x %d at %g\\%g mm, orientation "
                                  "%g\\%g\\%g\\%g\\%g\\%g (or another frame of reference)",
                                  name_of(a, 0).s, a->rows, a->cols, a->spacing[0], a->spacing[1],
                                  a->orientation[0], a->orientation[1], a->orientation[2], a->orientation[3],
                                  a->orientation[4], a->orientation[5], name_of(s, 0).s, s->rows, s->cols,
                                  s->spacing[0], s->spacing[1], s->orientation[0], s->orientation[1],
                                  s->orientation[2], s->orientation[3], s->orientation[4], s->orientation[5]);
    }
    const double *r = a->orientation, *c = a->orientation + 3;
    if (fabs(dot3(r, r) - 1) > 1e-3 || fabs(dot3(c, c) - 1) > 1e-3 || fabs(dot3(r, c)) > 1e-3)
        return swin_error_set(err, SWIN_ERR_FORMAT,
                              "%s: ImageOrientationPatient %g\\%g\\%g\\%g\\%g\\%g is not two orthogonal unit vectors",
                              name_of(a, 1).s, r[0], r[1], r[2], c[0], c[1], c[2]);
    return SWIN_OK;
}

/* Sorted along the normal; one position per slice, no gap wider than SWIN_DCM_MAX_GAP_STEPS
 * usual gaps, every position on the line from the first to the last (a gantry-tilted stack
 * steps sideways by the same in-plane offset per mm along the normal: a sheared grid that one
 * affine still describes). dist (n, allocated): each slice's distance from the first along
 * the normal; *usual_gap: the median gap; *tilt_deg: the angle between the line and the normal. */
static swin_status check_stack(struct swin_dcm_slice *sl, int n, double **dist, double *usual_gap, double *tilt_deg,
                               swin_error *err)
{
    if (n < 2)
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: a series of one slice is not a volume",
                              name_of(&sl[0], 1).s);
    const double *r = sl[0].orientation, *c = sl[0].orientation + 3;
    double nrm[3];
    cross3(r, c, nrm);
    struct sort_item *it = malloc((size_t)n * sizeof *it);
    struct swin_dcm_slice *sorted = malloc((size_t)n * sizeof *sorted);
    double *d = malloc((size_t)n * sizeof *d), *gaps = malloc((size_t)(n - 1) * sizeof *gaps);
    if (!it || !sorted || !d || !gaps) {
        free(it);
        free(sorted);
        free(d);
        free(gaps);
        return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for %d slices", n);
    }
    for (int i = 0; i < n; i++) it[i] = (struct sort_item){dot3(sl[i].position, nrm), i};
    qsort(it, (size_t)n, sizeof *it, cmp_item);
    for (int i = 0; i < n; i++) sorted[i] = sl[it[i].i];
    memcpy(sl, sorted, (size_t)n * sizeof *sl);
    free(sorted);
    for (int k = 0; k < n; k++) d[k] = it[k].d - it[0].d;
    for (int k = 0; k + 1 < n; k++) gaps[k] = d[k + 1] - d[k];
    qsort(gaps, (size_t)(n - 1), sizeof *gaps, cmp_double);
    double step = gaps[(n - 1) / 2];
    free(gaps);
    swin_status st = SWIN_OK;
    for (int k = 0; k + 1 < n && !st; k++) {
        double gap = d[k + 1] - d[k];
        if (gap < 1e-3)
            st = swin_error_set(err, SWIN_ERR_FORMAT,
                                "%s and %s lie at the same position (%.3f mm along the normal): duplicate slices "
                                "(two acquisitions or reconstructions in one series?); remove one of them",
                                name_of(&sl[k], 0).s, name_of(&sl[k + 1], 0).s, it[k].d);
        else if (gap > SWIN_DCM_MAX_GAP_STEPS * step + fmax(1e-2, 1e-2 * step))
            st = swin_error_set(err, SWIN_ERR_FORMAT,
                                "a gap of %.4g mm between %s (%.3f mm) and %s (%.3f mm) where the other slices are "
                                "%.4g mm apart: more than %.0f missing slices (two scan ranges in one series?); "
                                "swinrun fills gaps of up to %.0f",
                                gap, name_of(&sl[k], 0).s, it[k].d, name_of(&sl[k + 1], 0).s, it[k + 1].d, step,
                                SWIN_DCM_MAX_GAP_STEPS - 1, SWIN_DCM_MAX_GAP_STEPS - 1);
    }
    /* every position where the line from the first to the last puts it (at its share of the
     * distance along the normal), within the rounding of positions written with 2 decimals */
    const double *p0 = sl[0].position, *pz = sl[n - 1].position;
    for (int k = 1; k + 1 < n && !st; k++) {
        double t = d[k] / d[n - 1], dv[3];
        for (int x = 0; x < 3; x++) dv[x] = sl[k].position[x] - (p0[x] + t * (pz[x] - p0[x]));
        double off = hypot(dot3(dv, r), dot3(dv, c));
        if (off > 0.05)
            st = swin_error_set(err, SWIN_ERR_FORMAT,
                                "%s is %.3f mm in its own plane off the line from %s to %s: the slices do not "
                                "step by one offset (an irregularly sheared stack); resample the series first",
                                name_of(&sl[k], 0).s, off, name_of(&sl[0], 0).s, name_of(&sl[n - 1], 0).s);
    }
    double dz[3] = {pz[0] - p0[0], pz[1] - p0[1], pz[2] - p0[2]};
    *tilt_deg = atan2(hypot(dot3(dz, r), dot3(dz, c)), dot3(dz, nrm)) * (180.0 / acos(-1.0));
    *usual_gap = step;
    free(it);
    if (st) free(d);
    else *dist = d;
    return st;
}

static void make_affine(struct swin_dcm_series *s)
{
    const struct swin_dcm_slice *a = &s->slices[0], *z = &s->slices[s->nslices - 1];
    const double *r = a->orientation, *c = a->orientation + 3;
    double nz1 = (double)(s->dim[2] - 1);
    double lps[3][4];
    for (int x = 0; x < 3; x++) {
        lps[x][0] = r[x] * a->spacing[1];   /* i: columns, spaced PixelSpacing[1] */
        lps[x][1] = c[x] * a->spacing[0];   /* j: rows, spaced PixelSpacing[0] */
        lps[x][2] = (z->position[x] - a->position[x]) / nz1;
        lps[x][3] = a->position[x];
    }
    for (int x = 0; x < 3; x++)
        for (int y = 0; y < 4; y++) s->affine[x][y] = x < 2 ? -lps[x][y] : lps[x][y]; /* LPS -> RAS */
    s->affine[3][0] = s->affine[3][1] = s->affine[3][2] = 0;
    s->affine[3][3] = 1;
}

static int cmp_file_frame(const void *a, const void *b)
{
    const struct swin_dcm_slice *x = *(const struct swin_dcm_slice *const *)a;
    const struct swin_dcm_slice *y = *(const struct swin_dcm_slice *const *)b;
    int c = strcmp(x->path, y->path);
    return c ? c : x->frame - y->frame;
}

/* The HU of every slice, file by file (threads files at a time): a multi-frame file is opened
 * once and decoded in its own frame order, whatever the slice order. Slice k into plane
 * plane_of[k] of s->hu (NULL: plane k). */
static swin_status read_pixels(struct swin_dcm_series *s, const int64_t *plane_of, int threads, swin_error *err)
{
    const int n = s->nslices;
    const size_t plane = (size_t)s->dim[0] * (size_t)s->dim[1];
    const struct swin_dcm_slice **by_file = malloc((size_t)n * sizeof *by_file);
    float **out = malloc((size_t)n * sizeof *out);
    swin_status st = SWIN_OK;
    if (!by_file || !out) st = swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for %d slices", n);
    for (int k = 0; k < n && !st; k++) by_file[k] = &s->slices[k];
    if (!st) qsort(by_file, (size_t)n, sizeof *by_file, cmp_file_frame);
    for (int k = 0; k < n && !st; k++) {
        int64_t i = by_file[k] - s->slices;
        out[k] = s->hu + plane * (size_t)(plane_of ? plane_of[i] : i);
    }
    if (!st) st = swin_dcm_decode_files(by_file, out, n, threads, err);
    free(by_file);
    free(out);
    return st;
}

swin_status swin_dcm_series_check_references(const struct swin_dcm_series *s, swin_error *err)
{
    for (int k = 0; k < s->nslices; k++) {
        const struct swin_dcm_slice *sl = &s->slices[k];
        if (!swin_dcm_uid_valid(sl->sop_instance))
            return swin_error_set(err, SWIN_ERR_FORMAT,
                                  "%s: SOPInstanceUID %s%s%s (in the dataset and the file meta): the SEG and the "
                                  "RT Structure Set could not reference this slice; re-export the series with its "
                                  "instance UIDs kept (or replaced consistently), or write a NIfTI label map",
                                  sl->path, sl->sop_instance[0] ? "\"" : "", sl->sop_instance,
                                  sl->sop_instance[0] ? "\" is not a valid UID" : "is blank");
    }
    return SWIN_OK;
}

void swin_dcm_series_free(struct swin_dcm_series *s)
{
    if (!s) return;
    free(s->slices);
    free(s->order);
    free(s->hu);
    free(s->dist);
    swin_stack_grid_free(&s->grid);
    s->slices = NULL, s->order = NULL, s->hu = NULL, s->dist = NULL; /* the choice stays for the report */
}

/* The image files of the chosen series, and what the run skips. */
static swin_status chosen_slices(struct swin_dcm_study *st, struct swin_dcm_slice **out, int *n,
                                 struct swin_dcm_choice *c, swin_error *err)
{
    const struct swin_series_row *row = &st->list.rows[st->list.chosen];
    snprintf(c->uid, sizeof c->uid, "%s", row->uid);
    snprintf(c->reason, sizeof c->reason, "%s", st->list.reason);
    c->skipped = swin_dcm_study_skipped(st, c->skipped_what, sizeof c->skipped_what);
    if (row->slices > SWIN_VOLUME_MAX_DIM)
        return swin_error_set(err, SWIN_ERR_FORMAT, "series %s: %d slices, more than the %d swinrun reads", row->uid,
                              row->slices, SWIN_VOLUME_MAX_DIM);
    if (!(*out = malloc((size_t)row->slices * sizeof **out)))
        return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for %d slices", row->slices);
    *n = 0;
    for (int i = 0; i < st->n; i++)
        if (st->row[i] == st->list.chosen && st->kind[i] == SWIN_DCM_IMAGE)
            for (int f = 0; f < st->nframes[i]; f++) (*out)[(*n)++] = st->frames[i][f];
    return SWIN_OK;
}

swin_status swin_dcm_series_read(const char *const *paths, int npaths, const char *pick, int pixel_threads,
                                 struct swin_dcm_series *s, swin_error *err)
{
    memset(s, 0, sizeof *s);
    struct swin_dcm_study study;
    swin_status st = swin_dcm_study_read(paths, npaths, pick, &study, err);
    if (st) return st;
    s->choice.nseries = study.list.n;
    struct swin_dcm_slice *sl = NULL;
    int n = 0;
    if (study.list.chosen < 0) st = swin_dcm_study_refuse(&study, npaths ? paths[0] : "input", err);
    else st = chosen_slices(&study, &sl, &n, &s->choice, err);
    swin_dcm_study_free(&study);
    if (!st) st = check_geometry(sl, n, err);
    double usual_gap = 0;
    if (!st) st = check_stack(sl, n, &s->dist, &usual_gap, &s->tilt_deg, err);
    s->slices = sl;
    s->nslices = n;
    if (!st) {
        double nrm[3];
        cross3(sl[0].orientation, sl[0].orientation + 3, nrm);
        st = swin_stack_grid_plan(s->dist, n, usual_gap, swin_stack_grid_rounding(nrm), SWIN_VOLUME_MAX_DIM,
                                  &s->grid, err);
    }
    if (!st && !(s->order = malloc((size_t)n * sizeof *s->order)))
        st = swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for %d slices", n);
    if (st) {
        swin_dcm_series_free(s);
        return st;
    }
    s->dim[0] = sl[0].cols, s->dim[1] = sl[0].rows, s->dim[2] = s->grid.nz;
    make_affine(s);
    for (int k = 0; k < n; k++) s->order[k] = &sl[k];
    if (pixel_threads < 1) return SWIN_OK;
    /* in place: every slice straight into its plane of the grid (an even stack, or one with
     * missing slices); else the slices first, then onto the grid */
    const struct swin_stack_grid *g = &s->grid;
    bool in_place = !g->plane_of || g->on_planes;
    size_t plane = (size_t)s->dim[0] * (size_t)s->dim[1], planes = in_place ? (size_t)g->nz : (size_t)n;
    if (!(s->hu = malloc(plane * planes * sizeof *s->hu))) {
        swin_dcm_series_free(s);
        return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for %lld x %lld x %zu voxels",
                              (long long)s->dim[0], (long long)s->dim[1], planes);
    }
    if ((st = read_pixels(s, in_place ? g->plane_of : NULL, pixel_threads, err))) {
        swin_dcm_series_free(s);
        return st;
    }
    if (g->plane_of && in_place) swin_stack_grid_fill_gaps(g, s->dist, n, plane, s->hu);
    if (!in_place) {
        float *grid = malloc(plane * (size_t)g->nz * sizeof *grid);
        if (!grid) {
            swin_dcm_series_free(s);
            return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for %lld x %lld x %lld voxels",
                                  (long long)s->dim[0], (long long)s->dim[1], (long long)g->nz);
        }
        swin_stack_grid_fill(g, s->dist, n, s->hu, plane, grid);
        free(s->hu);
        s->hu = grid;
    }
    return SWIN_OK;
}
