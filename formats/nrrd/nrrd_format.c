/* NRRD as a format (formats/format.h): one .nrrd or .nhdr volume in (3D Slicer's default; several
 * channels on a first or last axis that is not spatial); out a .nrrd label map on its grid
 * (uint8 up to 256 classes, else uint16; a multi-label run: one mask per channel on a last
 * "list" axis) and, when asked, the class probabilities the same way as float32, voxels gzip
 * (formats/rawvol/raw_format.h). */
#include "formats/label_outputs.h"
#include "formats/nrrd/nrrd_header.h"
#include "formats/rawvol/raw_format.h"

static const struct swin_raw_kind nrrd = {
    .name = "NRRD", .out_ext = ".nrrd", .channels_how = "on a first or last axis of kind list or vector",
    .read_header = swin_nrrd_header_read, .write_header = swin_nrrd_header_write, .gzip = true};

static int nrrd_claims(const char *path)
{
    return swin_nrrd_name(path);
}

static int nrrd_channels(const char *const *paths, int npaths)
{
    return swin_raw_format_channels(&nrrd, paths, npaths);
}

static swin_status nrrd_check(const char *const *paths, int npaths, const char *out, const swin_segment_params *p,
                              swin_error *err)
{
    return swin_raw_format_check(&nrrd, paths, npaths, out, p, err);
}

static swin_status nrrd_read(const char *const *paths, int npaths, const char *out, const swin_segment_params *p,
                             int threads, struct swin_format_input *in, swin_segment_report *rep, swin_error *err)
{
    return swin_raw_format_read(&nrrd, paths, npaths, in, err);
}

const struct swin_format swin_format_nrrd = {
    .name = "NRRD", .claims = nrrd_claims, .check = nrrd_check, .channels = nrrd_channels, .read = nrrd_read,
    .release = swin_raw_format_release, .hu_plane = swin_raw_format_hu_plane,
    .open_outputs = swin_raw_format_open_outputs, .put_labels = swin_label_outputs_put_labels,
    .put_probs = swin_label_outputs_put_probs, .finish = swin_label_outputs_finish,
    .publish = swin_label_outputs_publish, .discard = swin_label_outputs_discard, .close = swin_raw_format_close,
};
