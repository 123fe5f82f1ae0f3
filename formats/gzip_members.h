/* A .gz file written as consecutive gzip members, one per chunk of SWIN_GZ_CHUNK bytes of
 * the uncompressed stream. RFC 1952 (2.2) makes a gzip file a series of members, and gzip,
 * zlib's gzread and inflate with gzip decoding, Python's gzip module (nibabel) and libdeflate
 * read the concatenation as one stream. libdeflate compresses whole buffers: the chunks are
 * compressed by worker threads while the caller fills the next ones, and the members are
 * written in order from the caller's thread, so that a failed write is the caller's to report.
 * The file itself is the caller's (an atomic file: fileio/atomic_file.h). */
#ifndef SWIN_FORMATS_GZIP_MEMBERS_H
#define SWIN_FORMATS_GZIP_MEMBERS_H

#include <stddef.h>

#include "core/status.h"
#include "fileio/atomic_file.h"

/* Uncompressed bytes per member, and the libdeflate level (1..12) of swinrun's outputs: both
 * chosen by measurement on label maps (bench/results/pipeline_host.md). */
#define SWIN_GZ_CHUNK ((size_t)1 << 20)
#define SWIN_GZ_LEVEL 2

struct swin_gz_members;

/* Host bytes a writer at `level` with `threads` threads holds: its chunks, members and
 * compressors. */
size_t swin_gz_members_bytes(int level, int threads);

/* Writes to af->f at libdeflate level `level` (1..12) with `threads` threads: up to that many
 * workers beside the caller; 1 or fewer: the caller alone compresses. */
swin_status swin_gz_members_open(struct swin_gz_members **g, struct swin_atomic_file *af, int level, int threads,
                                 swin_error *err);
swin_status swin_gz_members_write(struct swin_gz_members *g, const void *data, size_t bytes, swin_error *err);
/* Compresses what is left and writes every member; then only free is left to call. */
swin_status swin_gz_members_finish(struct swin_gz_members *g, swin_error *err);
/* Stops the threads and frees everything (the file stays open); safe on NULL, after a failure. */
void swin_gz_members_free(struct swin_gz_members *g);

#endif
