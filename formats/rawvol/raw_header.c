/* What the text-header formats share in checking their headers (raw_header.h). */
#include "formats/rawvol/raw_header.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *swin_raw_trim(char *s)
{
    while (isspace((unsigned char)*s)) s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1])) *--e = 0;
    return s;
}

int swin_raw_header_line(FILE *f, char *line, size_t n, long *read, char **text)
{
    if (!fgets(line, (int)n, f)) return 0;
    size_t len = strlen(line);
    *read += (long)len;
    if (memchr(line, 0, len) || (len == n - 1 && line[len - 1] != '\n') || *read > SWIN_RAW_HEADER_MAX) return -1;
    *text = swin_raw_trim(line);
    return 1;
}

bool swin_raw_keep(char **slot, const char *value)
{
    char *copy = strdup(value);
    if (!copy) return false;
    free(*slot);
    *slot = copy;
    return true;
}

bool swin_raw_data_file(const char *path, const char *name, struct swin_raw_header *h, const char **why)
{
    if (!*name) {
        snprintf(h->data_path, sizeof h->data_path, "%s", path);
        return true;
    }
    while (!strncmp(name, "./", 2)) name += 2; /* "./x": x in the header's folder (teem and ITK read it) */
    if (!*name) {
        *why = "no file named";
        return false;
    }
    if (strchr(name, '/') || strchr(name, '\\') || !strcmp(name, "..") || !strcmp(name, ".")) {
        *why = "the voxels must be in the header's own folder, named without a folder";
        return false;
    }
    const char *slash = strrchr(path, '/');
    int dir = slash ? (int)(slash - path + 1) : 0;
    if (snprintf(h->data_path, sizeof h->data_path, "%.*s%s", dir, path, name) >= (int)sizeof h->data_path) {
        *why = "the path is too long";
        return false;
    }
    return true;
}

bool swin_raw_directions_ok(const struct swin_raw_header *h)
{
    const double(*d)[3] = h->direction;
    for (int a = 0; a < 3; a++) {
        double len = 0;
        for (int b = 0; b < 3; b++) {
            if (!isfinite(d[a][b])) return false;
            len += d[a][b] * d[a][b];
        }
        if (fabs(sqrt(len) - 1.0) > 1e-3) return false;
    }
    double det = d[0][0] * (d[1][1] * d[2][2] - d[1][2] * d[2][1]) - d[0][1] * (d[1][0] * d[2][2] - d[1][2] * d[2][0]) +
                 d[0][2] * (d[1][0] * d[2][1] - d[1][1] * d[2][0]);
    return fabs(det) >= 1e-3;
}
