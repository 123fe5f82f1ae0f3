/* DICOM UID syntax (uid.h). */
#include <string.h>

#include "formats/dicom/uid.h"

bool swin_dcm_uid_valid(const char *uid)
{
    size_t n = strlen(uid);
    if (n == 0 || n > 64) return false;
    const char *c = uid;
    for (;;) {
        const char *start = c;
        while (*c >= '0' && *c <= '9') c++;
        if (c == start || (*start == '0' && c - start > 1)) return false;
        if (*c == 0) return true;
        if (*c++ != '.') return false;
    }
}
