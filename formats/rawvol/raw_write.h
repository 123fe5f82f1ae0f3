/* Streaming writer of a text-header volume (MetaImage, NRRD) on an input's grid: the
 * format's header, then the voxels deflated as they come into one zlib or gzip stream. The
 * file is written under a temporary name and renamed over its path when published
 * (fileio/atomic_file.h). */
#ifndef SWIN_FORMATS_RAW_WRITE_H
#define SWIN_FORMATS_RAW_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/status.h"
#include "formats/rawvol/raw_header.h"

#define SWIN_RAW_SIZE_FIELD 20 /* characters a header keeps for the stream's size, when it says it */

/* Writes the format's header for like's grid with `volumes` volumes of type; *size_at: where
 * the stream's size goes (SWIN_RAW_SIZE_FIELD characters), or -1 when the header holds none. */
typedef void (*swin_raw_header_writer)(FILE *f, const struct swin_raw_header *like, enum swin_raw_type type,
                                       int64_t volumes, long *size_at);

struct swin_raw_writer;
/* type: SWIN_RAW_UINT8, SWIN_RAW_UINT16 or SWIN_RAW_FLOAT32; gzip: a gzip stream, else zlib. */
swin_status swin_raw_writer_open(struct swin_raw_writer **w, const char *path, swin_raw_header_writer header,
                                 bool gzip, const struct swin_raw_header *like, enum swin_raw_type type,
                                 int64_t volumes, swin_error *err);
/* The next bytes of voxels, in the file's order (i fastest, then j, k, the volume). */
swin_status swin_raw_writer_write(struct swin_raw_writer *w, const void *data, size_t bytes, swin_error *err);
/* Completes the file under its temporary name: every voxel written, the stream's size in the
 * header where it has a place (on failure the file is removed; abort the writer then). */
swin_status swin_raw_writer_finish(struct swin_raw_writer *w, swin_error *err);
/* Renames the finished file over path; frees the writer whatever happens. */
swin_status swin_raw_writer_publish(struct swin_raw_writer *w, swin_error *err);
/* Removes the temporary file and frees the writer; safe on NULL. */
void swin_raw_writer_abort(struct swin_raw_writer *w);

#endif
