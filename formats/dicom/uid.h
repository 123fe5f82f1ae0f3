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

/* A UID repeatable from its inputs: "2.25." and the first 128 bits of
 * SHA-256(seed NUL series_uid NUL what) as a decimal integer (PS3.5 B.2, a UUID-derived UID;
 * at most 44 characters). what names the attribute, e.g. "1.2.840.10008.5.1.4.1.1.66.4 series". */
void swin_dcm_uid_derived(const char *seed, const char *series_uid, const char *what, char out[65]);

#ifdef __cplusplus
}
#endif

#endif
