/* Volumes: how every activation is held, by every layer.
 *
 * A volume is one batch item, channels-last:
 *   element (z, y, x, ch) at data[((z*h + y)*w + x)*pitch + ch],  ch in [0, c), pitch >= c.
 * A pitch larger than c makes a view of a channel slice of a wider tensor. Elements are
 * stored as `dtype`. */
#ifndef SWIN_CORE_VOL_H
#define SWIN_CORE_VOL_H

#include <stddef.h>

/* Storage type of activations (and of the weights the backend keeps). F32 is 0, so a
 * zero-initialised volume is float32. */
enum swin_dtype { SWIN_F32 = 0, SWIN_F16 = 1 };

static inline size_t swin_dtype_bytes(enum swin_dtype t) { return t == SWIN_F16 ? 2 : 4; }

struct swin_vol {
    void *data;           /* elements of dtype, layout above */
    int d, h, w, c;
    int pitch;
    enum swin_dtype dtype;
};

/* The data of a float32 volume (the CPU backend's only storage type). */
static inline float *swin_vol_f32(struct swin_vol v) { return (float *)v.data; }

static inline size_t swin_vol_voxels(struct swin_vol v) { return (size_t)v.d * (size_t)v.h * (size_t)v.w; }

#endif
