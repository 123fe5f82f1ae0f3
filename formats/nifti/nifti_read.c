/* Reading a NIfTI-1/2 scalar volume into float32 with scaling applied (nifti_clib). */
#include <errno.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "formats/nifti/nifti_header.h"
#include "formats/nifti/nifti_io.h"

static swin_mat4 best_affine(const nifti_image *n)
{
    const nifti_dmat44 *src = n->sform_code > 0 ? &n->sto_xyz : &n->qto_xyz;
    swin_mat4 a = swin_mat4_identity();
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

/* data (n values of datatype dt) -> out float32, v * slope + inter; returns false on a
 * datatype swinrun does not read. */
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

/* nifti_clib's reading of the header agrees with the check of it (the file did not change
 * in between, nifti_clib did not pick another file). */
static bool same_header(const nifti_image *n, const struct swin_nifti_header *h)
{
    for (int i = 0; i <= h->dim[0]; i++)
        if (n->dim[i] != h->dim[i]) return false;
    return n->datatype == h->datatype && n->nbyper == h->nbyper && n->iname_offset == h->vox_offset &&
           n->nx == h->nx && n->ny == h->ny && n->nz == h->nz;
}

/* The voxel data in chunks, each swapped to our byte order and converted to float32
 * (v * slope + inter) as it arrives. Not nifti_image_load: it silently replaces NaN and
 * infinite floats with 0, and those must be reported. When the size of the data was
 * checked against the file's (`exact`), *out is allocated whole; a gzip stream can end
 * before the header's voxel count, so then *out grows with what the stream delivers
 * (doubling), never beyond twice that. */
static swin_status load_voxels(const char *path, const nifti_image *n, int64_t nvox, double slope, double inter,
                               bool exact, float **out, swin_error *err)
{
    enum { CHUNK = 1 << 20 };
    const int64_t per = CHUNK / n->nbyper;
    int64_t cap = exact || nvox < per ? nvox : per, done = 0;
    unsigned char *buf = malloc(CHUNK);
    float *f = malloc((size_t)cap * sizeof *f);
    znzFile fp = NULL;
    swin_status st = SWIN_OK;
    if (!buf || !f) {
        st = swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of host memory for %lld voxels", path, (long long)nvox);
        goto done;
    }
    fp = znzopen(n->iname, "rb", nifti_is_gzfile(n->iname));
    if (znz_isnull(fp)) {
        st = swin_error_set(err, SWIN_ERR_IO, "%s: cannot open the voxel data %s", path, n->iname);
        goto done;
    }
    bool at_data = znzseek(fp, (znz_off_t)n->iname_offset, SEEK_SET) >= 0;
    while (done < nvox) {
        int64_t want = nvox - done < per ? nvox - done : per;
        size_t bytes = (size_t)want * (size_t)n->nbyper, got = at_data ? znzread(buf, 1, bytes, fp) : 0;
        if (got != bytes) {   /* short, or znzread's -1 on a corrupt gzip stream */
            st = swin_error_set(err, SWIN_ERR_FORMAT, "%s: the voxel data are truncated or corrupt (%llu of %llu bytes read)",
                                path, (unsigned long long)done * (unsigned long long)n->nbyper + (got < bytes ? got : 0),
                                (unsigned long long)nvox * (unsigned long long)n->nbyper);
            goto done;
        }
        if (n->swapsize > 1 && n->byteorder != nifti_short_order()) nifti_swap_Nbytes(want, n->swapsize, buf);
        if (done + want > cap) {
            cap = 2 * cap < nvox ? 2 * cap : nvox;
            float *g = realloc(f, (size_t)cap * sizeof *f);
            if (!g) {
                st = swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of host memory for %lld voxels", path, (long long)nvox);
                goto done;
            }
            f = g;
        }
        if (!to_float(buf, n->datatype, want, slope, inter, f + done)) {   /* the datatype was checked before */
            st = swin_error_set(err, SWIN_ERR_INTERNAL, "%s: datatype %d slipped through", path, n->datatype);
            goto done;
        }
        done += want;
    }
done:
    if (fp) znzclose(fp);
    free(buf);
    if (st) free(f);
    else *out = f;
    return st;
}

swin_status swin_image_read(const char *path, struct swin_image *img, swin_error *err)
{
    memset(img, 0, sizeof *img);
    nifti_set_debug_level(0); /* the library reports through swin_error, never on stderr */
    struct stat sb;
    if (stat(path, &sb) != 0) return swin_error_set(err, SWIN_ERR_IO, "%s: %s", path, strerror(errno));
    if (S_ISDIR(sb.st_mode)) return swin_error_set(err, SWIN_ERR_IO, "%s: is a directory, not a NIfTI file", path);
    struct swin_nifti_header h;
    swin_status st = swin_nifti_header_read(path, &h, err);
    if (st) return st;
    nifti_image *n = nifti_image_read(path, 0);
    if (!n) return swin_error_set(err, SWIN_ERR_FORMAT, "%s: not a readable NIfTI file", path);
    if (!same_header(n, &h)) {
        st = swin_error_set(err, SWIN_ERR_IO, "%s: the header changed while it was read", path);
        goto fail;
    }
    if (h.version == 2) n->nifti_type = NIFTI_FTYPE_NIFTI2_1; /* nifti_clib says 1 for any single file */
    int64_t nvox = h.nx * h.ny * h.nz;
    bool gz = nifti_is_gzfile(n->iname);
    /* a one-file image's data were checked with its header; a .hdr/.img pair's are here */
    if (!h.one_file && (st = swin_nifti_data_fits(path, n->iname, n->iname_offset, (uint64_t)nvox * (uint64_t)h.nbyper, err)))
        goto fail;
    img->affine = best_affine(n);
    double sp[3];
    swin_mat4_spacing(img->affine, sp);
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
    double slope = n->scl_slope, inter = n->scl_inter;
    if (!(isfinite(slope) && slope != 0)) slope = 1, inter = 0; /* slope 0: no scaling (the standard) */
    if (!isfinite(inter)) inter = 0;
    float *f;
    if ((st = load_voxels(path, n, nvox, slope, inter, !gz, &f, err))) goto fail;
    for (int64_t v = 0; v < nvox; v++)
        if (!isfinite(f[v])) {
            st = swin_error_set(err, SWIN_ERR_FORMAT, "%s: voxel (%lld, %lld, %lld) is %s; swinrun needs finite intensities",
                                path, (long long)(v % n->nx), (long long)(v / n->nx % n->ny),
                                (long long)(v / (n->nx * n->ny)), isnan(f[v]) ? "NaN" : "infinite");
            free(f);
            goto fail;
        }
    img->hdr = n;
    img->dim[0] = n->nx, img->dim[1] = n->ny, img->dim[2] = n->nz;
    img->data = f;
    return SWIN_OK;
fail:
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
