/* JPEG 2000 and HTJ2K (ISO 15444-1 and -15) pixel data of one DICOM frame, decoded with
 * OpenJPEG from memory. Nothing prints: OpenJPEG's messages are caught, its first error
 * becomes the one-line message. */
#ifndef SWIN_DICOM_J2K_DECODE_H
#define SWIN_DICOM_J2K_DECODE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" { /* status.h declares C functions without saying so */
#endif

#include "core/status.h"

/* What the DICOM attributes say the frame holds. BitsStored and HighBit are not needed: the
 * codestream says its own precision. */
struct swin_j2k_expect {
    int rows, cols;     /* Rows, Columns */
    int bits_allocated; /* BitsAllocated: the widest precision a sample can hold */
    int is_signed;      /* PixelRepresentation */
};

/* Decodes a codestream (or a JP2 file) of one grey component into out (rows x cols stored
 * values, row by row). Its header (a codestream's SIZ marker before OpenJPEG is called, then
 * OpenJPEG's reading of it) is checked against e before any pixel is decoded: one component
 * of Rows x Columns samples, of a precision BitsAllocated holds; anything else, or a
 * truncated or corrupt codestream, is refused naming `what` (the file).
 * The values are those of the codestream, at its precision whatever BitsStored says; where
 * its signedness is not PixelRepresentation's, its precision's bits are read as
 * PixelRepresentation says (two's complement or not), as pydicom does by default. */
swin_status swin_j2k_decode(const uint8_t *bytes, size_t n, const struct swin_j2k_expect *e, int32_t *out,
                            const char *what, swin_error *err);

#ifdef __cplusplus
}
#endif

#endif
