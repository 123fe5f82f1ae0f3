/* The library's version: what `swinrun --version` prints and the DICOM outputs record as the
 * software's. */
#ifndef SWIN_VERSION_H
#define SWIN_VERSION_H

#define SWINRUN_VERSION "0.1.0"

#endif
