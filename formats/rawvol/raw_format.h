/* The format.h entries the text-header formats (MetaImage, NRRD) share: one volume file in,
 * its float32 intensities kept for the statistics; out the label map (or a multi-label run's
 * masks) and the probabilities in the same format on its grid (label_outputs.h). A format
 * describes its kind and wraps check, channels and read, which need it; the other entries
 * are these functions as they are. */
#ifndef SWIN_FORMATS_RAW_FORMAT_H
#define SWIN_FORMATS_RAW_FORMAT_H

#include <stdbool.h>

#include "formats/format.h"
#include "formats/rawvol/raw_header.h"
#include "formats/rawvol/raw_write.h"

struct swin_raw_kind {
    const char *name;          /* "MetaImage", for messages */
    const char *out_ext;       /* what its outputs are named: ".mha" */
    const char *channels_how;  /* how one file holds several channels, for a message */
    swin_status (*read_header)(const char *path, struct swin_raw_header *h, swin_error *err);
    swin_raw_header_writer write_header;
    bool gzip;                 /* its outputs' voxels a gzip stream, else zlib */
};

int swin_raw_format_channels(const struct swin_raw_kind *k, const char *const *paths, int npaths);
swin_status swin_raw_format_check(const struct swin_raw_kind *k, const char *const *paths, int npaths,
                                  const char *out, const swin_segment_params *p, swin_error *err);
swin_status swin_raw_format_read(const struct swin_raw_kind *k, const char *const *paths, int npaths,
                                 struct swin_format_input *in, swin_error *err);
void swin_raw_format_release(struct swin_format_input *in);
swin_status swin_raw_format_hu_plane(struct swin_format_input *in, int64_t k, const float **plane, swin_error *err);
swin_status swin_raw_format_open_outputs(struct swin_format_input *in, const char *out, const swin_segment_params *p,
                                         int classes, int threads, void **outputs, swin_error *err);
void swin_raw_format_close(struct swin_format_input *in);

#endif
