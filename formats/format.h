/* A volume format: the reader of a CT input and the writer of what the pipeline makes of it
 * on the input's grid. The pipeline (pipeline/segment.c) runs every format through this
 * interface and finds them in one table (formats/registry.c); a format is a folder of
 * formats/ implementing it, and names nothing of the pipeline.
 *
 * One run, in this order: check (before any work) -> read -> release (once the pipeline has
 * its own copy of the intensities) -> open_outputs -> for each plane k of the input grid:
 * hu_plane, put_labels -> put_probs (class c, plane k; only when probabilities were asked
 * for) -> finish (every output complete under a temporary name) -> publish (all appear
 * together) or discard (none does) -> close. Planes: i fastest, nx * ny voxels. */
#ifndef SWIN_FORMATS_FORMAT_H
#define SWIN_FORMATS_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/segment_params.h"
#include "core/segment_report.h"
#include "core/series_list.h"
#include "core/status.h"

/* Limits on a volume, in every format and on the pipeline's grids: they reject absurd
 * headers before anything large is allocated. */
#define SWIN_VOLUME_MAX_DIM 16384
#define SWIN_VOLUME_MAX_VOXELS ((int64_t)1 << 31)

/* What a reader gives the pipeline. */
struct swin_format_input {
    const char *name;       /* for messages: the (first) input path */
    int64_t dim[3];         /* nx, ny, nz */
    double affine[4][4];    /* voxel (i, j, k) -> RAS+ mm */
    int channels;           /* the intensities' channels (a CT: 1) */
    const float *hu;        /* channels * nx * ny * nz intensities (HU), one channel after another,
                               until release */
    size_t read_peak;       /* the host bytes reading held at its largest */
    size_t kept_bytes;      /* the host bytes the format holds from release to close (hu_plane's) */
    bool hu_kept;           /* release keeps hu itself (then kept_bytes counts it) */
    void *state;            /* the format's own */
};

struct swin_format {
    const char *name;
    /* Whether path is this format's input (by its name or its first bytes). */
    int (*claims)(const char *path);
    /* Whether several paths can make one input (e.g. the files of a series). */
    int series;
    /* The inputs and output names and the options this format can honour, before any work:
     * each refusal one line saying what to do. */
    swin_status (*check)(const char *const *paths, int npaths, const char *out, const swin_segment_params *p,
                         swin_error *err);
    /* Optional: the channels the inputs hold, from their headers alone, so that a count the
     * model cannot take is refused before any volume is read; 0 when unknown (read says why). */
    int (*channels)(const char *const *paths, int npaths);
    /* out: the output path check() took (what the reader must make referable depends on it);
     * threads: how many the reader may use (a DICOM series' files decoded side by side), at
     * least 1. */
    swin_status (*read)(const char *const *paths, int npaths, const char *out, const swin_segment_params *p,
                        int threads, struct swin_format_input *in, swin_segment_report *rep, swin_error *err);
    /* The pipeline is done with in->hu; the format may free it (hu_plane gets its planes back
     * from what the format keeps: kept_bytes). */
    void (*release)(struct swin_format_input *in);
    /* Intensities of plane k of the first channel (for the organ statistics), valid until the
     * next call. */
    swin_status (*hu_plane)(struct swin_format_input *in, int64_t k, const float **plane, swin_error *err);
    /* classes: the model's output channels (the label values run 0..classes-1; one channel: 0
     * and 1); threads: how many the format may use on the outputs (compression), at least 1.
     * *outputs: the format's open outputs. */
    swin_status (*open_outputs)(struct swin_format_input *in, const char *out, const swin_segment_params *p,
                                int classes, int threads, void **outputs, swin_error *err);
    /* plane: the labels, or in a multi-label run (swin_mask_channels(p->activation, classes) > 0)
     * bit masks, bit c channel c's mask; every format writes both. */
    swin_status (*put_labels)(void *outputs, int64_t k, const uint16_t *plane, swin_error *err);
    swin_status (*put_probs)(void *outputs, int c, int64_t k, const float *plane, swin_error *err);
    swin_status (*finish)(void *outputs, swin_segment_report *rep, swin_error *err);
    /* Renames every finished output over its name; frees outputs whatever happens. */
    swin_status (*publish)(void *outputs, swin_segment_report *rep, swin_error *err);
    /* Removes what is still temporary and frees outputs; safe on NULL. */
    void (*discard)(void *outputs);
    void (*close)(struct swin_format_input *in);
    /* Optional (NULL when the format has no studies): the series of the inputs, and the one
     * read() would take with that series asked for (pick: a UID or a number; NULL: the default). */
    swin_status (*list)(const char *const *paths, int npaths, const char *pick, struct swin_series_list *out,
                        swin_error *err);
};

/* The format whose claims() takes path, or NULL. */
const struct swin_format *swin_format_claiming(const char *path);
/* The format that reads path: the one claiming it, else the fallback (NIfTI, whose reader
 * says what is wrong with a file that is none of them). */
const struct swin_format *swin_format_for(const char *path);
/* The format of that name ("NIfTI", "DICOM"), or NULL. */
const struct swin_format *swin_format_named(const char *name);

#endif
