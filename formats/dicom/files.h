/* The files of DICOM inputs (study.h says which): folders read recursively, or through the
 * DICOMDIR they hold; DICOMDIR files through their records; other files as they are. */
#ifndef SWIN_DICOM_FILES_H
#define SWIN_DICOM_FILES_H

#include "core/status.h"

#define SWIN_DCM_MAX_FILES 100000
#define SWIN_DCM_MAX_DEPTH 16 /* folders below an input folder */

struct swin_dcm_files {
    char **v; /* n paths, each folder's files sorted by name (messages are reproducible) */
    int n, cap;
};

swin_status swin_dcm_files_collect(const char *const *paths, int npaths, struct swin_dcm_files *l, swin_error *err);
void swin_dcm_files_free(struct swin_dcm_files *l);

#endif
