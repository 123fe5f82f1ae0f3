/* NIfTI-1/NIfTI-2 input and output (.nii, .nii.gz) through the reference C library
 * (nifti_clib's libnifti2). Images are 3D scalar volumes; data in memory keeps the file's
 * order: index i + nx * (j + ny * k), i fastest. */
#ifndef SWIN_PIPELINE_NIFTI_IO_H
#define SWIN_PIPELINE_NIFTI_IO_H

#include <nifti/nifti2_io.h>
#include <stdint.h>

#include "core/status.h"
#include "formats/affine.h"
#include "formats/format.h"

struct swin_image {
    nifti_image *hdr;   /* the input's header (data not kept): outputs copy its geometry */
    int64_t dim[3];     /* nx, ny, nz */
    swin_mat4 affine;   /* voxel (i, j, k) -> world RAS+ mm: sform if sform_code > 0, else qform if
                           qform_code > 0, else pixdim scaling (NIfTI method 1) */
    int channels;       /* the volumes (dim[4] * .. * dim[7]): 1..SWIN_VOLUME_MAX_CHANNELS */
    float *data;        /* channels * nx*ny*nz values (volume after volume), scl_slope/scl_inter applied */
    double slope, inter; /* the scaling applied: data = (float)(file's value * slope + inter) */
    /* swin_image_read_keep: the file's values (this machine's byte order) when they are
     * narrower than float32, else NULL */
    const void *raw;
    void *raw_block;    /* the allocation raw points into */
};


/* Reads a 3D scalar image, or a 4D..7D one of up to SWIN_VOLUME_MAX_CHANNELS volumes (the
 * channels), of any integer or float datatype. Rejects 2D images, more volumes, zero or absurd
 * dimensions, non-finite or
 * absurd spacing, complex/RGB data, truncated files and NaN/infinite voxels, each with a
 * one-line message. A .gz file may hold any number of gzip members. */
swin_status swin_image_read(const char *path, struct swin_image *img, swin_error *err);
/* The same, keeping the file's values too when they take fewer bytes than float32 (img->raw),
 * so that data can be freed and its planes had again, the same floats, for a half or a
 * quarter of the memory (swin_image_plane). */
swin_status swin_image_read_keep(const char *path, struct swin_image *img, swin_error *err);
/* Plane k's intensities of the first volume (nx * ny floats, equal to data's) into out: from
 * raw when kept, else from data. */
void swin_image_plane(const struct swin_image *img, int64_t k, float *out);
void swin_image_free(struct swin_image *img);

/* True when path ends in .nii or .nii.gz (the outputs swinrun writes). */
int swin_nifti_output_name_ok(const char *path);

/* Streaming writer of an image on the input's grid: header from `like` (dims, pixdim,
 * qform/sform and their codes, units, NIfTI-1 or NIfTI-2 as the input), datatype and
 * number of volumes (dim[4]; 1 = a 3D image) given; gzip when path ends in .gz, as gzip
 * members compressed by up to `threads` threads (formats/gzip_members.h). Data go through a
 * temporary file renamed over path when published (fileio/atomic_file.h). */
struct swin_nifti_writer;
swin_status swin_nifti_writer_open(struct swin_nifti_writer **w, const char *path, const nifti_image *like,
                                   int datatype, int64_t volumes, int intent_code, const char *descrip, int threads,
                                   swin_error *err);
swin_status swin_nifti_writer_write(struct swin_nifti_writer *w, const void *data, size_t bytes, swin_error *err);
/* Completes the file under its temporary name (on failure removes it; abort the writer
 * then). Publish renames it over path and frees the writer, whatever happens. */
swin_status swin_nifti_writer_finish(struct swin_nifti_writer *w, swin_error *err);
swin_status swin_nifti_writer_publish(struct swin_nifti_writer *w, swin_error *err);
/* finish, then publish (or abort); the writer is freed either way. */
swin_status swin_nifti_writer_commit(struct swin_nifti_writer *w, swin_error *err);
/* Removes the temporary file (finished or not) and frees the writer; safe on NULL. */
void swin_nifti_writer_abort(struct swin_nifti_writer *w);

#endif
