/* DICOM in a build without DCMTK: the format still claims a series (detect.c), so that such
 * an input gets this refusal rather than a NIfTI reader's complaint. */
#include "formats/dicom/series.h"
#include "formats/format.h"

static swin_status refuse(const char *const *paths, int npaths, const char *out, const swin_segment_params *p,
                          swin_error *err)
{
    return swin_error_set(err, SWIN_ERR_ARG,
                          "%s: DICOM input needs swinrun built with DCMTK (install libdcmtk-dev, configure with "
                          "-DSWIN_DICOM=ON); or convert the series to NIfTI first",
                          npaths > 0 && paths ? paths[0] : "input");
}

const struct swin_format swin_format_dicom = {.name = "DICOM", .claims = swin_dcm_is_dicom_input, .series = 1,
                                              .check = refuse};
