#include "core/status.h"

#include <stdarg.h>
#include <stdio.h>

swin_status swin_error_set(swin_error *err, swin_status status, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        /* A message may quote what a hostile file holds: control bytes become '?', so that
         * every message stays one line of a log. */
        for (char *c = err->msg; *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7F) *c = '?';
        err->status = status;
    }
    return status;
}

const char *swin_status_name(swin_status s)
{
    switch (s) {
    case SWIN_OK: return "SWIN_OK";
    case SWIN_ERR_ARG: return "SWIN_ERR_ARG";
    case SWIN_ERR_IO: return "SWIN_ERR_IO";
    case SWIN_ERR_FORMAT: return "SWIN_ERR_FORMAT";
    case SWIN_ERR_MODEL: return "SWIN_ERR_MODEL";
    case SWIN_ERR_SHAPE: return "SWIN_ERR_SHAPE";
    case SWIN_ERR_NOMEM: return "SWIN_ERR_NOMEM";
    case SWIN_ERR_MEM_LIMIT: return "SWIN_ERR_MEM_LIMIT";
    case SWIN_ERR_BACKEND: return "SWIN_ERR_BACKEND";
    case SWIN_ERR_CANCELLED: return "SWIN_ERR_CANCELLED";
    case SWIN_ERR_INTERNAL: return "SWIN_ERR_INTERNAL";
    }
    return "SWIN_ERR_UNKNOWN";
}
