/* Frames of encapsulated pixel data from its offset table or its fragments (frame_fragments.h). */
#include "formats/dicom/frame_fragments.h"

#include <stdbool.h>
#include <string.h>

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A JPEG 2000 codestream's first markers (SOC, SIZ), or a JP2 file's signature box. */
static bool starts_codestream(const struct swin_fragment *f)
{
    static const uint8_t soc_siz[4] = {0xff, 0x4f, 0xff, 0x51};
    static const uint8_t jp2_box[12] = {0, 0, 0, 0x0c, 'j', 'P', ' ', ' ', 0x0d, 0x0a, 0x87, 0x0a};
    return f->bytes && ((f->len >= sizeof soc_siz && !memcmp(f->bytes, soc_siz, sizeof soc_siz)) ||
                        (f->len >= sizeof jp2_box && !memcmp(f->bytes, jp2_box, sizeof jp2_box)));
}

static swin_status from_offsets(const uint8_t *bot, const struct swin_fragment *frag, size_t nfrag, int nframes,
                                size_t *first, const char *path, swin_error *err)
{
    uint64_t at = 0; /* the current fragment's item tag, from the first fragment's */
    size_t k = 0;
    for (int f = 0; f < nframes; f++) {
        const uint32_t off = le32(bot + 4 * (size_t)f);
        while (k < nfrag && at < off) at += 8 + (uint64_t)frag[k++].len;
        if (k == nfrag || at != off || (f && k == first[f - 1]) || (!f && off))
            return swin_error_set(err, SWIN_ERR_FORMAT,
                                  "%s: the pixel data's offset table puts frame %d at byte %u, not where a "
                                  "fragment starts after the previous frame's (the first at 0): a damaged file",
                                  path, f + 1, (unsigned)off);
        first[f] = k;
    }
    first[nframes] = nfrag;
    return SWIN_OK;
}

swin_status swin_frame_fragments(const uint8_t *bot, size_t bot_len, const struct swin_fragment *frag, size_t nfrag,
                                 int nframes, size_t *first, const char *path, swin_error *err)
{
    if (nframes < 1 || nfrag < (size_t)nframes)
        return swin_error_set(err, SWIN_ERR_FORMAT,
                              "%s: %zu pixel data fragments for %d frames: a damaged or truncated file", path, nfrag,
                              nframes);
    if (nframes == 1) { /* whatever the offset table says: the fragments are the frame */
        first[0] = 0, first[1] = nfrag;
        return SWIN_OK;
    }
    if (bot_len) {
        if (bot_len != 4 * (size_t)nframes)
            return swin_error_set(err, SWIN_ERR_FORMAT,
                                  "%s: the pixel data's offset table holds %zu bytes, not 4 for each of %d frames: a "
                                  "damaged file",
                                  path, bot_len, nframes);
        return from_offsets(bot, frag, nfrag, nframes, first, path, err);
    }
    if (nfrag == (size_t)nframes) {
        for (int f = 0; f <= nframes; f++) first[f] = (size_t)f;
        return SWIN_OK;
    }
    int f = 0;
    bool ok = starts_codestream(&frag[0]);
    for (size_t k = 0; k < nfrag && ok; k++)
        if (starts_codestream(&frag[k])) {
            ok = f < nframes;
            if (ok) first[f++] = k;
        }
    if (!ok || f != nframes)
        return swin_error_set(err, SWIN_ERR_FORMAT,
                              "%s: %zu pixel data fragments for %d frames, no offset table, and the fragments "
                              "that start a JPEG 2000 codestream do not make %d frames: a damaged file (re-export "
                              "it with an offset table, or uncompressed)",
                              path, nfrag, nframes, nframes);
    first[nframes] = nfrag;
    return SWIN_OK;
}
