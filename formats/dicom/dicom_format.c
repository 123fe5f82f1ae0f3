/* DICOM as a format (formats/format.h): a CT series (a folder, or its files) in; out a NIfTI
 * label map on the series' grid, or a DICOM SEG, and an RT Structure Set, published together.
 * The intensities stay for the statistics; the label map is held whole, as the SEG and the
 * RT Structure Set need it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/clock.h"
#include "core/version.h"
#include "fileio/atomic_file.h"
#include "formats/format.h"
#include "formats/dicom/classes.h"
#include "formats/dicom/series.h"
#include "formats/dicom/study.h"
#include "formats/nifti/nifti_io.h"

static int is_dcm_name(const char *path)
{
    size_t n = strlen(path);
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return n > 4 && strlen(base) > 4 && !strcasecmp(path + n - 4, ".dcm");
}

/* A NIfTI header for the series' grid (sform and qform: the affine, scanner coordinates). */
static nifti_image *grid_header(const struct swin_dcm_series *s)
{
    int64_t dims[8] = {3, s->dim[0], s->dim[1], s->dim[2], 1, 1, 1, 1};
    nifti_image *n = nifti_make_new_nim(dims, DT_UINT8, 0);
    if (!n) return NULL;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) n->sto_xyz.m[i][j] = s->affine[i][j];
    n->sform_code = n->qform_code = NIFTI_XFORM_SCANNER_ANAT;
    double qfac;
    nifti_dmat44_to_quatern(n->sto_xyz, &n->quatern_b, &n->quatern_c, &n->quatern_d, &n->qoffset_x, &n->qoffset_y,
                            &n->qoffset_z, &n->dx, &n->dy, &n->dz, &qfac);
    n->qfac = qfac;
    n->pixdim[1] = n->dx, n->pixdim[2] = n->dy, n->pixdim[3] = n->dz, n->pixdim[0] = qfac;
    n->qto_xyz = nifti_quatern_to_dmat44(n->quatern_b, n->quatern_c, n->quatern_d, n->qoffset_x, n->qoffset_y,
                                         n->qoffset_z, n->dx, n->dy, n->dz, n->qfac);
    n->xyz_units = NIFTI_UNITS_MM;
    n->nifti_type = NIFTI_FTYPE_NIFTI1_1;
    return n;
}

/* The label map (uint8, or uint16 when wide), or with masks (labels are bit masks of that many
 * channels) a 4D uint8 file of one 0/1 volume per channel, as NIfTI input writes them. */
static swin_status write_nifti(const char *path, const struct swin_dcm_series *s, const uint16_t *labels, int wide,
                               int masks, int threads, struct swin_nifti_writer **done, swin_error *err)
{
    nifti_image *like = grid_header(s);
    if (!like) return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
    struct swin_nifti_writer *w;
    swin_status st = swin_nifti_writer_open(&w, path, like, wide ? DT_UINT16 : DT_UINT8, masks ? masks : 1,
                                            NIFTI_INTENT_LABEL,
                                            masks ? "swinrun masks (one per channel)" : "swinrun labels", threads, err);
    nifti_image_free(like);
    if (st) return st;
    size_t plane = (size_t)(s->dim[0] * s->dim[1]);
    uint8_t *b = wide ? NULL : malloc(plane);
    if (!wide && !b) st = swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
    for (int c = 0; c < (masks ? masks : 1) && !st; c++)
        for (int64_t k = 0; k < s->dim[2] && !st; k++) {
            const uint16_t *p = labels + plane * (size_t)k;
            if (wide) {
                st = swin_nifti_writer_write(w, p, plane * 2, err);
            } else {
                for (size_t i = 0; i < plane; i++) b[i] = (uint8_t)(masks ? (p[i] >> c) & 1 : p[i]);
                st = swin_nifti_writer_write(w, b, plane, err);
            }
        }
    free(b);
    if (!st) st = swin_nifti_writer_finish(w, err);
    if (st) {
        swin_nifti_writer_abort(w);
        return st;
    }
    *done = w;
    return SWIN_OK;
}

typedef swin_status (*dcm_writer)(const struct swin_dcm_ref *, const struct swin_dcm_content *, const char *,
                                  swin_error *);

/* Written whole under the temporary name of af (left open by swin_atomic_file_open and closed by
 * swin_atomic_file_finish, which also syncs what DCMTK wrote to the same file). */
static swin_status write_dcm(struct swin_atomic_file *af, const char *path, dcm_writer fn, const struct swin_dcm_ref *ref,
                             const struct swin_dcm_content *c, swin_error *err)
{
    swin_status st = swin_atomic_file_open(af, path, err);
    if (st) return st;
    if ((st = fn(ref, c, af->tmp, err))) {
        swin_atomic_file_abort(af);
        return st;
    }
    return swin_atomic_file_finish(af, err);
}

static swin_status dicom_check(const char *const *paths, int npaths, const char *out, const swin_segment_params *p,
                               swin_error *err)
{
    if (!out) return swin_error_set(err, SWIN_ERR_ARG, "an output path is required");
    if (!swin_nifti_output_name_ok(out) && !is_dcm_name(out))
        return swin_error_set(err, SWIN_ERR_ARG,
                              "%s: from a DICOM series swinrun writes a NIfTI label map (.nii, .nii.gz) or a DICOM "
                              "SEG (.dcm)",
                              out);
    if (p->probabilities_path || p->preview_path)
        return swin_error_set(err, SWIN_ERR_ARG,
                              "probabilities and preview are written for NIfTI input only: convert the series to "
                              "NIfTI (swinrun CT_DIR/ ct.nii.gz is not that: it writes labels)");
    if (p->rtstruct_path && !is_dcm_name(p->rtstruct_path))
        return swin_error_set(err, SWIN_ERR_ARG, "%s: the RT Structure Set's name must end in .dcm", p->rtstruct_path);
    if (p->rtstruct_path && !strcmp(p->rtstruct_path, out))
        return swin_error_set(err, SWIN_ERR_ARG, "%s: the RT Structure Set and the main output are the same file", out);
    if (p->seg_type != SWIN_SEG_BINARY && p->seg_type != SWIN_SEG_LABELMAP)
        return swin_error_set(err, SWIN_ERR_ARG, "seg_type %d: SWIN_SEG_BINARY or SWIN_SEG_LABELMAP", (int)p->seg_type);
    if (p->activation == SWIN_ACTIVATION_SIGMOID && p->seg_type == SWIN_SEG_LABELMAP && is_dcm_name(out))
        return swin_error_set(err, SWIN_ERR_ARG,
                              "a multi-label run's masks overlap, and a label map SEG holds one segment per pixel: "
                              "write the binary SEG (the default)");
    if (p->dicom_nclasses < 0 || (p->dicom_nclasses > 0 && !p->dicom_classes))
        return swin_error_set(err, SWIN_ERR_ARG, "dicom_classes: %d classes and a %s table", p->dicom_nclasses,
                              p->dicom_classes ? "" : "NULL");
    swin_status st = swin_atomic_file_check_dir(out, is_dcm_name(out) ? "DICOM SEG" : "label map", err);
    if (!st && p->rtstruct_path) st = swin_atomic_file_check_dir(p->rtstruct_path, "RT Structure Set", err);
    return st;
}

struct dicom_outputs {
    const char *out, *rtstruct;
    const swin_segment_params *p;
    const struct swin_dcm_series *s;
    uint16_t *labels; /* the whole label map on the series' grid (bit masks when masks) */
    size_t plane_n;
    int classes, threads;
    int masks;        /* overlapping masks (swin_mask_channels): label c + 1 is channel c's mask */
    struct swin_nifti_writer *nifti;
    struct swin_atomic_file seg, rt;
    bool seg_open, rt_open;
    int present;
};

static swin_status dicom_read(const char *const *paths, int npaths, const char *out, const swin_segment_params *p,
                              int threads, struct swin_format_input *in, swin_segment_report *rep, swin_error *err)
{
    rep->dicom_input = true;
    struct swin_dcm_series *s = calloc(1, sizeof *s);
    if (!s) return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
    swin_status st = swin_dcm_series_read(paths, npaths, p->dicom_series, threads, s, err);
    if (!st && (is_dcm_name(out) || p->rtstruct_path) && (st = swin_dcm_series_check_references(s, err)))
        swin_dcm_series_free(s);
    const struct swin_dcm_choice *c = &s->choice;
    rep->dicom_series_found = c->nseries;
    rep->dicom_skipped = c->skipped;
    snprintf(rep->dicom_series_uid, sizeof rep->dicom_series_uid, "%s", c->uid);
    snprintf(rep->dicom_series_reason, sizeof rep->dicom_series_reason, "%s", c->reason);
    snprintf(rep->dicom_skipped_what, sizeof rep->dicom_skipped_what, "%s", c->skipped_what);
    rep->dicom_tilt_deg = s->tilt_deg;
    rep->dicom_slices = s->nslices;
    rep->dicom_planes_filled = s->grid.filled;
    if (st) {
        free(s);
        return st;
    }
    *in = (struct swin_format_input){.name = paths[0], .channels = 1, .hu = s->hu, .state = s};
    memcpy(in->dim, s->dim, sizeof in->dim);
    memcpy(in->affine, s->affine, sizeof in->affine);
    in->kept_bytes = (size_t)(s->dim[0] * s->dim[1] * s->dim[2]) * sizeof *s->hu; /* kept for the statistics */
    /* an uneven stack whose slices are not all on planes: its slices and the grid at once */
    size_t slices_bytes = (size_t)(s->dim[0] * s->dim[1]) * (size_t)s->nslices * sizeof *s->hu;
    in->read_peak = in->kept_bytes + (s->grid.plane_of && !s->grid.on_planes ? slices_bytes : 0);
    in->hu_kept = true;
    return SWIN_OK;
}

static void dicom_release(struct swin_format_input *in)
{
    /* the intensities stay until the statistics are done (hu_plane) */
}

static swin_status dicom_hu_plane(struct swin_format_input *in, int64_t k, const float **plane, swin_error *err)
{
    const struct swin_dcm_series *s = in->state;
    *plane = s->hu + (size_t)k * (size_t)(s->dim[0] * s->dim[1]);
    return SWIN_OK;
}

static void dicom_discard(void *outputs)
{
    struct dicom_outputs *o = outputs;
    if (!o) return;
    if (o->nifti) swin_nifti_writer_abort(o->nifti);
    if (o->seg_open) swin_atomic_file_abort(&o->seg);
    if (o->rt_open) swin_atomic_file_abort(&o->rt);
    free(o->labels);
    free(o);
}

static swin_status dicom_open_outputs(struct swin_format_input *in, const char *out, const swin_segment_params *p,
                                      int classes, int threads, void **outputs, swin_error *err)
{
    const struct swin_dcm_series *s = in->state;
    struct dicom_outputs *o = calloc(1, sizeof *o);
    if (!o) return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
    *o = (struct dicom_outputs){.out = out, .rtstruct = p->rtstruct_path, .p = p, .s = s, .classes = classes,
                                .threads = threads, .plane_n = (size_t)(s->dim[0] * s->dim[1]),
                                .masks = swin_mask_channels(p->activation, classes)};
    if (!(o->labels = malloc(o->plane_n * (size_t)s->dim[2] * sizeof *o->labels))) {
        free(o);
        return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for the label map");
    }
    *outputs = o;
    return SWIN_OK;
}

static swin_status dicom_put_labels(void *outputs, int64_t k, const uint16_t *plane, swin_error *err)
{
    struct dicom_outputs *o = outputs;
    memcpy(o->labels + (size_t)k * o->plane_n, plane, o->plane_n * sizeof *plane);
    return SWIN_OK;
}

/* The labels present, in label order, are the SEG's segments and the RTSTRUCT's ROIs. */
/* Label l's class from the channel names (one per line, channel 0 first: a bundle's
 * channel_def): channel l's name; with overlapping masks channel l - 1's (no channel is the
 * background); for a one-channel (sigmoid) model the last name given (channel_def may name the
 * background as channel 0); "Label N" where none is given. */
static swin_dicom_class class_of_channel(const char *names, int channels, int masks, int label, char out[64])
{
    int want = masks ? label - 1 : label, n = 0;
    for (const char *c = names; *c; c++) n += *c == '\n';
    if (channels == 1) want = n;
    const char *line = names;
    for (int ch = 0; ch < want && line; ch++) {
        line = strchr(line, '\n');
        if (line) line++;
    }
    if (!line) return swin_dicom_class_for(NULL, 0, label, out);
    const char *end = strchr(line, '\n');
    return swin_dicom_class_named(line, end ? (size_t)(end - line) : strlen(line), label, out);
}

/* Marks seen[l] for every label l <= classes among n; with masks returns the union of the bit
 * masks instead (bit c: channel c). */
static unsigned mark_labels(const uint16_t *labels, size_t n, int masks, int classes, unsigned char *seen)
{
    unsigned any = 0;
    for (size_t i = 0; i < n; i++)
        if (masks)
            any |= labels[i];
        else if (labels[i] <= classes)
            seen[labels[i]] = 1;
    return any;
}

static swin_status dicom_finish(void *outputs, swin_segment_report *rep, swin_error *err)
{
    struct dicom_outputs *o = outputs;
    struct swin_dcm_series *s = (struct swin_dcm_series *)o->s;
    free(s->hu); /* the statistics are done: the outputs need only the geometry */
    s->hu = NULL;
    size_t n = o->plane_n * (size_t)s->dim[2];
    int classes = o->classes > 0 ? o->classes : 1;
    unsigned char *seen = calloc((size_t)classes + 1, 1);
    swin_dicom_class *present = calloc((size_t)classes + 1, sizeof *present);
    char (*names)[64] = calloc((size_t)classes + 1, sizeof *names);
    swin_status st = SWIN_OK;
    if (!seen || !present || !names) st = swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
    int np = 0;
    bool dcm_outputs = is_dcm_name(o->out) || o->rtstruct;
    bool grid_not_slices = dcm_outputs && s->grid.plane_of; /* the DICOM outputs cover only the slices' planes */
    if (!st) {
        /* the labels the SEG and RTSTRUCT will hold: those on the slices (an organ found only on
         * an interpolated plane gets no segment); a NIfTI label map holds the whole grid */
        unsigned any = 0;
        if (grid_not_slices)
            for (int k = 0; k < s->nslices; k++)
                any |= mark_labels(o->labels + o->plane_n * (size_t)s->grid.plane_of[k], o->plane_n, o->masks,
                                   classes, seen);
        else
            any = mark_labels(o->labels, n, o->masks, classes, seen);
        for (int c = 0; c < o->masks; c++) seen[c + 1] = (any >> c) & 1;
        int nt = o->p->dicom_nclasses;
        const swin_dicom_class *table = o->p->dicom_classes;
        const char *channels = table ? NULL : o->p->channel_names;
        /* the default names are those of softmax labels: with masks no channel is the background */
        if (!table && !channels && !o->masks) table = swin_dicom_default_classes(classes, &nt);
        for (int l = 1; l <= classes; l++)
            if (seen[l]) {
                present[np] = channels ? class_of_channel(channels, classes, o->masks, l, names[np])
                                       : swin_dicom_class_for(table, nt, l, names[np]);
                np++;
            }
        if (!grid_not_slices) rep->labels_present = np; /* else: the grid's, from the statistics */
    }
    o->present = np;
    /* the SEG and RTSTRUCT cover the slices: each one's plane of the grid */
    const uint16_t *slice_labels = o->labels;
    uint16_t *gathered = NULL;
    if (!st && np > 0 && grid_not_slices) {
        if (!(gathered = malloc(o->plane_n * (size_t)s->nslices * sizeof *gathered)))
            st = swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for the slices' labels");
        for (int k = 0; k < s->nslices && !st; k++)
            memcpy(gathered + o->plane_n * (size_t)k, o->labels + o->plane_n * (size_t)s->grid.plane_of[k],
                   o->plane_n * sizeof *gathered);
        slice_labels = gathered;
    }
    struct swin_dcm_ref ref = {.slices = s->order, .nz = s->nslices};
    struct swin_dcm_content content = {.classes = present, .nclasses = np, .labels = slice_labels, .masks = o->masks,
                                       .software_version = SWINRUN_VERSION, .seg_type = o->p->seg_type,
                                       .uid_seed = o->p->dicom_uid_seed};
    if (!st && np > 0 && dcm_outputs)
        st = swin_dcm_ref_identity(&ref, rep->dicom_notice, sizeof rep->dicom_notice, err);
    if (!st) {
        if (!is_dcm_name(o->out)) {
            st = write_nifti(o->out, s, o->labels, !o->masks && classes > 256, o->masks, o->threads, &o->nifti, err);
        } else if (np > 0) {
            double t = swin_clock_seconds();
            st = write_dcm(&o->seg, o->out, swin_dcm_write_seg, &ref, &content, err);
            o->seg_open = !st;
            rep->seconds_seg = swin_clock_seconds() - t;
        }
    }
    if (!st && np > 0 && o->rtstruct) {
        double t = swin_clock_seconds();
        st = write_dcm(&o->rt, o->rtstruct, swin_dcm_write_rtstruct, &ref, &content, err);
        o->rt_open = !st;
        rep->seconds_rtstruct = swin_clock_seconds() - t;
    }
    free(gathered);
    free(seen);
    free(present);
    free(names);
    return st;
}

static swin_status dicom_publish(void *outputs, swin_segment_report *rep, swin_error *err)
{
    struct dicom_outputs *o = outputs;
    swin_status st = SWIN_OK;
    if (o->nifti) {
        st = swin_nifti_writer_publish(o->nifti, err);
        o->nifti = NULL;
    }
    if (!st && o->seg_open) st = swin_atomic_file_publish(&o->seg, err), o->seg_open = false;
    if (!st && o->rt_open) st = swin_atomic_file_publish(&o->rt, err), o->rt_open = false;
    if (!st) rep->dicom_written = o->present > 0 && (is_dcm_name(o->out) || o->rtstruct);
    dicom_discard(o);
    return st;
}

static swin_status dicom_list(const char *const *paths, int npaths, const char *pick, struct swin_series_list *out,
                              swin_error *err)
{
    struct swin_dcm_study study;
    swin_status st = swin_dcm_study_read(paths, npaths, pick, &study, err);
    if (st) return st;
    swin_dcm_study_take_list(&study, out);
    swin_dcm_study_free(&study);
    return SWIN_OK;
}

static void dicom_close(struct swin_format_input *in)
{
    struct swin_dcm_series *s = in->state;
    if (!s) return;
    swin_dcm_series_free(s);
    free(s);
    in->state = NULL;
    in->hu = NULL;
}

const struct swin_format swin_format_dicom = {
    .name = "DICOM", .claims = swin_dcm_is_dicom_input, .series = 1, .check = dicom_check, .read = dicom_read,
    .release = dicom_release, .hu_plane = dicom_hu_plane, .open_outputs = dicom_open_outputs,
    .put_labels = dicom_put_labels, .finish = dicom_finish, .publish = dicom_publish, .discard = dicom_discard,
    .close = dicom_close, .list = dicom_list,
};
