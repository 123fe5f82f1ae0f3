/* Streaming NIfTI-1/NIfTI-2 single-file writer (.nii, .nii.gz): the header comes from
 * nifti_clib's own conversion of a copy of the input's nifti_image, the data are streamed
 * (for .gz, as gzip members compressed by threads: formats/gzip_members.h) into a temporary
 * file renamed over the destination when published. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fileio/atomic_file.h"
#include "formats/gzip_members.h"
#include "formats/nifti/nifti_io.h"

struct swin_nifti_writer {
    struct swin_atomic_file af;
    struct swin_gz_members *gz; /* NULL: a plain .nii */
};

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

int swin_nifti_output_name_ok(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return (ends_with(base, ".nii") && strlen(base) > 4) || (ends_with(base, ".nii.gz") && strlen(base) > 7);
}

static swin_status put(struct swin_nifti_writer *w, const void *data, size_t bytes, swin_error *err)
{
    if (w->gz) return swin_gz_members_write(w->gz, data, bytes, err);
    if (bytes && fwrite(data, 1, bytes, w->af.f) != bytes) return swin_atomic_file_write_failed(&w->af, errno, err);
    return SWIN_OK;
}

swin_status swin_nifti_writer_open(struct swin_nifti_writer **out, const char *path, const nifti_image *like,
                                   int datatype, int64_t volumes, int intent_code, const char *descrip, int threads,
                                   swin_error *err)
{
    *out = NULL;
    if (!swin_nifti_output_name_ok(path))
        return swin_error_set(err, SWIN_ERR_ARG, "%s: output names must end in .nii or .nii.gz", path);
    nifti_image *n = nifti_copy_nim_info(like);
    struct swin_nifti_writer *w = calloc(1, sizeof *w);
    if (!n || !w) {
        nifti_image_free(n);
        free(w);
        return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
    }
    /* the input's grid and geometry; our own datatype, volume count and meaning */
    int nifti2 = like->nifti_type == NIFTI_FTYPE_NIFTI2_1 || like->nifti_type == NIFTI_FTYPE_NIFTI2_2;
    n->nifti_type = nifti2 ? NIFTI_FTYPE_NIFTI2_1 : NIFTI_FTYPE_NIFTI1_1;
    n->ndim = n->dim[0] = volumes > 1 ? 4 : 3;
    n->nt = n->dim[4] = volumes;
    n->nu = n->nv = n->nw = n->dim[5] = n->dim[6] = n->dim[7] = 1;
    n->nvox = n->nx * n->ny * n->nz * volumes;
    n->datatype = datatype;
    nifti_datatype_sizes(datatype, &n->nbyper, &n->swapsize);
    n->scl_slope = 1, n->scl_inter = 0, n->cal_min = n->cal_max = 0;
    n->intent_code = intent_code, n->intent_p1 = n->intent_p2 = n->intent_p3 = 0;
    memset(n->intent_name, 0, sizeof n->intent_name);
    memset(n->descrip, 0, sizeof n->descrip);
    strncpy(n->descrip, descrip, sizeof n->descrip - 1);
    memset(n->aux_file, 0, sizeof n->aux_file);
    n->byteorder = nifti_short_order();
    nifti_free_extensions(n);

    union { nifti_1_header h1; nifti_2_header h2; } h;
    memset(&h, 0, sizeof h);
    size_t hbytes;
    if (nifti2) {
        nifti_convert_nim2n2hdr(n, &h.h2);
        memcpy(h.h2.magic, "n+2\0\r\n\032\n", 8);
        h.h2.vox_offset = 544;
        hbytes = sizeof h.h2;
    } else {
        nifti_convert_nim2n1hdr(n, &h.h1);
        memcpy(h.h1.magic, "n+1\0", 4);
        h.h1.vox_offset = 352;
        hbytes = sizeof h.h1;
    }
    nifti_image_free(n);

    swin_status st = swin_atomic_file_open(&w->af, path, err);
    if (st) {
        free(w);
        return st;
    }
    if (ends_with(path, ".gz") && (st = swin_gz_members_open(&w->gz, &w->af, SWIN_GZ_LEVEL, threads, err))) {
        swin_nifti_writer_abort(w);
        return st;
    }
    static const char extender[4] = {0, 0, 0, 0}; /* no extensions follow */
    if ((st = put(w, &h, hbytes, err)) || (st = put(w, extender, 4, err))) {
        swin_nifti_writer_abort(w);
        return st;
    }
    *out = w;
    return SWIN_OK;
}

swin_status swin_nifti_writer_write(struct swin_nifti_writer *w, const void *data, size_t bytes, swin_error *err)
{
    return put(w, data, bytes, err);
}

swin_status swin_nifti_writer_finish(struct swin_nifti_writer *w, swin_error *err)
{
    swin_status st = w->gz ? swin_gz_members_finish(w->gz, err) : SWIN_OK;
    swin_gz_members_free(w->gz);
    w->gz = NULL;
    if (st) {
        swin_atomic_file_abort(&w->af);
        return st;
    }
    return swin_atomic_file_finish(&w->af, err); /* removes the temporary file on failure */
}

swin_status swin_nifti_writer_publish(struct swin_nifti_writer *w, swin_error *err)
{
    swin_status st = swin_atomic_file_publish(&w->af, err);
    free(w);
    return st;
}

swin_status swin_nifti_writer_commit(struct swin_nifti_writer *w, swin_error *err)
{
    swin_status st = swin_nifti_writer_finish(w, err);
    if (st) {
        swin_nifti_writer_abort(w);
        return st;
    }
    return swin_nifti_writer_publish(w, err);
}

void swin_nifti_writer_abort(struct swin_nifti_writer *w)
{
    if (!w) return;
    swin_gz_members_free(w->gz);
    swin_atomic_file_abort(&w->af);
    free(w);
}
