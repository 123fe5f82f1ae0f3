/* Reading a NIfTI-1/2 scalar volume into float32 with scaling applied: the header through
 * swinrun's check and nifti_clib, the voxel data through formats/gzip_read.h (.gz) or read(). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/gzip_read.h"

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

/* The bytes of the voxel data (nbytes from the data file's byte offset), into *block: from a
 * .gz file through formats/gzip_read.h, the whole compressed file mapped; else straight from
 * the file. *data points into *block. The size was checked against the file's before: for a
 * .gz file at most its 1032:1 bound, which a hostile file may claim and not deliver. */
static swin_status read_bytes(const char *path, const nifti_image *n, size_t nbytes, unsigned char **block,
                              unsigned char **data, swin_error *err)
{
    const bool gz = nifti_is_gzfile(n->iname);
    const size_t offset = (size_t)n->iname_offset, want = gz ? offset + nbytes : nbytes;
    *block = NULL;
    int fd = open(n->iname, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        if (fd >= 0) close(fd);
        return swin_error_set(err, SWIN_ERR_IO, "%s: cannot open the voxel data %s", path, n->iname);
    }
    unsigned char *b = malloc(want ? want : 1);
    if (!b) {
        close(fd);
        return swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of host memory for %zu bytes of voxel data", path, nbytes);
    }
    size_t got = 0;
    bool corrupt = false;
    if (gz) {
        const size_t size = (size_t)sb.st_size;
        void *map = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
        if (size && map == MAP_FAILED) {
            close(fd);
            free(b);
            return swin_error_set(err, SWIN_ERR_IO, "%s: cannot map %s: %s", path, n->iname, strerror(errno));
        }
        enum swin_gz_result r = swin_gz_read(map, size, b, want, &got);
        if (size) munmap(map, size);
        if (r == SWIN_GZ_NOMEM) {
            close(fd);
            free(b);
            return swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of host memory for the decompressor", path);
        }
        corrupt = r == SWIN_GZ_CORRUPT;
        got = got > offset ? got - offset : 0;
    } else {
        while (got < nbytes) {
            ssize_t r = pread(fd, b + got, nbytes - got, (off_t)(offset + got));
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) break;
            got += (size_t)r;
        }
    }
    close(fd);
    if (got < nbytes || corrupt) {
        free(b);
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: the voxel data are truncated or corrupt (%zu of %zu bytes read)",
                              path, got < nbytes ? got : nbytes, nbytes);
    }
    if (gz && offset % 8) memmove(b, b + offset, nbytes); /* the typed reads need the data aligned */
    *block = b;
    *data = gz && !(offset % 8) ? b + offset : b;
    return SWIN_OK;
}

/* The voxel data swapped to our byte order and converted to float32 (v * slope + inter).
 * Not nifti_image_load: it silently replaces NaN and infinite floats with 0, and those must
 * be reported. keep: the file's values stay (img->raw) when narrower than float32. */
static swin_status load_voxels(const char *path, const nifti_image *n, int64_t nvox, bool keep, struct swin_image *img,
                               swin_error *err)
{
    unsigned char *block, *data = NULL;
    const size_t nbytes = (size_t)nvox * (size_t)n->nbyper;
    swin_status st = read_bytes(path, n, nbytes, &block, &data, err);
    if (st) return st;
    if (n->swapsize > 1 && n->byteorder != nifti_short_order()) nifti_swap_Nbytes((size_t)nvox, n->swapsize, data);
    float *f = malloc((size_t)nvox * sizeof *f);
    if (!f) {
        free(block);
        return swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of host memory for %lld voxels", path, (long long)nvox);
    }
    if (!to_float(data, n->datatype, nvox, img->slope, img->inter, f)) { /* the datatype was checked before */
        free(block);
        free(f);
        return swin_error_set(err, SWIN_ERR_INTERNAL, "%s: datatype %d slipped through", path, n->datatype);
    }
    img->data = f;
    if (keep && n->nbyper < (int)sizeof(float)) {
        img->raw = data;
        img->raw_block = block;
    } else {
        free(block);
    }
    return SWIN_OK;
}

static swin_status image_read(const char *path, bool keep, struct swin_image *img, swin_error *err)
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
    int64_t nvox = h.nx * h.ny * h.nz * h.volumes;
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
    img->slope = n->scl_slope, img->inter = n->scl_inter;
    if (!(isfinite(img->slope) && img->slope != 0)) img->slope = 1, img->inter = 0; /* slope 0: no scaling (the standard) */
    if (!isfinite(img->inter)) img->inter = 0;
    if ((st = load_voxels(path, n, nvox, keep, img, err))) goto fail;
    const float *f = img->data;
    for (int64_t v = 0; v < nvox; v++)
        if (!isfinite(f[v])) {
            const int64_t per = h.nx * h.ny * h.nz, u = v % per;
            char vol[40] = "";
            if (h.volumes > 1) snprintf(vol, sizeof vol, " of volume %lld", (long long)(v / per));
            st = swin_error_set(err, SWIN_ERR_FORMAT, "%s: voxel (%lld, %lld, %lld)%s is %s; swinrun needs finite intensities",
                                path, (long long)(u % h.nx), (long long)(u / h.nx % h.ny), (long long)(u / (h.nx * h.ny)),
                                vol, isnan(f[v]) ? "NaN" : "infinite");
            goto fail;
        }
    img->hdr = n;
    img->dim[0] = n->nx, img->dim[1] = n->ny, img->dim[2] = n->nz;
    img->channels = (int)h.volumes;
    return SWIN_OK;
fail:
    nifti_image_free(n);
    free(img->data);
    free(img->raw_block);
    memset(img, 0, sizeof *img);
    return st;
}

swin_status swin_image_read(const char *path, struct swin_image *img, swin_error *err)
{
    return image_read(path, false, img, err);
}

swin_status swin_image_read_keep(const char *path, struct swin_image *img, swin_error *err)
{
    return image_read(path, true, img, err);
}

void swin_image_plane(const struct swin_image *img, int64_t k, float *out)
{
    const int64_t np = img->dim[0] * img->dim[1];
    if (!img->raw) {
        memcpy(out, img->data + k * np, (size_t)np * sizeof *out);
        return;
    }
    const size_t nbyper = (size_t)img->hdr->nbyper;
    to_float((const unsigned char *)img->raw + (size_t)(k * np) * nbyper, img->hdr->datatype, np, img->slope,
             img->inter, out);
}

void swin_image_free(struct swin_image *img)
{
    if (img->hdr) nifti_image_free(img->hdr);
    free(img->data);
    free(img->raw_block);
    memset(img, 0, sizeof *img);
}
