/* DICOM UID syntax (uid.h). */
#include <string.h>

#include "core/sha256.h"
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

void swin_dcm_uid_derived(const char *seed, const char *series_uid, const char *what, char out[65])
{
    struct swin_sha256 h;
    unsigned char d[32];
    swin_sha256_init(&h);
    swin_sha256_update(&h, seed, strlen(seed) + 1);
    swin_sha256_update(&h, series_uid, strlen(series_uid) + 1);
    swin_sha256_update(&h, what, strlen(what));
    swin_sha256_final(&h, d);
    unsigned __int128 v = 0;
    for (int i = 0; i < 16; i++) v = v << 8 | d[i];
    char digits[40];
    int n = 0;
    do {
        digits[n++] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v);
    memcpy(out, "2.25.", 5);
    for (int i = 0; i < n; i++) out[5 + i] = digits[n - 1 - i];
    out[5 + n] = 0;
}
