/* NRRD headers (nrrd_header.h). Every field is kept as text until the header ends, then
 * interpreted, so that the fields may come in any order. */
#include "formats/nrrd/nrrd_header.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/segment_params.h"
#include "formats/format.h"

#define MAX_AXES 4

bool swin_nrrd_name(const char *path)
{
    size_t n = strlen(path);
    return n > 5 && (!strcasecmp(path + n - 5, ".nrrd") || !strcasecmp(path + n - 5, ".nhdr"));
}

enum field { F_TYPE, F_DIMENSION, F_SIZES, F_ENCODING, F_ENDIAN, F_SPACE, F_DIRECTIONS, F_ORIGIN, F_SPACINGS,
             F_KINDS, F_DATAFILE, F_LINESKIP, F_BYTESKIP, F_SPACEDIM, F_MINS, F_MAXS, F_CENTERS, F_COUNT };
static const struct { const char *name; enum field f; } known[] = {
    {"type", F_TYPE}, {"dimension", F_DIMENSION}, {"sizes", F_SIZES}, {"encoding", F_ENCODING},
    {"endian", F_ENDIAN}, {"space", F_SPACE}, {"space directions", F_DIRECTIONS}, {"space origin", F_ORIGIN},
    {"spacings", F_SPACINGS}, {"kinds", F_KINDS}, {"data file", F_DATAFILE}, {"datafile", F_DATAFILE},
    {"line skip", F_LINESKIP}, {"lineskip", F_LINESKIP}, {"byte skip", F_BYTESKIP}, {"byteskip", F_BYTESKIP},
    {"space dimension", F_SPACEDIM}, {"axis mins", F_MINS}, {"axismins", F_MINS}, {"axis maxs", F_MAXS},
    {"axismaxs", F_MAXS}, {"centers", F_CENTERS}, {"centerings", F_CENTERS},
};
static const char *const field_name[F_COUNT] = {"type", "dimension", "sizes", "encoding", "endian", "space",
                                                "space directions", "space origin", "spacings", "kinds",
                                                "data file", "line skip", "byte skip", "space dimension",
                                                "axis mins", "axis maxs", "centers"};

/* teem's spellings of each type */
static const struct { const char *name; enum swin_raw_type t; int bytes; } types[] = {
    {"signed char", SWIN_RAW_INT8, 1}, {"int8", SWIN_RAW_INT8, 1}, {"int8_t", SWIN_RAW_INT8, 1},
    {"uchar", SWIN_RAW_UINT8, 1}, {"unsigned char", SWIN_RAW_UINT8, 1}, {"uint8", SWIN_RAW_UINT8, 1},
    {"uint8_t", SWIN_RAW_UINT8, 1},
    {"short", SWIN_RAW_INT16, 2}, {"short int", SWIN_RAW_INT16, 2}, {"signed short", SWIN_RAW_INT16, 2},
    {"signed short int", SWIN_RAW_INT16, 2}, {"int16", SWIN_RAW_INT16, 2}, {"int16_t", SWIN_RAW_INT16, 2},
    {"ushort", SWIN_RAW_UINT16, 2}, {"unsigned short", SWIN_RAW_UINT16, 2},
    {"unsigned short int", SWIN_RAW_UINT16, 2}, {"uint16", SWIN_RAW_UINT16, 2}, {"uint16_t", SWIN_RAW_UINT16, 2},
    {"int", SWIN_RAW_INT32, 4}, {"signed int", SWIN_RAW_INT32, 4}, {"int32", SWIN_RAW_INT32, 4},
    {"int32_t", SWIN_RAW_INT32, 4},
    {"uint", SWIN_RAW_UINT32, 4}, {"unsigned int", SWIN_RAW_UINT32, 4}, {"uint32", SWIN_RAW_UINT32, 4},
    {"uint32_t", SWIN_RAW_UINT32, 4},
    {"longlong", SWIN_RAW_INT64, 8}, {"long long", SWIN_RAW_INT64, 8}, {"long long int", SWIN_RAW_INT64, 8},
    {"signed long long", SWIN_RAW_INT64, 8}, {"signed long long int", SWIN_RAW_INT64, 8},
    {"int64", SWIN_RAW_INT64, 8}, {"int64_t", SWIN_RAW_INT64, 8},
    {"ulonglong", SWIN_RAW_UINT64, 8}, {"unsigned long long", SWIN_RAW_UINT64, 8},
    {"unsigned long long int", SWIN_RAW_UINT64, 8}, {"uint64", SWIN_RAW_UINT64, 8},
    {"uint64_t", SWIN_RAW_UINT64, 8},
    {"float", SWIN_RAW_FLOAT32, 4}, {"double", SWIN_RAW_FLOAT64, 8},
};

static swin_status bad(swin_error *err, const char *path, enum field f, const char *what, const char *value)
{
    if (!value) return swin_error_set(err, SWIN_ERR_FORMAT, "%s: NRRD %s: %s", path, field_name[f], what);
    return swin_error_set(err, SWIN_ERR_FORMAT, "%s: NRRD %s: %.40s: %s", path, field_name[f], value, what);
}

static bool whole(const char *text, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || *swin_raw_trim(end) || errno == ERANGE || v < lo || v > hi) return false;
    *out = v;
    return true;
}

/* The next word of *p (space-separated), or NULL at the end. */
static const char *word(const char **p, char *buf, size_t n)
{
    while (isspace((unsigned char)**p)) (*p)++;
    if (!**p) return NULL;
    size_t k = 0;
    while (**p && !isspace((unsigned char)**p)) {
        if (k + 1 < n) buf[k++] = **p;
        (*p)++;
    }
    buf[k] = 0;
    return buf;
}

/* "(a,b,c)" (n = 3) or "(a,b,c,d)" (n = 4) at *p (spaces allowed inside) into v; false when
 * it is not one. */
static bool vector(const char **p, double v[4], int n)
{
    while (isspace((unsigned char)**p)) (*p)++;
    if (**p != '(') return false;
    (*p)++;
    for (int i = 0; i < n; i++) {
        char *end;
        v[i] = strtod(*p, &end);
        if (end == *p || !isfinite(v[i]) || fabs(v[i]) > 1e9) return false;
        *p = end;
        while (isspace((unsigned char)**p)) (*p)++;
        if (**p != (i < n - 1 ? ',' : ')')) return false;
        (*p)++;
    }
    return true;
}

/* The sign that takes a vector of the header's space to LPS, per world axis. */
static bool space_signs(const char *space, double sign[3])
{
    static const struct { const char *name; double s[3]; } spaces[] = {
        {"left-posterior-superior", {1, 1, 1}}, {"LPS", {1, 1, 1}},   {"scanner-xyz", {1, 1, 1}},
        {"right-anterior-superior", {-1, -1, 1}}, {"RAS", {-1, -1, 1}},
        {"left-anterior-superior", {1, -1, 1}},  {"LAS", {1, -1, 1}},
    };
    for (size_t i = 0; i < sizeof spaces / sizeof *spaces; i++)
        if (!strcasecmp(space, spaces[i].name)) {
            memcpy(sign, spaces[i].s, sizeof spaces[i].s);
            return true;
        }
    return false;
}

/* Which axis holds the channels (-1: none): the one whose space direction is "none", else
 * the one whose kind is not a spatial one. */
static swin_status channel_axis(const char *path, char *val[F_COUNT], int nd, bool none[MAX_AXES], int *axis,
                                swin_error *err)
{
    *axis = -1;
    for (int a = 0; a < nd; a++)
        if (none[a]) {
            if (*axis >= 0) return bad(err, path, F_DIRECTIONS, "more than one axis without a direction", val[F_DIRECTIONS]);
            *axis = a;
        }
    if (*axis < 0 && val[F_KINDS]) {
        const char *p = val[F_KINDS];
        char w[64];
        for (int a = 0; a < nd; a++) {
            if (!word(&p, w, sizeof w)) return bad(err, path, F_KINDS, "not one kind per axis", val[F_KINDS]);
            if (strcasecmp(w, "domain") && strcasecmp(w, "space")) {
                if (*axis >= 0) return bad(err, path, F_KINDS, "more than one axis that is not spatial", val[F_KINDS]);
                *axis = a;
            }
        }
    }
    if (nd == 4 && *axis < 0)
        return bad(err, path, F_KINDS, "four axes, none marked as the channels' (a kind such as list, or a space "
                                       "direction none)", val[F_KINDS]);
    if (nd == 3 && *axis >= 0) return bad(err, path, F_DIMENSION, "two spatial axes: a 2-D image", val[F_DIMENSION]);
    if (*axis > 0 && *axis < nd - 1)
        return bad(err, path, F_KINDS, "the channels' axis between spatial axes: swinrun reads it first or last",
                   val[F_KINDS] ? val[F_KINDS] : val[F_DIRECTIONS]);
    return SWIN_OK;
}

/* One number per axis of a per-axis field (teem writes "nan" for an axis without one), or the
 * default where the field is absent; false when it is not one number per axis. */
static bool per_axis(const char *text, int nd, double dflt, double *v)
{
    char w[64];
    for (int a = 0; a < nd; a++) {
        v[a] = dflt;
        if (!text) continue;
        if (!word(&text, w, sizeof w)) return false;
        char *end;
        v[a] = strtod(w, &end);
        if (*end || fabs(v[a]) > 1e9) return false;
    }
    return !text || !word(&text, w, sizeof w);
}

/* The origin of a file with no space, from its axis mins, as ITK's NrrdImageIO places it (teem's
 * nrrdOriginCalculate): per spatial axis min, plus half a sample for cell centring (an axis's
 * "centers" entry, cell when it has none), a sample being the spacing, else (max - min) / size
 * (cell) or / (size - 1) (node). Where any spatial axis lacks its min, or both its spacing and
 * its max, ITK puts the origin at 0, as here. */
static swin_status origin_from_mins(const char *path, char *val[F_COUNT], int nd, int first, const int64_t *sizes,
                                    struct swin_raw_header *h, swin_error *err)
{
    double mins[MAX_AXES], maxs[MAX_AXES];
    if (!per_axis(val[F_MINS], nd, NAN, mins)) return bad(err, path, F_MINS, "not one number per axis", val[F_MINS]);
    if (!per_axis(val[F_MAXS], nd, NAN, maxs)) return bad(err, path, F_MAXS, "not one number per axis", val[F_MAXS]);
    bool node[MAX_AXES] = {false};
    const char *p = val[F_CENTERS];
    char w[64];
    for (int a = 0; p && a < nd; a++) {
        if (!word(&p, w, sizeof w)) return bad(err, path, F_CENTERS, "not one centring per axis", val[F_CENTERS]);
        node[a] = !strcasecmp(w, "node");
    }
    double o[3];
    for (int a = 0; a < 3; a++) {
        int x = first + a;
        /* the spacings geometry() read (h->spacing, spatial axes only) */
        double sample = val[F_SPACINGS] ? h->spacing[a] : (maxs[x] - mins[x]) / (double)(node[x] ? sizes[x] - 1 : sizes[x]);
        if (!isfinite(mins[x]) || !isfinite(sample)) return SWIN_OK;
        o[a] = mins[x] + (node[x] ? 0.0 : sample / 2);
    }
    for (int a = 0; a < 3; a++) h->offset[a] = o[a];
    return SWIN_OK;
}

/* Sizes, spacing, directions and origin; sd: the world's dimension (3, or 4 as ITK writes a 4-D
 * image: "space dimension: 4", no space named, the first three world coordinates LPS). */
static swin_status geometry(const char *path, char *val[F_COUNT], int nd, int sd, struct swin_raw_header *h,
                            swin_error *err)
{
    int64_t sizes[MAX_AXES];
    const char *p = val[F_SIZES];
    char w[64];
    for (int a = 0; a < nd; a++)
        if (!word(&p, w, sizeof w) || !whole(w, 1, SWIN_VOLUME_MAX_DIM, &sizes[a]))
            return bad(err, path, F_SIZES, "not one size (1..16384) per axis", val[F_SIZES]);
    if (word(&p, w, sizeof w)) return bad(err, path, F_SIZES, "more sizes than axes", val[F_SIZES]);
    bool none[MAX_AXES] = {false};
    double dirs[MAX_AXES][4] = {{0}};
    double sign[3] = {1, 1, 1};
    if (val[F_SPACE] && !space_signs(val[F_SPACE], sign))
        return bad(err, path, F_SPACE, "a space swinrun does not read (RAS, LAS, LPS, scanner-xyz)", val[F_SPACE]);
    if (val[F_DIRECTIONS]) {
        if (!val[F_SPACE] && !val[F_SPACEDIM])
            return bad(err, path, F_DIRECTIONS, "directions without a space", val[F_DIRECTIONS]);
        p = val[F_DIRECTIONS];
        for (int a = 0; a < nd; a++) {
            while (isspace((unsigned char)*p)) p++;
            if (!strncasecmp(p, "none", 4)) {
                none[a] = true, p += 4;
            } else if (!vector(&p, dirs[a], sd)) {
                return bad(err, path, F_DIRECTIONS,
                           sd == 3 ? "not one (x,y,z) or none per axis" : "not one (x,y,z,t) or none per axis",
                           val[F_DIRECTIONS]);
            }
        }
        if (*swin_raw_trim((char *)p)) return bad(err, path, F_DIRECTIONS, "more directions than axes", val[F_DIRECTIONS]);
        /* a 4-D world (ITK's 4-D images): the axis along its fourth coordinate alone, (0,0,0,t),
         * holds the channels; the spatial axes must lie in the first three (LPS) */
        for (int a = 0; sd == 4 && a < nd; a++) {
            if (none[a] || !dirs[a][3]) continue;
            if (dirs[a][0] || dirs[a][1] || dirs[a][2])
                return bad(err, path, F_DIRECTIONS, "an axis across space and the fourth world coordinate",
                           val[F_DIRECTIONS]);
            none[a] = true;
        }
    }
    int ch;
    swin_status st = channel_axis(path, val, nd, none, &ch, err);
    if (st) return st;
    const int first = ch == 0 ? 1 : 0; /* the first spatial axis */
    h->components = ch == 0 ? (int)sizes[0] : 1;
    h->dim[3] = ch == 3 ? sizes[3] : 1;
    if (h->components * h->dim[3] > SWIN_VOLUME_MAX_CHANNELS)
        return bad(err, path, F_SIZES, "more than 16 channels", val[F_SIZES]);
    int64_t voxels = 1;
    for (int a = 0; a < 3; a++) voxels *= (h->dim[a] = sizes[first + a]);
    if (voxels > SWIN_VOLUME_MAX_VOXELS) return bad(err, path, F_SIZES, "more voxels than swinrun takes (2^31)", val[F_SIZES]);
    if (val[F_DIRECTIONS]) {
        for (int a = 0; a < 3; a++) {
            const double *d = dirs[first + a];
            double len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
            if (!(len > 1e-6) || len > 1e6 || none[first + a])
                return bad(err, path, F_DIRECTIONS, "a spatial axis without a direction of positive length",
                           val[F_DIRECTIONS]);
            h->spacing[a] = len;
            for (int b = 0; b < 3; b++) h->direction[a][b] = sign[b] * d[b] / len;
        }
        if (!swin_raw_directions_ok(h))
            return bad(err, path, F_DIRECTIONS, "axes that do not span 3-D space", val[F_DIRECTIONS]);
    } else {
        for (int a = 0; a < 3; a++) {
            h->spacing[a] = 1.0;
            for (int b = 0; b < 3; b++) h->direction[a][b] = a == b;
        }
        if (val[F_SPACINGS]) {
            p = val[F_SPACINGS];
            for (int a = 0; a < nd; a++) {
                if (!word(&p, w, sizeof w)) return bad(err, path, F_SPACINGS, "not one per axis", val[F_SPACINGS]);
                if (a < first || a >= first + 3) continue;
                char *end;
                double s = strtod(w, &end);
                if (*end || !isfinite(s) || s <= 1e-6 || s > 1e6)
                    return bad(err, path, F_SPACINGS, "a spacing that is not a positive size", val[F_SPACINGS]);
                h->spacing[a - first] = s;
            }
        }
    }
    for (int b = 0; b < 3; b++) h->offset[b] = 0.0;
    if (val[F_ORIGIN]) {
        p = val[F_ORIGIN];
        double o[4];
        if (!vector(&p, o, sd) || *swin_raw_trim((char *)p)) return bad(err, path, F_ORIGIN, "not one (x,y,z)", val[F_ORIGIN]);
        for (int b = 0; b < 3; b++) h->offset[b] = sign[b] * o[b];
    } else if (!val[F_SPACE] && !val[F_DIRECTIONS] && val[F_MINS]) {
        return origin_from_mins(path, val, nd, first, sizes, h, err);
    }
    return SWIN_OK;
}

/* Where the voxels start: after line skip lines of the data file, then byte skip bytes. */
static swin_status data_start(const char *path, char *val[F_COUNT], struct swin_raw_header *h, swin_error *err)
{
    int64_t lines = 0, bytes = 0;
    if (val[F_LINESKIP] && !whole(val[F_LINESKIP], 0, 1 << 20, &lines))
        return bad(err, path, F_LINESKIP, "not a count of lines", val[F_LINESKIP]);
    if (val[F_BYTESKIP] && !whole(val[F_BYTESKIP], -1, INT64_MAX / 4, &bytes))
        return bad(err, path, F_BYTESKIP, "not a count of bytes (or -1)", val[F_BYTESKIP]);
    if (bytes && h->compressed)
        return bad(err, path, F_BYTESKIP, "bytes skipped inside compressed voxels", val[F_BYTESKIP]);
    if (lines) {
        FILE *f = fopen(h->data_path, "rb");
        if (!f) return swin_error_set(err, SWIN_ERR_IO, "%s: cannot open the voxels' file: %s", h->data_path,
                                      strerror(errno));
        int c = 0;
        if (fseek(f, h->data_offset, SEEK_SET)) c = EOF;
        for (int64_t n = 0; n < lines && c != EOF;)
            if ((c = fgetc(f)) == '\n') n++;
        h->data_offset = ftell(f);
        fclose(f);
        if (c == EOF) return bad(err, path, F_LINESKIP, "more lines than the voxels' file holds", val[F_LINESKIP]);
    }
    h->data_offset = bytes == -1 ? -1 : h->data_offset + bytes;
    return SWIN_OK;
}

static swin_status interpret(const char *path, char *val[F_COUNT], struct swin_raw_header *h, swin_error *err)
{
    int64_t nd;
    if (!val[F_DIMENSION] || !whole(val[F_DIMENSION], 1, 16, &nd))
        return bad(err, path, F_DIMENSION, "missing or not a number of axes", val[F_DIMENSION]);
    if (nd < 3) return bad(err, path, F_DIMENSION, "a 2-D image: swinrun segments 3-D volumes", val[F_DIMENSION]);
    if (nd > MAX_AXES) return bad(err, path, F_DIMENSION, "swinrun reads 3 spatial axes and a channel axis", val[F_DIMENSION]);
    if (!val[F_TYPE]) return bad(err, path, F_TYPE, "missing", NULL);
    size_t t = 0;
    while (t < sizeof types / sizeof *types && strcasecmp(types[t].name, val[F_TYPE])) t++;
    if (t == sizeof types / sizeof *types)
        return bad(err, path, F_TYPE, "a type swinrun does not read (whole or floating-point numbers)", val[F_TYPE]);
    h->type = types[t].t, h->type_bytes = types[t].bytes;
    if (!val[F_SIZES]) return bad(err, path, F_SIZES, "missing", NULL);
    const char *enc = val[F_ENCODING];
    if (!enc) return bad(err, path, F_ENCODING, "missing", NULL);
    if (!strcasecmp(enc, "gzip") || !strcasecmp(enc, "gz"))
        h->compressed = true;
    else if (strcasecmp(enc, "raw"))
        return bad(err, path, F_ENCODING,
                   "an encoding swinrun does not read (raw or gzip; save text, hex or bzip2 voxels again as gzip)", enc);
    h->compressed_size = -1;
    if (h->type_bytes > 1) {
        if (!val[F_ENDIAN]) return bad(err, path, F_ENDIAN, "missing: the voxels' byte order", NULL);
        if (!strcasecmp(val[F_ENDIAN], "big"))
            h->msb = true;
        else if (strcasecmp(val[F_ENDIAN], "little"))
            return bad(err, path, F_ENDIAN, "not little or big", val[F_ENDIAN]);
    }
    int64_t sd = 3;
    if (val[F_SPACEDIM]) {
        if (!whole(val[F_SPACEDIM], 1, 16, &sd) || (sd != 3 && sd != 4) || (sd == 4 && val[F_SPACE]))
            return bad(err, path, F_SPACEDIM, "not a 3-D world (or ITK's 4-D one, with no space named)",
                       val[F_SPACEDIM]);
    }
    swin_status st = geometry(path, val, (int)nd, (int)sd, h, err);
    if (st) return st;
    if (val[F_DATAFILE]) {
        const char *why = "";
        if (!strncmp(val[F_DATAFILE], "LIST", 4) || strpbrk(val[F_DATAFILE], "% \t"))
            return bad(err, path, F_DATAFILE, "voxels in several files: save the volume as one file (.nrrd)",
                       val[F_DATAFILE]);
        if (!*val[F_DATAFILE] || !swin_raw_data_file(path, val[F_DATAFILE], h, &why))
            return bad(err, path, F_DATAFILE, *val[F_DATAFILE] ? why : "no file named", val[F_DATAFILE]);
        h->data_offset = 0;
    }
    return data_start(path, val, h, err);
}

swin_status swin_nrrd_header_read(const char *path, struct swin_raw_header *h, swin_error *err)
{
    memset(h, 0, sizeof *h);
    FILE *f = fopen(path, "rb");
    if (!f) return swin_error_set(err, SWIN_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    char line[8192];
    char *val[F_COUNT] = {0};
    swin_status st = SWIN_OK;
    long read = 0;
    int number = 0;
    bool blank = false;
    if (!fgets(line, sizeof line, f) || strncmp(line, "NRRD000", 7) || line[7] < '1' || line[7] > '5')
        st = swin_error_set(err, SWIN_ERR_FORMAT, "%s: not a NRRD file (no NRRD0001..NRRD0005 magic)", path);
    int got;
    char *l;
    while (!st && !blank && (got = swin_raw_header_line(f, line, sizeof line, &read, &l))) {
        number++;
        if (got < 0) {
            st = swin_error_set(err, SWIN_ERR_FORMAT, "%s: NRRD header line %d is not text, or too long", path,
                                number + 1);
            break;
        }
        if (!*l) {
            blank = true; /* the voxels follow */
            break;
        }
        if (*l == '#' || strstr(l, ":=")) continue; /* a comment, a key/value pair */
        char *colon = strstr(l, ": ");
        if (!colon) {
            st = swin_error_set(err, SWIN_ERR_FORMAT, "%s: NRRD header line %d is not \"field: description\"", path,
                                number + 1);
            break;
        }
        *colon = 0;
        const char *name = swin_raw_trim(l);
        const char *value = swin_raw_trim(colon + 2);
        for (size_t i = 0; i < sizeof known / sizeof *known && !st; i++)
            if (!strcasecmp(name, known[i].name) && !swin_raw_keep(&val[known[i].f], value))
                st = swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
    }
    if (!st && ferror(f)) st = swin_error_set(err, SWIN_ERR_IO, "%s: cannot read the NRRD header", path);
    if (!st && !blank && !val[F_DATAFILE])
        st = swin_error_set(err, SWIN_ERR_FORMAT, "%s: the NRRD header ends without a blank line before the voxels "
                                                  "and names no data file", path);
    if (!st) {
        snprintf(h->data_path, sizeof h->data_path, "%s", path);
        h->data_offset = ftell(f);
        st = interpret(path, val, h, err);
    }
    fclose(f);
    for (int k = 0; k < F_COUNT; k++) free(val[k]);
    return st;
}

void swin_nrrd_header_write(FILE *f, const struct swin_raw_header *like, enum swin_raw_type type, int64_t volumes,
                            long *size_at)
{
    const bool list = volumes > 1;
    fprintf(f, "NRRD0004\n# written by swinrun\ntype: %s\ndimension: %d\nspace: left-posterior-superior\n"
               "sizes: %lld %lld %lld",
            type == SWIN_RAW_UINT8 ? "uint8" : type == SWIN_RAW_UINT16 ? "uint16" : "float", list ? 4 : 3,
            (long long)like->dim[0], (long long)like->dim[1], (long long)like->dim[2]);
    if (list) fprintf(f, " %lld", (long long)volumes);
    fprintf(f, "\nspace directions:");
    for (int a = 0; a < 3; a++)
        fprintf(f, " (%.17g,%.17g,%.17g)", like->direction[a][0] * like->spacing[a],
                like->direction[a][1] * like->spacing[a], like->direction[a][2] * like->spacing[a]);
    fprintf(f, "%s\nkinds: domain domain domain%s\nendian: little\nencoding: gzip\n"
               "space origin: (%.17g,%.17g,%.17g)\n\n",
            list ? " none" : "", list ? " list" : "", like->offset[0], like->offset[1], like->offset[2]);
    *size_at = -1;
}
