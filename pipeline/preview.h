/* A PNG preview: the three orthogonal mid slices of the preprocessed (RAS) volume side
 * by side, grey from the intensity window, labels overlaid in distinct colours.
 * Radiological display: axial and coronal show the patient's right on the image's left;
 * anterior (axial) and superior (coronal, sagittal) up; pixels square in millimetres. */
#ifndef SWIN_PIPELINE_PREVIEW_H
#define SWIN_PIPELINE_PREVIEW_H

#include <stdint.h>

#include "fileio/atomic_file.h"
#include "core/status.h"

/* vol and labels: (d0, d1, d2) on the RAS grid, d2 fastest; spacing in mm per axis; vol's
 * [black, white] shown as grey (values outside clip). labels: uint8 or uint16 (label_bytes 1
 * or 2). Leaves *af finished, for the caller to publish or abort (fileio/atomic_file.h). */
swin_status swin_preview_finish(struct swin_atomic_file *af, const char *path, const float *vol, float black,
                                float white, const void *labels, int label_bytes, const int64_t dim[3],
                                const double spacing[3], swin_error *err);

#endif
