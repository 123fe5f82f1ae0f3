/* Streaming NIfTI-1/NIfTI-2 single-file writer (.nii, .nii.gz): the header comes from
 * nifti_clib's own conversion of a copy of the input's nifti_image, the data are streamed
 * (deflated for .gz) into a temporary file renamed over the destination when published. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fileio/atomic_file.h"
#include "formats/nifti/nifti_io.h"

struct swin_nifti_writer {
    struct swin_atomic_file af;
    int gz;
    z_stream z;
    unsigned char out[1 << 16];
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

/* zlib's state comes from this library's allocator, as everything else here */
static voidpf z_alloc(voidpf opaque, uInt items, uInt size)
{
    return calloc(items, size);
}

static void z_free(voidpf opaque, voidpf p)
{
    free(p);
}

static swin_status put(struct swin_nifti_writer *w, const void *data, size_t bytes, int flush, swin_error *err)
{
    if (!w->gz) {
        if (bytes && fwrite(data, 1, bytes, w->af.f) != bytes) return swin_atomic_file_write_failed(&w->af, errno, err);
        return SWIN_OK;
    }
    const unsigned char *p = data;
    do { /* zlib counts in uInt: feed at most 1 GiB at a time */
        size_t chunk = bytes > (1u << 30) ? (1u << 30) : bytes;
        w->z.next_in = (unsigned char *)p;
        w->z.avail_in = (uInt)chunk;
        int last = flush && chunk == bytes;
        int rc;
        do {
            w->z.next_out = w->out;
            w->z.avail_out = sizeof w->out;
            rc = deflate(&w->z, last ? Z_FINISH : Z_NO_FLUSH);
            if (rc == Z_STREAM_ERROR) return swin_error_set(err, SWIN_ERR_INTERNAL, "%s: zlib deflate failed", w->af.dest);
            size_t have = sizeof w->out - w->z.avail_out;
            if (have && fwrite(w->out, 1, have, w->af.f) != have) return swin_atomic_file_write_failed(&w->af, errno, err);
        } while (w->z.avail_out == 0 || (last && rc != Z_STREAM_END));
        p += chunk;
        bytes -= chunk;
    } while (bytes);
    return SWIN_OK;
}

swin_status swin_nifti_writer_open(struct swin_nifti_writer **out, const char *path, const nifti_image *like,
                                   int datatype, int64_t volumes, int intent_code, const char *descrip,
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
    w->gz = ends_with(path, ".gz");
    w->z.zalloc = z_alloc;
    w->z.zfree = z_free;
    if (w->gz && deflateInit2(&w->z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        w->gz = 0;
        swin_nifti_writer_abort(w);
        return swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of host memory for the compressor", path);
    }
    static const char extender[4] = {0, 0, 0, 0}; /* no extensions follow */
    if ((st = put(w, &h, hbytes, 0, err)) || (st = put(w, extender, 4, 0, err))) {
        swin_nifti_writer_abort(w);
        return st;
    }
    *out = w;
    return SWIN_OK;
}

swin_status swin_nifti_writer_write(struct swin_nifti_writer *w, const void *data, size_t bytes, swin_error *err)
{
    return put(w, data, bytes, 0, err);
}

swin_status swin_nifti_writer_finish(struct swin_nifti_writer *w, swin_error *err)
{
    swin_status st = w->gz ? put(w, NULL, 0, 1, err) : SWIN_OK;
    if (w->gz) deflateEnd(&w->z);
    w->gz = 0;
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
    if (w->gz) deflateEnd(&w->z);
    swin_atomic_file_abort(&w->af);
    free(w);
}
