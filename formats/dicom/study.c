/* A study's series and the one a run reads (study.h). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/dicom/files.h"
#include "core/settings.h"
#include "formats/dicom/study.h"

static const struct {
    const char *uid, *name;
} class_names[] = {
    {"1.2.840.10008.5.1.4.1.1.2", "CT Image Storage"},
    {"1.2.840.10008.5.1.4.1.1.2.1", "Enhanced CT Image Storage"},
    {"1.2.840.10008.5.1.4.1.1.2.2", "Legacy Converted Enhanced CT"},
    {"1.2.840.10008.5.1.4.1.1.4", "MR Image Storage"},
    {"1.2.840.10008.5.1.4.1.1.4.1", "Enhanced MR Image Storage"},
    {"1.2.840.10008.5.1.4.1.1.128", "PET Image Storage"},
    {"1.2.840.10008.5.1.4.1.1.20", "NM Image Storage"},
    {"1.2.840.10008.5.1.4.1.1.7", "Secondary Capture"},
    {"1.2.840.10008.5.1.4.1.1.88.11", "Basic Text SR"},
    {"1.2.840.10008.5.1.4.1.1.88.22", "Enhanced SR"},
    {"1.2.840.10008.5.1.4.1.1.88.33", "Comprehensive SR"},
    {"1.2.840.10008.5.1.4.1.1.88.59", "Key Object Selection"},
    {"1.2.840.10008.5.1.4.1.1.88.67", "X-Ray Radiation Dose SR"},
    {"1.2.840.10008.5.1.4.1.1.481.2", "RT Dose"},
    {"1.2.840.10008.5.1.4.1.1.481.3", "RT Structure Set"},
    {"1.2.840.10008.5.1.4.1.1.481.5", "RT Plan"},
    {"1.2.840.10008.5.1.4.1.1.11.1", "Grayscale Softcopy Presentation State"},
    {"1.2.840.10008.5.1.4.1.1.66.4", "Segmentation"},
    {"1.2.840.10008.5.1.4.1.1.104.1", "Encapsulated PDF"},
};

/* The families of SOP classes that are no slice of a volume: a prefix ending in '.' takes
 * the family, else the class and its sub-classes. */
static const char *const non_image_classes[] = {
    "1.2.840.10008.5.1.4.1.1.88.",  /* structured reports: dose reports, key objects */
    "1.2.840.10008.5.1.4.1.1.481.", /* RT Dose, RT Structure Set, RT Plan, RT Image ... */
    "1.2.840.10008.5.1.4.1.1.7",    /* secondary captures */
    "1.2.840.10008.5.1.4.1.1.11.",  /* presentation states */
    "1.2.840.10008.5.1.4.1.1.66",   /* raw data, registrations, SEG, surfaces */
    "1.2.840.10008.5.1.4.1.1.104.", /* encapsulated PDF, CDA */
    "1.2.840.10008.5.1.4.1.1.9.",   /* waveforms */
    "1.2.840.10008.1.3.10",         /* a DICOMDIR */
};

static const char *class_name(const char *uid)
{
    for (size_t i = 0; i < sizeof class_names / sizeof *class_names; i++)
        if (!strcmp(uid, class_names[i].uid)) return class_names[i].name;
    return uid[0] ? uid : "(no SOP class)";
}

static int is_ct_class(const char *uid)
{
    return !strcmp(uid, SWIN_CT_IMAGE_STORAGE) || !strcmp(uid, "1.2.840.10008.5.1.4.1.1.2.1") ||
           !strcmp(uid, "1.2.840.10008.5.1.4.1.1.2.2");
}

static int is_non_image_class(const char *uid)
{
    for (size_t i = 0; i < sizeof non_image_classes / sizeof *non_image_classes; i++) {
        const char *p = non_image_classes[i];
        size_t n = strlen(p);
        if (!strncmp(uid, p, n) && (p[n - 1] == '.' || uid[n] == 0 || uid[n] == '.')) return 1;
    }
    return 0;
}

static int has_value(const char *multi, const char *value)
{
    size_t n = strlen(value);
    for (const char *p = multi; *p;) {
        const char *end = strchr(p, '\\');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        while (len && p[len - 1] == ' ') len--;
        while (len && *p == ' ') p++, len--;
        if (len == n && !strncmp(p, value, n)) return 1;
        if (!end) break;
        p = end + 1;
    }
    return 0;
}

static enum swin_dcm_kind kind_of(const struct swin_dcm_slice *s)
{
    if (s->rows <= 0 || s->cols <= 0 || is_non_image_class(s->sop_class)) return SWIN_DCM_NON_IMAGE;
    if (has_value(s->image_type, "LOCALIZER")) return SWIN_DCM_LOCALIZER;
    return SWIN_DCM_IMAGE;
}

/* axial / coronal / sagittal when the normal lies within 30 degrees of that axis. */
static void orientation_of(const struct swin_dcm_slice *s, char *label, size_t n, double *off_axis)
{
    const double *r = s->orientation, *c = s->orientation + 3;
    double nrm[3] = {r[1] * c[2] - r[2] * c[1], r[2] * c[0] - r[0] * c[2], r[0] * c[1] - r[1] * c[0]};
    double len = sqrt(nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2]);
    *off_axis = 0;
    if (!s->has_orientation || !(len > 0.5)) {
        snprintf(label, n, "%s", "unknown");
        return;
    }
    int m = 0;
    for (int x = 1; x < 3; x++)
        if (fabs(nrm[x]) > fabs(nrm[m])) m = x;
    *off_axis = acos(fmin(1.0, fabs(nrm[m]) / len)) * 180.0 / M_PI;
    static const char *const axis[3] = {"sagittal", "coronal", "axial"};
    snprintf(label, n, "%s", *off_axis <= 30.0 ? axis[m] : "oblique");
}

static int same_orientation(const struct swin_dcm_slice *a, const struct swin_dcm_slice *b)
{
    for (int i = 0; i < 6; i++)
        if (fabs(a->orientation[i] - b->orientation[i]) > 1e-3) return 0;
    return a->has_orientation == b->has_orientation;
}

/* The rows' attributes from their files: counts, the class most of the images have, and
 * orientation, thickness and ImageType of the first image (of the first file without one). */
static swin_status summarise(struct swin_dcm_study *s, swin_error *err)
{
    struct swin_series_list *l = &s->list;
    int *first = malloc((size_t)l->n * sizeof *first);
    if (!first) return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for %d series", l->n);
    for (int r = 0; r < l->n; r++) first[r] = -1;
    for (int i = 0; i < s->n; i++) {
        struct swin_series_row *row = &l->rows[s->row[i]];
        row->files++;
        if (s->kind[i] == SWIN_DCM_LOCALIZER) row->localizers++;
        if (s->kind[i] == SWIN_DCM_NON_IMAGE) row->non_images++;
        if (s->kind[i] == SWIN_DCM_IMAGE) {
            row->slices += s->nframes[i];
            if (first[s->row[i]] < 0) first[s->row[i]] = i;
        }
    }
    for (int r = 0; r < l->n; r++) {
        struct swin_series_row *row = &l->rows[r];
        int f = first[r], best = 0;
        if (f < 0) { /* no image: the first file speaks for the series */
            for (int i = 0; i < s->n && f < 0; i++)
                if (s->row[i] == r) f = i;
        }
        const struct swin_dcm_slice *a = &s->files[f];
        const char *cls = a->sop_class, *seen[16];
        int counts[16], nseen = 0;
        for (int i = 0; i < s->n; i++) { /* the class most of its images have */
            if (s->row[i] != r || (row->slices && s->kind[i] != SWIN_DCM_IMAGE)) continue;
            int j = 0;
            while (j < nseen && strcmp(seen[j], s->files[i].sop_class)) j++;
            if (j == nseen && nseen == 16) continue;
            if (j == nseen) seen[nseen] = s->files[i].sop_class, counts[nseen++] = 0;
            if (++counts[j] > best) best = counts[j], cls = seen[j];
        }
        snprintf(row->uid, sizeof row->uid, "%s", a->series_uid);
        snprintf(row->description, sizeof row->description, "%s", a->series_description);
        snprintf(row->modality, sizeof row->modality, "%s", a->modality);
        snprintf(row->image_type, sizeof row->image_type, "%s", a->image_type);
        snprintf(row->sop_class, sizeof row->sop_class, "%s", cls);
        snprintf(row->sop_class_name, sizeof row->sop_class_name, "%s", class_name(cls));
        row->number = a->series_number;
        row->thickness_mm = a->slice_thickness;
        if (s->kind[f] == SWIN_DCM_NON_IMAGE) continue;
        orientation_of(a, row->orientation, sizeof row->orientation, &row->off_axis_deg);
        for (int i = 0; i < s->n; i++)
            if (s->row[i] == r && s->kind[i] == s->kind[f] && !same_orientation(&s->files[i], a))
                snprintf(row->orientation, sizeof row->orientation, "%s", "mixed");
    }
    free(first);
    return SWIN_OK;
}

static int all_digits(const char *p)
{
    if (!*p) return 0;
    for (; *p; p++)
        if (!isdigit((unsigned char)*p)) return 0;
    return 1;
}

static void choose_asked(struct swin_series_list *l, const char *pick)
{
    int found = -1, by_number = 0;
    for (int r = 0; r < l->n && found < 0; r++)
        if (!strcmp(l->rows[r].uid, pick)) found = r;
    if (found < 0 && all_digits(pick) && strlen(pick) < 10)
        for (int r = 0; r < l->n; r++)
            if (l->rows[r].number == atoi(pick)) by_number++, found = found < 0 ? r : found;
    if (found < 0) {
        snprintf(l->reason, sizeof l->reason, "no series has the UID or number %s", pick);
        return;
    }
    if (by_number > 1) {
        snprintf(l->reason, sizeof l->reason, "%d series have the number %s: ask for one by its UID", by_number,
                 pick);
        return;
    }
    if (l->rows[found].slices == 0) {
        snprintf(l->reason, sizeof l->reason, "series %s holds no image to segment (%d localizer%s, %d non-image)",
                 pick, l->rows[found].localizers, l->rows[found].localizers == 1 ? "" : "s",
                 l->rows[found].non_images);
        return;
    }
    l->chosen = found;
    snprintf(l->reason, sizeof l->reason, "asked for by its %s", by_number ? "number" : "UID");
}

/* The only CT series; else the axial CT series (every CT series when none is axial) with the
 * most slices, unless two have as many. */
static void choose_default(struct swin_series_list *l)
{
    int ct = 0, axial = 0;
    for (int r = 0; r < l->n; r++) {
        const struct swin_series_row *row = &l->rows[r];
        if (!is_ct_class(row->sop_class) || row->slices < 1) continue;
        ct++;
        axial += !strcmp(row->orientation, "axial");
    }
    if (ct == 0) {
        snprintf(l->reason, sizeof l->reason,
                 "no CT series (CT Image Storage images, not localizers) among its %d series: swinrun segments CT",
                 l->n);
        return;
    }
    int best = -1, ties = 0, second = 0;
    for (int r = 0; r < l->n; r++) {
        const struct swin_series_row *row = &l->rows[r];
        if (!is_ct_class(row->sop_class) || row->slices < 1 || (axial && strcmp(row->orientation, "axial"))) continue;
        if (best < 0 || row->slices > l->rows[best].slices) {
            second = best < 0 ? 0 : l->rows[best].slices;
            best = r, ties = 1;
        } else if (row->slices == l->rows[best].slices) {
            ties++;
        } else if (row->slices > second) {
            second = row->slices;
        }
    }
    const char *kind = axial ? "axial CT" : "CT";
    if (ties > 1) {
        snprintf(l->reason, sizeof l->reason, "ambiguous: %d %s series of %d slices each", ties, kind,
                 l->rows[best].slices);
        return;
    }
    l->chosen = best;
    if (ct == 1) snprintf(l->reason, sizeof l->reason, "the only CT series");
    else
        snprintf(l->reason, sizeof l->reason, "the %s series with the most slices (%d; next %d) of %d CT series",
                 kind, l->rows[best].slices, second, ct);
}

swin_status swin_dcm_study_read(const char *const *paths, int npaths, const char *pick, struct swin_dcm_study *s,
                                swin_error *err)
{
    memset(s, 0, sizeof *s);
    s->list.chosen = -1;
    swin_status st = swin_dcm_init(err);
    if (st) return st;
    struct swin_dcm_files l;
    if ((st = swin_dcm_files_collect(paths, npaths, &l, err))) return st;
    if (l.n == 0) st = swin_error_set(err, SWIN_ERR_FORMAT, "%s: no files", npaths ? paths[0] : "(none)");
    if (!st && (!(s->files = malloc((size_t)l.n * sizeof *s->files)) || !(s->row = malloc((size_t)l.n * sizeof *s->row)) ||
                !(s->kind = malloc((size_t)l.n)) || !(s->frames = calloc((size_t)l.n, sizeof *s->frames)) ||
                !(s->nframes = malloc((size_t)l.n * sizeof *s->nframes))))
        st = swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for %d files", l.n);
    for (int i = 0; i < l.n && !st; i++) {
        bool is_dicom;
        struct swin_dcm_slice *fs = NULL;
        int nf = 0;
        st = swin_dcm_read_header(l.v[i], &fs, &nf, &is_dicom, err);
        if (!st && is_dicom) {
            s->files[s->n] = fs[0];
            s->frames[s->n] = fs;
            s->nframes[s->n++] = nf;
        } else {
            free(fs);
        }
    }
    s->list.files = l.n;
    s->list.not_dicom = l.n - s->n;
    if (!st && s->n == 0)
        st = swin_error_set(err, SWIN_ERR_FORMAT, "%s: no DICOM file among %d file%s", paths[0], l.n,
                            l.n == 1 ? "" : "s");
    swin_dcm_files_free(&l);
    int cap = 0;
    for (int i = 0; i < s->n && !st; i++) {
        s->kind[i] = (unsigned char)kind_of(&s->files[i]);
        int r = 0;
        while (r < s->list.n && strcmp(s->files[s->list.rows[r].files].series_uid, s->files[i].series_uid)) r++;
        if (r == s->list.n) {
            if (s->list.n == cap) {
                cap = cap ? 2 * cap : 8;
                struct swin_series_row *v = realloc(s->list.rows, (size_t)cap * sizeof *v);
                if (!v) {
                    st = swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for the series list");
                    break;
                }
                s->list.rows = v;
            }
            /* files holds the row's first file until summarise counts them */
            s->list.rows[s->list.n++] = (struct swin_series_row){.files = i};
        }
        s->row[i] = r;
    }
    if (!st) {
        for (int r = 0; r < s->list.n; r++) s->list.rows[r].files = 0;
        st = summarise(s, err);
    }
    if (st) {
        swin_dcm_study_free(s);
        return st;
    }
    if (pick) choose_asked(&s->list, pick);
    else choose_default(&s->list);
    return SWIN_OK;
}

swin_status swin_dcm_study_refuse(const struct swin_dcm_study *s, const char *input, swin_error *err)
{
    const struct swin_series_list *l = &s->list;
    char list[320] = "", one[160];
    size_t len = 0;
    int r = 0;
    for (; r < l->n; r++) {
        const struct swin_series_row *w = &l->rows[r];
        int k = snprintf(one, sizeof one, "%s%s (number %d, %s, %d slices)", r ? "; " : "", w->uid, w->number,
                         w->sop_class_name, w->slices);
        if (k < 0 || len + (size_t)k + 20 > sizeof list) break;
        memcpy(list + len, one, (size_t)k + 1);
        len += (size_t)k;
    }
    if (r < l->n) snprintf(list + len, sizeof list - len, "; and %d more", l->n - r);
    return swin_error_set(err, SWIN_ERR_FORMAT,
                          "%s: %s; its series: %s; pick one with %s UID|NUMBER (swinrun dicom-ls lists them)",
                          input, l->reason, list, swin_setting(SWIN_SETTING_SERIES));
}

static size_t add(char *what, size_t n, size_t len, int count, const char *one, const char *many)
{
    if (!count || len >= n) return len;
    return len + (size_t)snprintf(what + len, n - len, "%s%d %s", len ? ", " : "", count, count == 1 ? one : many);
}

int swin_dcm_study_skipped(const struct swin_dcm_study *s, char *what, size_t n)
{
    const struct swin_series_list *l = &s->list;
    what[0] = 0;
    if (l->chosen < 0) return 0;
    const struct swin_series_row *c = &l->rows[l->chosen];
    size_t len = add(what, n, 0, c->localizers, "localizer image", "localizer images");
    int first_non_image = -1;
    for (int i = 0; i < s->n && first_non_image < 0; i++)
        if (s->row[i] == l->chosen && s->kind[i] == SWIN_DCM_NON_IMAGE) first_non_image = i;
    len = add(what, n, len, c->non_images, "non-image object", "non-image objects");
    if (first_non_image >= 0 && len < n)
        len += (size_t)snprintf(what + len, n - len, " (%s%s)", class_name(s->files[first_non_image].sop_class),
                                c->non_images > 1 ? ", ..." : "");
    if (len && len < n) len += (size_t)snprintf(what + len, n - len, " in the series");
    int others = s->n - c->files;
    if (others && len < n)
        snprintf(what + len, n - len, "%s%d file%s of %d other series", len ? "; " : "", others, others == 1 ? "" : "s",
                 l->n - 1);
    return c->localizers + c->non_images + others;
}

void swin_dcm_study_take_list(struct swin_dcm_study *s, struct swin_series_list *out)
{
    *out = s->list;
    memset(&s->list, 0, sizeof s->list);
}

void swin_dcm_study_free(struct swin_dcm_study *s)
{
    for (int i = 0; s->frames && i < s->n; i++) free(s->frames[i]);
    free(s->frames);
    free(s->nframes);
    free(s->files);
    free(s->row);
    free(s->kind);
    free(s->list.rows);
    memset(s, 0, sizeof *s);
}
