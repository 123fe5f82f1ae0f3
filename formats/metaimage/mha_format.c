/* MetaImage as a format (formats/format.h): one .mha or .mhd volume in (ITK's format, as
 * Grand Challenge and ITK-based tools exchange CTs; several channels as a fourth axis or as
 * ElementNumberOfChannels); out a .mha label map on its grid (uint8 up to 256 classes, else
 * uint16; a multi-label run: a 4D uint8 image of one mask per channel) and, when asked, the
 * class probabilities as a 4D float32 .mha (formats/rawvol/raw_format.h). */
#include "formats/label_outputs.h"
#include "formats/metaimage/mha_header.h"
#include "formats/rawvol/raw_format.h"

static const struct swin_raw_kind mha = {
    .name = "MetaImage", .out_ext = ".mha", .channels_how = "as a fourth axis or ElementNumberOfChannels",
    .read_header = swin_mha_header_read, .write_header = swin_mha_header_write, .gzip = false};

static int mha_claims(const char *path)
{
    return swin_mha_name(path);
}

static int mha_channels(const char *const *paths, int npaths)
{
    return swin_raw_format_channels(&mha, paths, npaths);
}

static swin_status mha_check(const char *const *paths, int npaths, const char *out, const swin_segment_params *p,
                             swin_error *err)
{
    return swin_raw_format_check(&mha, paths, npaths, out, p, err);
}

static swin_status mha_read(const char *const *paths, int npaths, const char *out, const swin_segment_params *p,
                            int threads, struct swin_format_input *in, swin_segment_report *rep, swin_error *err)
{
    return swin_raw_format_read(&mha, paths, npaths, in, err);
}

const struct swin_format swin_format_metaimage = {
    .name = "MetaImage", .claims = mha_claims, .check = mha_check, .channels = mha_channels, .read = mha_read,
    .release = swin_raw_format_release, .hu_plane = swin_raw_format_hu_plane,
    .open_outputs = swin_raw_format_open_outputs, .put_labels = swin_label_outputs_put_labels,
    .put_probs = swin_label_outputs_put_probs, .finish = swin_label_outputs_finish,
    .publish = swin_label_outputs_publish, .discard = swin_label_outputs_discard, .close = swin_raw_format_close,
};
