/* swin_segment_dicom in a build without DCMTK. */
#include "runtime/swinrun.h"

swin_status swin_segment_dicom(swin_context_t *ctx, const char *const *inputs, int ninputs, const char *output_path,
                               const swin_segment_params *params, swin_segment_report *report, swin_error *err)
{
    return swin_error_set(err, SWIN_ERR_ARG,
                          "%s: DICOM input needs swinrun built with DCMTK (install libdcmtk-dev, configure with "
                          "-DSWIN_DICOM=ON); or convert the series to NIfTI first",
                          ninputs > 0 && inputs ? inputs[0] : "input");
}
