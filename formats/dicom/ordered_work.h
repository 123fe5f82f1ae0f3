/* n items of work (a series' files, a file's frames) run side by side, with the refusal that
 * a sequential loop would have given: the first failing item's. */
#ifndef SWIN_DICOM_ORDERED_WORK_H
#define SWIN_DICOM_ORDERED_WORK_H

#ifdef __cplusplus
extern "C" { /* status.h declares C functions without saying so */
#endif

#include "core/status.h"

/* Item i: SWIN_OK, or a refusal in *err. */
typedef swin_status (*swin_dcm_item_fn)(void *user, int i, swin_error *err);

/* fn(user, i) for i < n on up to `threads` threads (at least 1, the caller's included; where
 * one cannot start, the others do its share), each taking the next item. After item i fails,
 * items past i are skipped and those before it still run, so the refusal returned is that of
 * the first item that fails, whatever the thread count. */
swin_status swin_dcm_run_ordered(int n, int threads, swin_dcm_item_fn fn, void *user, swin_error *err);

#ifdef __cplusplus
}
#endif

#endif
