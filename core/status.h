/* Named statuses and the error record every library function fills.
 * The library never prints, exits or aborts: it returns one of these and a message
 * that says what was wrong, where, and what to do. */
#ifndef SWIN_STATUS_H
#define SWIN_STATUS_H

#include <stddef.h>

/* Marks the functions the shared library exports; everything else in it is hidden. */
#ifndef SWIN_API
#if defined(__GNUC__)
#define SWIN_API __attribute__((visibility("default")))
#else
#define SWIN_API
#endif
#endif

typedef enum swin_status {
    SWIN_OK = 0,
    SWIN_ERR_ARG = 1,          /* a caller passed an invalid argument */
    SWIN_ERR_IO = 2,           /* a file could not be opened, read or written */
    SWIN_ERR_FORMAT = 3,       /* a file is not what it claims (truncated, corrupt, wrong kind) */
    SWIN_ERR_MODEL = 4,        /* an ONNX file that is not a Swin UNETR swinrun can run */
    SWIN_ERR_SHAPE = 5,        /* a tensor or volume has the wrong shape */
    SWIN_ERR_NOMEM = 6,        /* a host or device allocation failed */
    SWIN_ERR_MEM_LIMIT = 7,    /* the plan does not fit the requested memory limit */
    SWIN_ERR_BACKEND = 8,      /* the compute backend failed or is unavailable */
    SWIN_ERR_CANCELLED = 9,    /* the caller's abort callback asked to stop */
    SWIN_ERR_INTERNAL = 10,    /* a bug in swinrun: please report it */
} swin_status;

#define SWIN_ERROR_MSG_MAX 512

typedef struct swin_error {
    swin_status status;
    char msg[SWIN_ERROR_MSG_MAX];
} swin_error;

/* Records status and a printf-style message in *err (if err is not NULL); returns status.
 * The message is one line: control bytes in it are replaced by '?'. */
SWIN_API swin_status swin_error_set(swin_error *err, swin_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A short stable name for a status, e.g. "SWIN_ERR_MODEL". */
SWIN_API const char *swin_status_name(swin_status s);

#endif
