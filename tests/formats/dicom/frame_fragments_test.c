/* Which fragments make each frame (formats/dicom/frame_fragments.h), against layouts worked
 * out by hand from DICOM PS3.5 A.4: an offset table over frames of two and one fragments (each
 * offset counting the 8-byte item headers), one fragment per frame without a table, frames
 * found by their JPEG 2000 SOC / SIZ markers or JP2 signature without a table, a single frame
 * of three fragments; and refused, with the reason in the message: offsets off a fragment
 * boundary, repeated, not starting at 0 or past the end, a table of the wrong length, fewer
 * fragments than frames, a first fragment that starts no codestream, more or fewer
 * codestreams than frames. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "formats/dicom/frame_fragments.h"

static int failures;

static const uint8_t soc[8] = {0xff, 0x4f, 0xff, 0x51, 0, 0x29, 0, 0};
static const uint8_t jp2[16] = {0, 0, 0, 0x0c, 'j', 'P', ' ', ' ', 0x0d, 0x0a, 0x87, 0x0a, 0, 0, 0, 0x14};
static const uint8_t body[10] = {0x12, 0x34, 0xff, 0x90, 0, 1, 2, 3, 4, 5};

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

/* want: first[0..nframes], or NULL for a refusal whose message holds `words`. */
static void expect(const char *what, const uint8_t *bot, size_t bot_len, const struct swin_fragment *frag,
                   size_t nfrag, int nframes, const size_t *want, const char *words)
{
    size_t first[16];
    memset(first, 0xee, sizeof first);
    swin_error err = {SWIN_OK, ""};
    swin_status st = swin_frame_fragments(bot, bot_len, frag, nfrag, nframes, first, "f.dcm", &err);
    int ok;
    if (want)
        ok = !st && !memcmp(first, want, (size_t)(nframes + 1) * sizeof *first);
    else
        ok = st == SWIN_ERR_FORMAT && strstr(err.msg, words) && strstr(err.msg, "f.dcm");
    printf("%s %s%s%s\n", ok ? "ok  " : "FAIL", what, st ? ": " : "", st ? err.msg : "");
    failures += !ok;
}

int main(void)
{
    /* frame 0 = fragments 0, 1 (8 + 8 and 8 + 10 bytes), frame 1 = fragment 2, frame 2 = 3, 4 */
    const struct swin_fragment split[5] = {{soc, 8}, {body, 10}, {soc, 8}, {soc, 8}, {body, 10}};
    uint8_t bot[12];
    put32(bot, 0), put32(bot + 4, 16 + 18), put32(bot + 8, 16 + 18 + 16);
    const size_t split_want[4] = {0, 2, 3, 5};
    expect("offset table, frames of 2, 1 and 2 fragments", bot, 12, split, 5, 3, split_want, NULL);

    put32(bot + 4, 16 + 17);
    expect("offset inside a fragment: refused", bot, 12, split, 5, 3, NULL, "frame 2 at byte 33");
    put32(bot + 4, 0);
    expect("offset repeated: refused", bot, 12, split, 5, 3, NULL, "frame 2 at byte 0");
    put32(bot, 16), put32(bot + 4, 34);
    expect("first offset not 0: refused", bot, 12, split, 5, 3, NULL, "frame 1 at byte 16");
    put32(bot, 0), put32(bot + 8, 200);
    expect("offset past the last fragment: refused", bot, 12, split, 5, 3, NULL, "frame 3 at byte 200");
    expect("table of 8 bytes for 3 frames: refused", bot, 8, split, 5, 3, NULL, "holds 8 bytes");

    const struct swin_fragment one_each[3] = {{body, 10}, {body, 10}, {body, 10}};
    const size_t one_want[4] = {0, 1, 2, 3};
    expect("no table, as many fragments as frames", NULL, 0, one_each, 3, 3, one_want, NULL);
    expect("no table, fewer fragments than frames: refused", NULL, 0, one_each, 3, 4, NULL, "3 pixel data fragments for 4");

    expect("no table, frames at their SOC markers", NULL, 0, split, 5, 3, split_want, NULL);
    const struct swin_fragment jp2s[4] = {{jp2, 16}, {body, 10}, {jp2, 16}, {body, 10}};
    const size_t jp2_want[3] = {0, 2, 4};
    expect("no table, frames at their JP2 signatures", NULL, 0, jp2s, 4, 2, jp2_want, NULL);
    expect("no table, 3 codestreams for 2 frames: refused", NULL, 0, split, 5, 2, NULL, "do not make 2 frames");
    expect("no table, 3 codestreams for 4 frames: refused", NULL, 0, split, 5, 4, NULL, "do not make 4 frames");
    const struct swin_fragment headless[4] = {{body, 10}, {soc, 8}, {body, 10}, {soc, 8}};
    expect("no table, the first fragment no codestream: refused", NULL, 0, headless, 4, 2, NULL,
           "do not make 2 frames");

    const size_t single_want[2] = {0, 3};
    expect("one frame: every fragment, whatever the table", bot, 4, split, 3, 1, single_want, NULL);
    return failures ? 1 : 0;
}
