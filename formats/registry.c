/* The formats swinrun reads and writes (format.h): asked in this order; the last is the
 * fallback for a path no format claims. A new format is one line here. */
#include <string.h>

#include "formats/format.h"

extern const struct swin_format swin_format_dicom, swin_format_metaimage, swin_format_nrrd, swin_format_nifti;

static const struct swin_format *const formats[] = {
    &swin_format_dicom,
    &swin_format_metaimage,
    &swin_format_nrrd,
    &swin_format_nifti,
};
#define NFORMATS (sizeof formats / sizeof formats[0])

const struct swin_format *swin_format_claiming(const char *path)
{
    for (size_t i = 0; i < NFORMATS; i++)
        if (formats[i]->claims(path)) return formats[i];
    return NULL;
}

const struct swin_format *swin_format_for(const char *path)
{
    const struct swin_format *f = swin_format_claiming(path);
    return f ? f : formats[NFORMATS - 1];
}

const struct swin_format *swin_format_named(const char *name)
{
    for (size_t i = 0; i < NFORMATS; i++)
        if (!strcmp(formats[i]->name, name)) return formats[i];
    return NULL;
}
