/* A series' slices decoded file by file (swin_dcm_read_pixels per file), several files at a
 * time on threads of their own. */
#ifndef SWIN_DICOM_DECODE_FILES_H
#define SWIN_DICOM_DECODE_FILES_H

#include "formats/dicom/dcm.h"

/* s[0..n) sorted by file then frame, s[k] into out[k]; the runs of one path are one file's
 * slices. threads (at least 1, the caller's included) take the files in turn, or share a
 * file's frames where there are fewer files than threads (ordered_work.h: a refusal is that
 * of the first file, in s's order, that has one, whatever the thread count). */
swin_status swin_dcm_decode_files(const struct swin_dcm_slice *const *s, float *const *out, int n, int threads,
                                  swin_error *err);

#endif
