/* Whether an input is DICOM (series.h), in every build: without DCMTK such an input gets
 * "built without DICOM support" rather than a NIfTI reader's complaint. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "formats/dicom/series.h"

int swin_dcm_is_dicom_input(const char *path)
{
    struct stat sb;
    if (!path || stat(path, &sb) != 0) return 0;
    if (S_ISDIR(sb.st_mode)) return 1;
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    unsigned char pre[132];
    size_t got = fread(pre, 1, sizeof pre, f);
    fclose(f);
    return got == sizeof pre && !memcmp(pre + 128, "DICM", 4);
}
