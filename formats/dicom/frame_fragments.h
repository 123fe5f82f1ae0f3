/* Which fragments of an encapsulated pixel data element hold each frame (DICOM PS3.5 A.4),
 * for the codecs swinrun decodes itself (JPEG 2000, HTJ2K): DCMTK's own decoders find their
 * frames themselves.
 *
 * The pixel data is a Basic Offset Table item, then fragments. A frame is one or more
 * consecutive fragments (a single frame: all of them). Where they are:
 *   - the offset table, when it is not empty: one offset per frame, each the distance from
 *     the first fragment's item tag to its frame's first fragment's item tag (every item
 *     counts its 8-byte tag and length, then its value);
 *   - else one fragment per frame, when there are as many fragments as frames;
 *   - else each frame starts at a fragment that starts a JPEG 2000 codestream (SOC, then SIZ:
 *     FF 4F FF 51) or a JP2 file (its signature box), and the first fragment must be one: an
 *     encoder splits a codestream wherever it likes, but never before its SOC marker.
 * Anything else (offsets not on fragment boundaries or not increasing, fragments that do not
 * make the frames) is refused naming the file: a damaged file, whose frames cannot be told
 * apart. */
#ifndef SWIN_DICOM_FRAME_FRAGMENTS_H
#define SWIN_DICOM_FRAME_FRAGMENTS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" { /* status.h declares C functions without saying so */
#endif

#include "core/status.h"

/* One fragment: its value's bytes (NULL when empty) and length. */
struct swin_fragment {
    const uint8_t *bytes;
    uint32_t len;
};

/* first[f] (f < nframes): the index in frag of frame f's first fragment; first[nframes] = nfrag
 * (frame f is fragments first[f] .. first[f + 1] - 1). bot: the offset table item's value
 * (bot_len bytes, 32-bit little-endian offsets; bot_len 0: empty). */
swin_status swin_frame_fragments(const uint8_t *bot, size_t bot_len, const struct swin_fragment *frag, size_t nfrag,
                                 int nframes, size_t *first, const char *path, swin_error *err);

#ifdef __cplusplus
}
#endif

#endif
