/* swinrun's own read and check of a NIfTI-1/NIfTI-2 header, done before nifti_clib sees
 * the file. nifti_clib trusts what it reads: it loops over dim[0], converts a NIfTI-1
 * vox_offset float to int, parses ASCII ("<nifti_image") headers and allocates extensions
 * up to vox_offset; so every field it will use is checked here first, in the byte order
 * nifti_clib will read it in. */
#ifndef SWIN_PIPELINE_NIFTI_HEADER_H
#define SWIN_PIPELINE_NIFTI_HEADER_H

#include <stdbool.h>
#include <stdint.h>

#include "core/status.h"

struct swin_nifti_header {
    int version;          /* 1 (NIfTI-1, or ANALYZE 7.5 without the NIfTI magic) or 2 */
    bool one_file;        /* data in the same file (magic "n+1" / "n+2") */
    int64_t dim[8];       /* dim[0] in 1..7, dim[1..dim[0]] >= 1 */
    int64_t nx, ny, nz;   /* one 3D volume: nx * ny * nz <= SWIN_VOLUME_MAX_VOXELS */
    int64_t volumes;      /* dim[4] * .. * dim[7]: the channels, 1..SWIN_VOLUME_MAX_CHANNELS */
    int datatype;         /* one of the scalar types swinrun converts */
    int nbyper;           /* bytes per voxel */
    int64_t vox_offset;   /* where the data start, as nifti_clib computes iname_offset */
};

/* Reads and checks the header of path (gzip when the name ends in .gz, as nifti_clib
 * decides). For a one-file image, the voxel data must also fit in the file
 * (swin_nifti_data_fits). */
swin_status swin_nifti_header_read(const char *path, struct swin_nifti_header *h, swin_error *err);

/* Whether `bytes` bytes of data from byte `offset` can be in the file: its size for a
 * plain file; for a gzip file, what its compressed size can expand to at most (deflate's
 * limit is 1032:1). */
swin_status swin_nifti_data_fits(const char *path, const char *data_file, int64_t offset, uint64_t bytes,
                                 swin_error *err);

#endif
