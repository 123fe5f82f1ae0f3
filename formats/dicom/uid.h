/* DICOM UID syntax (PS3.5 9.1): what an output may copy from a CT and reference. */
#ifndef SWIN_DICOM_UID_H
#define SWIN_DICOM_UID_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 to 64 characters, components of digits separated by single dots, no component with a
 * leading zero (but "0" itself). */
bool swin_dcm_uid_valid(const char *uid);

#ifdef __cplusplus
}
#endif

#endif
