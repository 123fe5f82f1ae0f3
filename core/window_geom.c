#include "core/window_geom.h"

struct swin_window_geom swin_window_geom_make(const int L[3], const int cfg_window[3], int heads,
                                              bool shifted_block)
{
    struct swin_window_geom g = {.heads = heads};
    for (int k = 0; k < 3; k++) {
        const int w = cfg_window[k];
        g.L[k] = L[k];
        g.cfg_window[k] = w;
        g.win[k] = L[k] <= w ? L[k] : w;
        g.shift[k] = (L[k] <= w || !shifted_block) ? 0 : w / 2;
        g.padded[k] = (L[k] + g.win[k] - 1) / g.win[k] * g.win[k];
    }
    return g;
}
