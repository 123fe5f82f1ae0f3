/* swin_segment_dicom (runtime/swinrun.h): series reader -> swin_segment -> NIfTI label map,
 * DICOM SEG and RT Structure Set, published together. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "fileio/atomic_file.h"
#include "formats/dicom/classes.h"
#include "formats/dicom/series.h"
#include "formats/nifti/nifti_io.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

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

static swin_status write_nifti(const char *path, const struct swin_dcm_series *s, const uint16_t *labels, int wide,
                               struct swin_nifti_writer **done, swin_error *err)
{
    nifti_image *like = grid_header(s);
    if (!like) return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
    struct swin_nifti_writer *w;
    swin_status st = swin_nifti_writer_open(&w, path, like, wide ? DT_UINT16 : DT_UINT8, 1, NIFTI_INTENT_LABEL,
                                            "swinrun labels", err);
    nifti_image_free(like);
    if (st) return st;
    size_t plane = (size_t)(s->dim[0] * s->dim[1]);
    uint8_t *b = wide ? NULL : malloc(plane);
    if (!wide && !b) st = swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
    for (int64_t k = 0; k < s->dim[2] && !st; k++) {
        const uint16_t *p = labels + plane * (size_t)k;
        if (wide) {
            st = swin_nifti_writer_write(w, p, plane * 2, err);
        } else {
            for (size_t i = 0; i < plane; i++) b[i] = (uint8_t)p[i];
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

static swin_status check_outputs(const char *out, const swin_segment_params *p, swin_error *err)
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
    if (p->dicom_nclasses < 0 || (p->dicom_nclasses > 0 && !p->dicom_classes))
        return swin_error_set(err, SWIN_ERR_ARG, "dicom_classes: %d classes and a %s table", p->dicom_nclasses,
                              p->dicom_classes ? "" : "NULL");
    swin_status st = swin_atomic_file_check_dir(out, is_dcm_name(out) ? "DICOM SEG" : "label map", err);
    if (!st && p->rtstruct_path) st = swin_atomic_file_check_dir(p->rtstruct_path, "RT Structure Set", err);
    return st;
}

swin_status swin_segment_dicom(swin_context_t *ctx, const char *const *inputs, int ninputs, const char *output_path,
                               const swin_segment_params *params, swin_segment_report *report, swin_error *err)
{
    swin_segment_report scratch;
    swin_segment_report *rep = report ? report : &scratch;
    memset(rep, 0, sizeof *rep);
    rep->dicom_input = true;
    if (!ctx || !params || !inputs || ninputs < 1)
        return swin_error_set(err, SWIN_ERR_ARG, "a context, parameters and at least one input are required");
    swin_status st = check_outputs(output_path, params, err);
    if (st) return st;
    if (params->progress) params->progress(params->user, SWIN_STAGE_READ, 0);

    double t0 = now();
    struct swin_dcm_series s;
    if ((st = swin_dcm_series_read(inputs, ninputs, 1, &s, err))) return st;
    double t_read = now() - t0;
    size_t n = (size_t)(s.dim[0] * s.dim[1] * s.dim[2]);
    uint16_t *labels = malloc(n * sizeof *labels);
    if (!labels) {
        swin_dcm_series_free(&s);
        return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory for the label map");
    }
    swin_volume v = {.voxels = s.hu, .type = SWIN_VOXELS_F32, .dim = {s.dim[0], s.dim[1], s.dim[2]}};
    memcpy(v.affine, s.affine, sizeof v.affine);
    st = swin_segment(ctx, &v, params, labels, NULL, rep, err);
    rep->dicom_input = true;
    rep->seconds_read = t_read;
    free(s.hu); /* the pixels are not needed for the outputs */
    s.hu = NULL;
    if (st) goto done;

    t0 = now();
    /* the labels present, in label order: the SEG's segments and the RTSTRUCT's ROIs */
    int classes = rep->classes > 0 ? rep->classes : 1;
    unsigned char *seen = calloc((size_t)classes + 1, 1);
    swin_dicom_class *present = calloc((size_t)classes + 1, sizeof *present);
    char (*names)[32] = calloc((size_t)classes + 1, sizeof *names);
    if (!seen || !present || !names) st = swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
    int np = 0;
    int wide = classes > 256;
    if (!st) {
        for (size_t i = 0; i < n; i++)
            if (labels[i] <= classes) seen[labels[i]] = 1;
        int nt = params->dicom_nclasses;
        const swin_dicom_class *table = params->dicom_classes ? params->dicom_classes : swin_dicom_btcv_classes(&nt);
        for (int l = 1; l <= classes; l++)
            if (seen[l]) {
                present[np] = swin_dicom_class_for(table, nt, l, names[np]);
                np++;
            }
        rep->labels_present = np;
    }
    struct swin_nifti_writer *nw = NULL;
    struct swin_atomic_file seg = {0}, rt = {0};
    bool seg_open = false, rt_open = false;
    struct swin_dcm_ref ref = {.slices = s.order, .nz = (int)s.dim[2]};
    struct swin_dcm_content content = {.classes = present, .nclasses = np, .labels = labels,
                                       .software_version = SWINRUN_VERSION};
    if (!st) {
        if (!is_dcm_name(output_path)) {
            st = write_nifti(output_path, &s, labels, wide, &nw, err);
        } else if (np > 0) {
            double t = now();
            st = write_dcm(&seg, output_path, swin_dcm_write_seg, &ref, &content, err);
            seg_open = !st;
            rep->seconds_seg = now() - t;
        }
    }
    if (!st && np > 0 && params->rtstruct_path) {
        double t = now();
        st = write_dcm(&rt, params->rtstruct_path, swin_dcm_write_rtstruct, &ref, &content, err);
        rt_open = !st;
        rep->seconds_rtstruct = now() - t;
    }
    /* publish together: a failure before this point leaves none of them */
    if (!st && nw) {
        st = swin_nifti_writer_publish(nw, err);
        nw = NULL;
    }
    if (!st && seg_open) st = swin_atomic_file_publish(&seg, err), seg_open = false;
    if (!st && rt_open) st = swin_atomic_file_publish(&rt, err), rt_open = false;
    if (!st) rep->dicom_written = np > 0 && (is_dcm_name(output_path) || params->rtstruct_path);
    if (nw) swin_nifti_writer_abort(nw);
    if (seg_open) swin_atomic_file_abort(&seg);
    if (rt_open) swin_atomic_file_abort(&rt);
    rep->seconds_write += now() - t0;
    free(seen);
    free(present);
    free(names);
done:
    free(labels);
    swin_dcm_series_free(&s);
    return st;
}
