/* The CT series reader (series.h). */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "formats/dicom/series.h"
#include "formats/dicom/uid.h"

#define SWIN_DCM_MAX_FILES 100000

struct name_list {
    char **v;
    int n, cap;
};

static swin_status push(struct name_list *l, const char *dir, const char *name, swin_error *err)
{
    if (l->n >= SWIN_DCM_MAX_FILES)
        return swin_error_set(err, SWIN_ERR_ARG, "more than %d files given: pass one series", SWIN_DCM_MAX_FILES);
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 256;
        char **v = realloc(l->v, (size_t)cap * sizeof *v);
        if (!v) return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for the file list");
        l->v = v, l->cap = cap;
    }
    size_t len = strlen(name) + (dir ? strlen(dir) + 2 : 1);
    char *s = malloc(len);
    if (!s) return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for the file list");
    if (dir) snprintf(s, len, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", name);
    else snprintf(s, len, "%s", name);
    l->v[l->n++] = s;
    return SWIN_OK;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Files of a directory (regular files, not hidden, not DICOMDIR), sorted by name only so
 * that messages are reproducible; the slice order comes from the positions. */
static swin_status list_dir(const char *dir, struct name_list *l, swin_error *err)
{
    DIR *d = opendir(dir);
    if (!d) return swin_error_set(err, SWIN_ERR_IO, "%s: cannot open the folder: %s", dir, strerror(errno));
    int first = l->n;
    struct dirent *e;
    swin_status st = SWIN_OK;
    while (!st && (e = readdir(d))) {
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "DICOMDIR")) continue;
        char full[4096];
        snprintf(full, sizeof full, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (stat(full, &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
        st = push(l, dir, e->d_name, err);
    }
    closedir(d);
    if (!st) qsort(l->v + first, (size_t)(l->n - first), sizeof *l->v, cmp_str);
    return st;
}

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

struct series_group {
    const char *uid;
    int count, first;
};

/* Several series among the inputs: names them (UID, number, description, file count). */
static swin_status several_series(const struct swin_dcm_slice *sl, int n, swin_error *err)
{
    struct series_group g[8];
    int ng = 0, more = 0;
    for (int i = 0; i < n; i++) {
        int j = 0;
        while (j < ng && strcmp(g[j].uid, sl[i].series_uid)) j++;
        if (j < ng) g[j].count++;
        else if (ng < 8) g[ng++] = (struct series_group){sl[i].series_uid, 1, i};
        else more = 1;
    }
    char list[384] = "";
    size_t len = 0;
    for (int j = 0; j < ng && len < sizeof list; j++) {
        const struct swin_dcm_slice *s = &sl[g[j].first];
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s (number %d, \"%s\", %d files, e.g. %s)",
                                j ? "; " : "", s->series_uid, s->series_number, s->series_description, g[j].count,
                                base_name(s->path));
    }
    return swin_error_set(err, SWIN_ERR_FORMAT,
                          "the input holds %s%d series: %s%s; pick one by passing only its files (or a folder with "
                          "only that series)",
                          more ? "more than " : "", ng, list, more ? "; ..." : "");
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
        if (strcmp(s->sop_class, SWIN_CT_IMAGE_STORAGE))
            return swin_error_set(err, SWIN_ERR_FORMAT,
                                  "%s: SOP class %s is not CT Image Storage (%s): swinrun segments CT series only",
                                  s->path, s->sop_class[0] ? s->sop_class : "(none)", SWIN_CT_IMAGE_STORAGE);
        if (!swin_dcm_uid_valid(s->sop_instance))
            return swin_error_set(err, SWIN_ERR_FORMAT,
                                  "%s: SOPInstanceUID %s%s%s: the SEG and the RT Structure Set could not "
                                  "reference this slice; re-export the series with its instance UIDs kept (or "
                                  "replaced consistently)",
                                  s->path, s->sop_instance[0] ? "\"" : "", s->sop_instance,
                                  s->sop_instance[0] ? "\" is not a valid UID" : "is blank");
        if (!s->has_position || !s->has_orientation || !s->has_spacing)
            return swin_error_set(err, SWIN_ERR_FORMAT,
                                  "%s: no %s: the slice cannot be placed in patient space", s->path,
                                  !s->has_position ? "ImagePositionPatient"
                                  : !s->has_orientation ? "ImageOrientationPatient" : "PixelSpacing");
        if (s->samples_per_pixel != 1 || s->rows < 1 || s->cols < 1 || s->rows > 16384 || s->cols > 16384)
            return swin_error_set(err, SWIN_ERR_FORMAT, "%s: %d x %d pixels of %d samples: not a CT slice", s->path,
                                  s->rows, s->cols, s->samples_per_pixel);
        if (!(s->spacing[0] > 0 && s->spacing[1] > 0 && s->spacing[0] < 1000 && s->spacing[1] < 1000))
            return swin_error_set(err, SWIN_ERR_FORMAT, "%s: PixelSpacing %g\\%g mm is not a spacing", s->path,
                                  s->spacing[0], s->spacing[1]);
        if (!(s->slope != 0 && fabs(s->slope) < 1e6 && fabs(s->intercept) < 1e9))
            return swin_error_set(err, SWIN_ERR_FORMAT, "%s: RescaleSlope %g / RescaleIntercept %g are not usable",
                                  s->path, s->slope, s->intercept);
        if (fabs(s->gantry_tilt) > 1e-3)
            return swin_error_set(err, SWIN_ERR_FORMAT,
                                  "%s: gantry tilt of %g degrees: the slices are sheared; swinrun reads untilted "
                                  "series (resample it first, e.g. dcm2niix corrects tilt)",
                                  s->path, s->gantry_tilt);
        bool same = s->rows == a->rows && s->cols == a->cols && strcmp(s->frame_of_ref, a->frame_of_ref) == 0 &&
                    fabs(s->spacing[0] - a->spacing[0]) <= 1e-4 * a->spacing[0] &&
                    fabs(s->spacing[1] - a->spacing[1]) <= 1e-4 * a->spacing[1];
        for (int c = 0; c < 6; c++) same = same && fabs(s->orientation[c] - a->orientation[c]) <= 1e-4;
        if (!same)
            return swin_error_set(err, SWIN_ERR_FORMAT,
                                  "mixed geometry in one series: %s is %d x %d at %g\\%g mm, orientation "
                                  "%g\\%g\\%g\\%g\\%g\\%g, but %s is %d x %d at %g\\%g mm, orientation "
                                  "%g\\%g\\%g\\%g\\%g\\%g (or another frame of reference)",
                                  base_name(a->path), a->rows, a->cols, a->spacing[0], a->spacing[1],
                                  a->orientation[0], a->orientation[1], a->orientation[2], a->orientation[3],
                                  a->orientation[4], a->orientation[5], base_name(s->path), s->rows, s->cols,
                                  s->spacing[0], s->spacing[1], s->orientation[0], s->orientation[1],
                                  s->orientation[2], s->orientation[3], s->orientation[4], s->orientation[5]);
    }
    const double *r = a->orientation, *c = a->orientation + 3;
    if (fabs(dot3(r, r) - 1) > 1e-3 || fabs(dot3(c, c) - 1) > 1e-3 || fabs(dot3(r, c)) > 1e-3)
        return swin_error_set(err, SWIN_ERR_FORMAT,
                              "%s: ImageOrientationPatient %g\\%g\\%g\\%g\\%g\\%g is not two orthogonal unit vectors",
                              a->path, r[0], r[1], r[2], c[0], c[1], c[2]);
    return SWIN_OK;
}

/* Sorted along the normal; one position per slice, no shear, even steps. */
static swin_status check_stack(struct swin_dcm_slice *sl, int n, swin_error *err)
{
    if (n < 2)
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: a series of one slice is not a volume", sl[0].path);
    const double *r = sl[0].orientation, *c = sl[0].orientation + 3;
    double nrm[3];
    cross3(r, c, nrm);
    struct sort_item *it = malloc((size_t)n * sizeof *it);
    struct swin_dcm_slice *sorted = malloc((size_t)n * sizeof *sorted);
    if (!it || !sorted) {
        free(it);
        free(sorted);
        return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for %d slices", n);
    }
    for (int i = 0; i < n; i++) it[i] = (struct sort_item){dot3(sl[i].position, nrm), i};
    qsort(it, (size_t)n, sizeof *it, cmp_item);
    for (int i = 0; i < n; i++) sorted[i] = sl[it[i].i];
    memcpy(sl, sorted, (size_t)n * sizeof *sl);
    free(sorted);
    swin_status st = SWIN_OK;
    /* the usual gap: the median of the gaps between neighbours */
    double *gaps = malloc((size_t)(n - 1) * sizeof *gaps);
    if (!gaps) {
        free(it);
        return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for %d slices", n);
    }
    for (int k = 0; k + 1 < n; k++) gaps[k] = it[k + 1].d - it[k].d;
    qsort(gaps, (size_t)(n - 1), sizeof *gaps, cmp_double);
    double step = gaps[(n - 1) / 2];
    free(gaps);
    for (int k = 0; k + 1 < n && !st; k++) {
        double gap = it[k + 1].d - it[k].d;
        if (gap < 1e-3)
            st = swin_error_set(err, SWIN_ERR_FORMAT,
                                "%s and %s lie at the same position (%.3f mm along the normal): duplicate slices "
                                "(two acquisitions or reconstructions in one series?); remove one of them",
                                base_name(sl[k].path), base_name(sl[k + 1].path), it[k].d);
        else if (fabs(gap - step) > fmax(1e-2, 1e-2 * step))
            st = swin_error_set(err, SWIN_ERR_FORMAT,
                                "uneven slice spacing: %.4g mm between %s (%.3f mm) and %s (%.3f mm) where the "
                                "other slices are %.4g mm apart: %s; swinrun reads evenly spaced series",
                                gap, base_name(sl[k].path), it[k].d, base_name(sl[k + 1].path), it[k + 1].d, step,
                                gap > 1.5 * step ? "a missing slice" : "slices of another spacing");
    }
    /* in-plane offset of every position from the first: a sheared (tilted) stack */
    for (int k = 1; k < n && !st; k++) {
        double dv[3] = {sl[k].position[0] - sl[0].position[0], sl[k].position[1] - sl[0].position[1],
                        sl[k].position[2] - sl[0].position[2]};
        double off = hypot(dot3(dv, r), dot3(dv, c));
        if (off > 0.05) /* mm: more than the rounding of positions written with 2 decimals */
            st = swin_error_set(err, SWIN_ERR_FORMAT,
                                "%s is shifted %.3f mm in its own plane from %s: the slices are not stacked along "
                                "their normal (gantry tilt or a sheared stack); resample the series first",
                                base_name(sl[k].path), off, base_name(sl[0].path));
    }
    free(it);
    return st;
}

static void make_affine(struct swin_dcm_series *s)
{
    const struct swin_dcm_slice *a = &s->slices[0], *z = &s->slices[s->dim[2] - 1];
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

void swin_dcm_series_free(struct swin_dcm_series *s)
{
    if (!s) return;
    free(s->slices);
    free(s->order);
    free(s->hu);
    memset(s, 0, sizeof *s);
}

swin_status swin_dcm_series_read(const char *const *paths, int npaths, int with_pixels, struct swin_dcm_series *s,
                                 swin_error *err)
{
    memset(s, 0, sizeof *s);
    swin_status st = swin_dcm_init(err);
    if (st) return st;
    struct name_list l = {0};
    for (int i = 0; i < npaths && !st; i++) {
        struct stat sb;
        if (stat(paths[i], &sb) != 0) st = swin_error_set(err, SWIN_ERR_IO, "%s: %s", paths[i], strerror(errno));
        else if (S_ISDIR(sb.st_mode)) st = list_dir(paths[i], &l, err);
        else st = push(&l, NULL, paths[i], err);
    }
    struct swin_dcm_slice *sl = NULL;
    int n = 0;
    if (!st && l.n == 0) st = swin_error_set(err, SWIN_ERR_FORMAT, "%s: no files", npaths ? paths[0] : "(none)");
    if (!st && !(sl = malloc((size_t)l.n * sizeof *sl)))
        st = swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for %d files", l.n);
    for (int i = 0; i < l.n && !st; i++) {
        bool is_dicom;
        st = swin_dcm_read_header(l.v[i], &sl[n], &is_dicom, err);
        if (!st && is_dicom) n++;
    }
    if (!st && n == 0)
        st = swin_error_set(err, SWIN_ERR_FORMAT, "%s: no DICOM file among %d file%s", paths[0], l.n,
                            l.n == 1 ? "" : "s");
    for (int i = 1; i < n && !st; i++)
        if (strcmp(sl[i].series_uid, sl[0].series_uid)) st = several_series(sl, n, err);
    if (!st) st = check_geometry(sl, n, err);
    if (!st) st = check_stack(sl, n, err);
    for (int i = 0; i < l.n; i++) free(l.v[i]);
    free(l.v);
    if (st) {
        free(sl);
        return st;
    }
    s->slices = sl;
    s->dim[0] = sl[0].cols, s->dim[1] = sl[0].rows, s->dim[2] = n;
    make_affine(s);
    if (!(s->order = malloc((size_t)n * sizeof *s->order))) {
        swin_dcm_series_free(s);
        return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for %d slices", n);
    }
    for (int k = 0; k < n; k++) s->order[k] = &sl[k];
    if (!with_pixels) return SWIN_OK;
    size_t plane = (size_t)s->dim[0] * (size_t)s->dim[1];
    if (!(s->hu = malloc(plane * (size_t)n * sizeof *s->hu))) {
        swin_dcm_series_free(s);
        return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for %lld x %lld x %d voxels",
                              (long long)s->dim[0], (long long)s->dim[1], n);
    }
    for (int k = 0; k < n; k++)
        if ((st = swin_dcm_read_pixels(&sl[k], s->hu + plane * (size_t)k, err))) {
            swin_dcm_series_free(s);
            return st;
        }
    return SWIN_OK;
}
