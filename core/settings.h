/* The settings a library message may ask the user to change, named in the words of the
 * program the user drives. The library serves a CLI, Python, a DICOM node, a Triton backend and
 * C programs: a message that says "--cube" reads wrong in all but the first. Messages ask
 * swin_setting for the name instead; the program says once, at start, whose words to use
 * (swin_set_vocabulary); the C API's field names are the default.
 * (settings.c's table names each setting in each vocabulary). */
#ifndef SWIN_SETTINGS_H
#define SWIN_SETTINGS_H

#include "../core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum swin_vocabulary {
    SWIN_VOCAB_C = 0,  /* the C API's struct fields and functions (the default) */
    SWIN_VOCAB_CLI,    /* swinrun's command-line flags */
    SWIN_VOCAB_PYTHON, /* the Python package's keyword arguments */
    SWIN_VOCAB_NODE,   /* swinrun serve's configuration keys */
    SWIN_VOCAB_TRITON, /* the Triton backend's model parameters */
    SWIN_VOCAB_COUNT
} swin_vocabulary;

/* Whose words the library's messages use from now on, for the whole process (call it once,
 * before the first model is loaded). An out-of-range value keeps the current one. */
SWIN_API void swin_set_vocabulary(swin_vocabulary v);

enum swin_setting {
    SWIN_SETTING_CUBE,
    SWIN_SETTING_PRECISION,
    SWIN_SETTING_BACKEND,
    SWIN_SETTING_MEM_LIMIT,
    SWIN_SETTING_BLEND_ON,
    SWIN_SETTING_NORM_GROUPS,
    SWIN_SETTING_SPACING,
    SWIN_SETTING_SERIES,
    SWIN_SETTING_SEGMENT_PLAN, /* what says the bytes a segmentation of a volume takes */
    SWIN_SETTING_COUNT
};

/* The setting's name in the process's vocabulary (a static string). */
const char *swin_setting(enum swin_setting s);

#ifdef __cplusplus
}
#endif

#endif
