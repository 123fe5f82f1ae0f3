/* Streaming writer of a .mha image on an input's grid: its header's sizes, spacing, origin
 * and directions, the given voxel type and number of volumes (a fourth axis when more than
 * one), the voxels as one zlib stream (CompressedData, as ITK writes them). Written under a
 * temporary name, renamed over path when published (fileio/atomic_file.h). */
#ifndef SWIN_FORMATS_MHA_WRITE_H
#define SWIN_FORMATS_MHA_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "formats/metaimage/mha_header.h"

struct swin_mha_writer;
/* type: SWIN_MHA_UCHAR, SWIN_MHA_USHORT or SWIN_MHA_FLOAT. */
swin_status swin_mha_writer_open(struct swin_mha_writer **w, const char *path, const struct swin_mha_header *like,
                                 enum swin_mha_type type, int64_t volumes, swin_error *err);
/* The next bytes of voxels, in the file's order (i fastest, then j, k, the volume). */
swin_status swin_mha_writer_write(struct swin_mha_writer *w, const void *data, size_t bytes, swin_error *err);
/* Completes the file under its temporary name: every voxel written, the stream's size in the
 * header (on failure the file is removed; abort the writer then). */
swin_status swin_mha_writer_finish(struct swin_mha_writer *w, swin_error *err);
/* Renames the finished file over path; frees the writer whatever happens. */
swin_status swin_mha_writer_publish(struct swin_mha_writer *w, swin_error *err);
/* Removes the temporary file and frees the writer; safe on NULL. */
void swin_mha_writer_abort(struct swin_mha_writer *w);

#endif
