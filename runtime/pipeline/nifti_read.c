/* Reading a NIfTI-1/2 scalar volume into float32 with scaling applied (nifti_clib). */
#include <errno.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runtime/pipeline/nifti_io.h"

/* The raw header, before nifti_clib's checks, so a bad dimension gets its own message. */
static swin_status check_raw_header(const char *path, int *version, swin_error *err)
{
    int nver = 0;
    void *h = nifti_read_header(path, &nver, 0);
    *version = nver;
    if (!h)
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: not a NIfTI file (no valid NIfTI-1/NIfTI-2 header)", path);
    int64_t dim[8];
    for (int swapped = 0; swapped < 2; swapped++) {
        for (int i = 0; i < 8; i++)
            dim[i] = nver == 2 ? ((nifti_2_header *)h)->dim[i] : ((nifti_1_header *)h)->dim[i];
        if ((dim[0] >= 1 && dim[0] <= 7) || swapped) break;
        /* unchecked headers come in the file's byte order: try the other one */
        if (nver == 2) nifti_swap_as_nifti2(h);
        else nifti_swap_as_nifti1(h);
    }
    free(h);
    if (dim[0] < 1 || dim[0] > 7)
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: not a NIfTI file (no valid header: dim[0] = %lld)", path,
                              (long long)dim[0]);
    for (int i = 1; i <= dim[0]; i++)
        if (dim[i] <= 0)
            return swin_error_set(err, SWIN_ERR_SHAPE, "%s: dimension %d has size %lld: the image is empty", path, i,
                                  (long long)dim[i]);
    int64_t s[3];
    for (int i = 0; i < 3; i++) s[i] = i + 1 <= dim[0] ? dim[i + 1] : 1;
    int64_t vols = 1;
    for (int i = 4; i <= dim[0]; i++) vols *= dim[i];
    if (vols > 1)
        return swin_error_set(err, SWIN_ERR_SHAPE,
                              "%s: a %lldD image with %lld volumes; swinrun segments one 3D volume (extract one first)",
                              path, (long long)dim[0], (long long)vols);
    if (s[0] < 2 || s[1] < 2 || s[2] < 2)
        return swin_error_set(err, SWIN_ERR_SHAPE, "%s: a 2D image (%lld x %lld x %lld); swinrun segments 3D volumes",
                              path, (long long)s[0], (long long)s[1], (long long)s[2]);
    for (int i = 0; i < 3; i++)
        if (s[i] > SWIN_NIFTI_MAX_DIM)
            return swin_error_set(err, SWIN_ERR_SHAPE, "%s: dimension %d is %lld voxels (limit %d): corrupt header?", path,
                                  i + 1, (long long)s[i], SWIN_NIFTI_MAX_DIM);
    if (s[0] * s[1] * s[2] > SWIN_NIFTI_MAX_VOXELS)
        return swin_error_set(err, SWIN_ERR_SHAPE, "%s: %lld x %lld x %lld is more than %lld voxels", path,
                              (long long)s[0], (long long)s[1], (long long)s[2], (long long)SWIN_NIFTI_MAX_VOXELS);
    return SWIN_OK;
}

/* The voxel data in the file's datatype, byte-swapped to ours. Not nifti_image_load: it
 * silently replaces NaN and infinite floats with 0, and those must be reported. */
static swin_status load_data(const char *path, const nifti_image *n, void *buf, swin_error *err)
{
    size_t bytes = (size_t)(n->nx * n->ny * n->nz) * (size_t)n->nbyper;
    znzFile fp = znzopen(n->iname, "rb", nifti_is_gzfile(n->iname));
    if (znz_isnull(fp)) return swin_error_set(err, SWIN_ERR_IO, "%s: cannot open the voxel data %s", path, n->iname);
    size_t got = 0;
    if (znzseek(fp, (znz_off_t)n->iname_offset, SEEK_SET) >= 0) got = znzread(buf, 1, bytes, fp);
    znzclose(fp);
    if (got != bytes)
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: the voxel data are truncated or corrupt (%zu of %zu bytes read)",
                              path, got, bytes);
    if (n->swapsize > 1 && n->byteorder != nifti_short_order())
        nifti_swap_Nbytes((int64_t)(bytes / (size_t)n->swapsize), n->swapsize, buf);
    return SWIN_OK;
}

static swin_mat4 best_affine(const nifti_image *n)
{
    const nifti_dmat44 *src = n->sform_code > 0 ? &n->sto_xyz : &n->qto_xyz;
    swin_mat4 a = mat4_identity();
    if (n->sform_code <= 0 && n->qform_code <= 0) { /* NIfTI method 1 (ANALYZE 7.5 compatibility) */
        a.m[0][0] = n->dx;
        a.m[1][1] = n->dy;
        a.m[2][2] = n->dz;
        return a;
    }
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) a.m[i][j] = src->m[i][j];
    return a;
}

/* data (nvox values of datatype dt) -> out float32, v * slope + inter; returns false on a
 * datatype swinrun does not read. out may alias data for DT_FLOAT32. */
static bool to_float(const void *data, int dt, int64_t n, double slope, double inter, float *out)
{
#define CONVERT(T)                                                                  \
    for (int64_t i = 0; i < n; i++) out[i] = (float)((double)((const T *)data)[i] * slope + inter); \
    return true
    switch (dt) {
    case DT_UINT8: CONVERT(uint8_t);
    case DT_INT8: CONVERT(int8_t);
    case DT_INT16: CONVERT(int16_t);
    case DT_UINT16: CONVERT(uint16_t);
    case DT_INT32: CONVERT(int32_t);
    case DT_UINT32: CONVERT(uint32_t);
    case DT_INT64: CONVERT(int64_t);
    case DT_UINT64: CONVERT(uint64_t);
    case DT_FLOAT32: CONVERT(float);
    case DT_FLOAT64: CONVERT(double);
    default: return false;
    }
#undef CONVERT
}

swin_status swin_image_read(const char *path, struct swin_image *img, swin_error *err)
{
    memset(img, 0, sizeof *img);
    nifti_set_debug_level(0); /* the library reports through swin_error, never on stderr */
    struct stat sb;
    if (stat(path, &sb) != 0) return swin_error_set(err, SWIN_ERR_IO, "%s: %s", path, strerror(errno));
    if (S_ISDIR(sb.st_mode)) return swin_error_set(err, SWIN_ERR_IO, "%s: is a directory, not a NIfTI file", path);
    int version;
    swin_status st = check_raw_header(path, &version, err);
    if (st) return st;
    nifti_image *n = nifti_image_read(path, 0);
    if (!n) return swin_error_set(err, SWIN_ERR_FORMAT, "%s: not a readable NIfTI file", path);
    void *raw = NULL;
    if (version == 2) n->nifti_type = NIFTI_FTYPE_NIFTI2_1; /* nifti_clib says 1 for any single file */
    int64_t nvox = n->nx * n->ny * n->nz;
    float *f = NULL;
    switch (n->datatype) {
    case DT_UINT8: case DT_INT8: case DT_INT16: case DT_UINT16: case DT_INT32: case DT_UINT32:
    case DT_INT64: case DT_UINT64: case DT_FLOAT32: case DT_FLOAT64: break;
    default:
        st = swin_error_set(err, SWIN_ERR_FORMAT, "%s: voxel datatype %s is not a scalar intensity swinrun reads", path,
                            nifti_datatype_string(n->datatype));
        goto fail;
    }
    img->affine = best_affine(n);
    double sp[3];
    mat4_spacing(img->affine, sp);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            if (!isfinite(img->affine.m[i][j])) {
                st = swin_error_set(err, SWIN_ERR_FORMAT, "%s: the affine (qform/sform) has a non-finite entry", path);
                goto fail;
            }
    for (int i = 0; i < 3; i++)
        if (!(sp[i] >= 1e-3 && sp[i] <= 1e4)) {
            st = swin_error_set(err, SWIN_ERR_FORMAT,
                                "%s: voxel spacing %g x %g x %g mm is absurd (each must be 0.001..10000 mm)", path,
                                sp[0], sp[1], sp[2]);
            goto fail;
        }
    f = malloc((size_t)nvox * sizeof *f);
    raw = n->datatype == DT_FLOAT32 ? (void *)f : malloc((size_t)nvox * (size_t)n->nbyper);
    if (!f || !raw) {
        st = swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of host memory for %lld voxels", path, (long long)nvox);
        goto fail;
    }
    if ((st = load_data(path, n, raw, err))) goto fail;
    double slope = n->scl_slope, inter = n->scl_inter;
    if (!(isfinite(slope) && slope != 0)) slope = 1, inter = 0; /* slope 0: no scaling (the standard) */
    if (!isfinite(inter)) inter = 0;
    if (!to_float(raw, n->datatype, nvox, slope, inter, f)) { /* the datatype was checked above */
        st = swin_error_set(err, SWIN_ERR_INTERNAL, "%s: datatype %d slipped through", path, n->datatype);
        goto fail;
    }
    if (raw != f) free(raw);
    raw = NULL;
    for (int64_t v = 0; v < nvox; v++)
        if (!isfinite(f[v])) {
            st = swin_error_set(err, SWIN_ERR_FORMAT, "%s: voxel (%lld, %lld, %lld) is %s; swinrun needs finite intensities",
                                path, (long long)(v % n->nx), (long long)(v / n->nx % n->ny),
                                (long long)(v / (n->nx * n->ny)), isnan(f[v]) ? "NaN" : "infinite");
            goto fail;
        }
    img->hdr = n;
    img->dim[0] = n->nx, img->dim[1] = n->ny, img->dim[2] = n->nz;
    img->data = f;
    return SWIN_OK;
fail:
    if (raw != f) free(raw);
    free(f);
    nifti_image_free(n);
    memset(img, 0, sizeof *img);
    return st;
}

void swin_image_free(struct swin_image *img)
{
    if (img->hdr) nifti_image_free(img->hdr);
    free(img->data);
    memset(img, 0, sizeof *img);
}
