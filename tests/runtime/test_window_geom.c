/* swin_window_geom_make against geometries worked out by hand from the forward pass's rules
 * (an axis with L <= window takes window L and no shift; otherwise window w, shifted by
 * w / 2 in odd blocks; padded = ceil(L / win) * win). The op tests and forward() take their
 * geometry from this constructor, so it is checked here against literal numbers. */
#include "core/window_geom.h"

#include <stdio.h>

#include "tests/common/check.h"

struct want {
    int L[3], cfg[3], heads;
    bool shifted;
    int win[3], shift[3], padded[3];
};

static bool same3(const int a[3], const int b[3]) { return a[0] == b[0] && a[1] == b[1] && a[2] == b[2]; }

int main(void)
{
    static const struct want cases[] = {
        /* stage 1 of a 96^3 window: 24^3 grid, window 7: 4 windows per axis, padded to 28 */
        {{24, 24, 24}, {7, 7, 7}, 3, false, {7, 7, 7}, {0, 0, 0}, {28, 28, 28}},
        {{24, 24, 24}, {7, 7, 7}, 3, true, {7, 7, 7}, {3, 3, 3}, {28, 28, 28}},
        /* stage 4 of a 96^3 window: 3^3 grid, the window shrinks to the grid, never shifted */
        {{3, 3, 3}, {7, 7, 7}, 24, true, {3, 3, 3}, {0, 0, 0}, {3, 3, 3}},
        /* L equal to the window: one window, not shifted */
        {{7, 7, 7}, {7, 7, 7}, 6, true, {7, 7, 7}, {0, 0, 0}, {7, 7, 7}},
        /* mixed axes and an even window: 8 <= 8 shrinks nothing and does not shift; 9 > 8 shifts by 4 */
        {{8, 9, 17}, {8, 8, 5}, 2, true, {8, 8, 5}, {0, 4, 2}, {8, 16, 20}},
        {{8, 9, 17}, {8, 8, 5}, 2, false, {8, 8, 5}, {0, 0, 0}, {8, 16, 20}},
        /* window 1 */
        {{4, 5, 6}, {1, 1, 1}, 1, true, {1, 1, 1}, {0, 0, 0}, {4, 5, 6}},
    };
    bool ok = true;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct want *c = &cases[i];
        const struct swin_window_geom g = swin_window_geom_make(c->L, c->cfg, c->heads, c->shifted);
        char what[160];
        snprintf(what, sizeof what, "L %dx%dx%d cfg %dx%dx%d %s: win %dx%dx%d shift %d,%d,%d padded %dx%dx%d",
                 c->L[0], c->L[1], c->L[2], c->cfg[0], c->cfg[1], c->cfg[2], c->shifted ? "shifted" : "unshifted",
                 g.win[0], g.win[1], g.win[2], g.shift[0], g.shift[1], g.shift[2], g.padded[0], g.padded[1],
                 g.padded[2]);
        ok &= check_true(what, same3(g.L, c->L) && same3(g.cfg_window, c->cfg) && same3(g.win, c->win) &&
                                   same3(g.shift, c->shift) && same3(g.padded, c->padded) && g.heads == c->heads);
    }
    return test_exit(ok);
}
