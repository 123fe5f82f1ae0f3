/* Geometry of one Swin block's attention windows on a stage grid (forward spec 3.4). */
#ifndef SWIN_CORE_WINDOW_GEOM_H
#define SWIN_CORE_WINDOW_GEOM_H

#include <stdbool.h>

/* win/shift are the effective values for this block (shift all 0 in even blocks or where
 * the stage is too small); padded[k] = ceil(L[k]/win[k])*win[k]. cfg_window is the configured
 * window, which defines the relative-position index (the shrink quirk, spec 3.4.3). The
 * shifted-window mask (spec 3.4.4) is used iff some shift[k] > 0. */
struct swin_window_geom {
    int L[3];
    int win[3];
    int shift[3];
    int padded[3];
    int cfg_window[3];
    int heads;
    float scale;   /* the attention logits' scale; 0: MONAI's 1/sqrt(head dim) */
};

/* The geometry of a block on grid L (spec 3.4 step 2): an axis with L <= cfg_window uses
 * window L and no shift; otherwise the window is cfg_window, shifted by cfg_window / 2 in
 * odd (shifted) blocks. Forward, the op tests and the benches all build it here. */
struct swin_window_geom swin_window_geom_make(const int L[3], const int cfg_window[3], int heads,
                                              bool shifted_block);

#endif
