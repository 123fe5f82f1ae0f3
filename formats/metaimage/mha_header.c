/* MetaImage headers (mha_header.h). The header is text up to and including the
 * ElementDataFile line; every value is kept as text until that line, then parsed, so that
 * the keys may come in any order. */
#include "formats/metaimage/mha_header.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/segment_params.h"
#include "formats/format.h"
#include "formats/rawvol/raw_write.h"

bool swin_mha_name(const char *path)
{
    size_t n = strlen(path);
    return n > 4 && (!strcasecmp(path + n - 4, ".mha") || !strcasecmp(path + n - 4, ".mhd"));
}

/* The keys swinrun reads; synonyms (as MetaIO accepts them) share a slot. */
enum key { K_OBJECT, K_NDIMS, K_DIMSIZE, K_SPACING, K_SIZE, K_OFFSET, K_MATRIX, K_TYPE, K_CHANNELS, K_BINARY, K_MSB,
           K_COMPRESSED, K_CSIZE, K_HSIZE, K_DATAFILE, K_COUNT };
static const struct { const char *name; enum key k; } known[] = {
    {"ObjectType", K_OBJECT}, {"NDims", K_NDIMS}, {"DimSize", K_DIMSIZE}, {"ElementSpacing", K_SPACING},
    {"ElementSize", K_SIZE}, {"Offset", K_OFFSET}, {"Position", K_OFFSET}, {"Origin", K_OFFSET}, {"TransformMatrix", K_MATRIX},
    {"Rotation", K_MATRIX}, {"Orientation", K_MATRIX}, {"ElementType", K_TYPE},
    {"ElementNumberOfChannels", K_CHANNELS}, {"BinaryData", K_BINARY}, {"BinaryDataByteOrderMSB", K_MSB},
    {"ElementByteOrderMSB", K_MSB}, {"CompressedData", K_COMPRESSED}, {"CompressedDataSize", K_CSIZE},
    {"HeaderSize", K_HSIZE}, {"ElementDataFile", K_DATAFILE},
};
static const char *const key_name[K_COUNT] = {"ObjectType", "NDims", "DimSize", "ElementSpacing", "ElementSize", "Offset",
                                              "TransformMatrix", "ElementType", "ElementNumberOfChannels",
                                              "BinaryData", "BinaryDataByteOrderMSB", "CompressedData",
                                              "CompressedDataSize", "HeaderSize", "ElementDataFile"};

static const struct { const char *name; enum swin_raw_type t; int bytes; } types[] = {
    {"MET_UCHAR", SWIN_RAW_UINT8, 1},   {"MET_CHAR", SWIN_RAW_INT8, 1},
    {"MET_USHORT", SWIN_RAW_UINT16, 2}, {"MET_SHORT", SWIN_RAW_INT16, 2},
    {"MET_UINT", SWIN_RAW_UINT32, 4},   {"MET_INT", SWIN_RAW_INT32, 4},
    {"MET_ULONG", SWIN_RAW_UINT32, 4},  {"MET_LONG", SWIN_RAW_INT32, 4}, /* MetaIO's longs are 4 bytes */
    {"MET_ULONG_LONG", SWIN_RAW_UINT64, 8}, {"MET_LONG_LONG", SWIN_RAW_INT64, 8},
    {"MET_FLOAT", SWIN_RAW_FLOAT32, 4}, {"MET_DOUBLE", SWIN_RAW_FLOAT64, 8},
};

/* Up to max numbers of text; their count, or -1 when something else is there. */
static int numbers(const char *text, double *out, int max)
{
    int n = 0;
    const char *p = text;
    for (;;) {
        while (isspace((unsigned char)*p)) p++;
        if (!*p) return n;
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        if (end == p || errno == ERANGE || n == max) return -1;
        out[n++] = v;
        p = end;
    }
}

static int boolean(const char *text)
{
    if (!strcasecmp(text, "True") || !strcmp(text, "1")) return 1;
    if (!strcasecmp(text, "False") || !strcmp(text, "0")) return 0;
    return -1;
}

static swin_status bad(swin_error *err, const char *path, enum key k, const char *what, const char *value)
{
    if (!value) return swin_error_set(err, SWIN_ERR_FORMAT, "%s: MetaImage %s: %s", path, key_name[k], what);
    return swin_error_set(err, SWIN_ERR_FORMAT, "%s: MetaImage %s = %.40s: %s", path, key_name[k], value, what);
}

/* The integer of key k's text in [lo, hi]. */
static swin_status integer(const char *path, enum key k, const char *text, int64_t lo, int64_t hi, int64_t *out,
                           swin_error *err)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || *swin_raw_trim(end) || errno == ERANGE || v < lo || v > hi)
        return bad(err, path, k, "not a whole number in the range swinrun takes", text);
    *out = v;
    return SWIN_OK;
}

static swin_status data_file(const char *path, const char *v, struct swin_raw_header *h, swin_error *err)
{
    if (!strncmp(v, "LIST", 4) || strpbrk(v, "% \t"))
        return bad(err, path, K_DATAFILE, "slices in several files: save the volume as one file (.mha)", v);
    const char *why = "";
    if (!*v || !swin_raw_data_file(path, strcasecmp(v, "LOCAL") ? v : "", h, &why))
        return bad(err, path, K_DATAFILE, *v ? why : "no file named", v);
    return SWIN_OK;
}

static swin_status geometry(const char *path, int nd, char *val[K_COUNT], struct swin_raw_header *h, swin_error *err)
{
    double v[16];
    for (int a = 0; a < 3; a++) h->spacing[a] = 1.0, h->offset[a] = 0.0;
    /* without ElementSpacing, MetaIO (and so ITK) takes the voxels' ElementSize as their spacing */
    const enum key sk = val[K_SPACING] ? K_SPACING : K_SIZE;
    if (val[sk]) {
        int n = numbers(val[sk], v, 4);
        if (n != nd) return bad(err, path, sk, "not NDims numbers", val[sk]);
        for (int a = 0; a < 3; a++) {
            if (!isfinite(v[a]) || v[a] <= 1e-6 || v[a] > 1e6)
                return bad(err, path, sk, "a spacing that is not a positive size in mm", val[sk]);
            h->spacing[a] = v[a];
        }
    }
    if (val[K_OFFSET]) {
        if (numbers(val[K_OFFSET], v, 4) != nd) return bad(err, path, K_OFFSET, "not NDims numbers", val[K_OFFSET]);
        for (int a = 0; a < 3; a++) {
            if (!isfinite(v[a]) || fabs(v[a]) > 1e9) return bad(err, path, K_OFFSET, "not a position", val[K_OFFSET]);
            h->offset[a] = v[a];
        }
    }
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) h->direction[a][b] = a == b;
    if (val[K_MATRIX]) {
        if (numbers(val[K_MATRIX], v, 16) != nd * nd)
            return bad(err, path, K_MATRIX, "not NDims x NDims numbers", val[K_MATRIX]);
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) h->direction[a][b] = v[a * nd + b];
        if (!swin_raw_directions_ok(h))
            return bad(err, path, K_MATRIX, "axes that are not unit vectors spanning 3-D space", val[K_MATRIX]);
    }
    return SWIN_OK;
}

static swin_status interpret(const char *path, char *val[K_COUNT], struct swin_raw_header *h, swin_error *err)
{
    int64_t x;
    swin_status st;
    if (val[K_OBJECT] && strcasecmp(val[K_OBJECT], "Image"))
        return bad(err, path, K_OBJECT, "not an image", val[K_OBJECT]);
    if (!val[K_NDIMS]) return bad(err, path, K_NDIMS, "missing", NULL);
    if ((st = integer(path, K_NDIMS, val[K_NDIMS], 1, 16, &x, err))) return st;
    if (x == 2) return bad(err, path, K_NDIMS, "a 2-D image: swinrun segments 3-D volumes", val[K_NDIMS]);
    if (x != 3 && x != 4) return bad(err, path, K_NDIMS, "swinrun reads 3-D images (4-D: channels)", val[K_NDIMS]);
    const int nd = (int)x;
    double d[4];
    if (!val[K_DIMSIZE] || numbers(val[K_DIMSIZE], d, 4) != nd)
        return bad(err, path, K_DIMSIZE, "not NDims sizes", val[K_DIMSIZE]);
    h->dim[3] = 1;
    int64_t voxels = 1;
    for (int a = 0; a < nd; a++) {
        int64_t max = a < 3 ? SWIN_VOLUME_MAX_DIM : SWIN_VOLUME_MAX_CHANNELS;
        if (d[a] != floor(d[a]) || d[a] < 1 || d[a] > (double)max)
            return bad(err, path, K_DIMSIZE, "a size swinrun does not take (axes 1..16384, channels 1..16)",
                       val[K_DIMSIZE]);
        h->dim[a] = (int64_t)d[a];
        if (a < 3) voxels *= h->dim[a];
    }
    if (voxels > SWIN_VOLUME_MAX_VOXELS)
        return bad(err, path, K_DIMSIZE, "more voxels than swinrun takes (2^31)", val[K_DIMSIZE]);
    h->components = 1;
    if (val[K_CHANNELS]) {
        if ((st = integer(path, K_CHANNELS, val[K_CHANNELS], 1, SWIN_VOLUME_MAX_CHANNELS, &x, err))) return st;
        h->components = (int)x;
    }
    if (h->dim[3] * h->components > SWIN_VOLUME_MAX_CHANNELS)
        return bad(err, path, K_CHANNELS, "more than 16 channels", val[K_CHANNELS]);
    if (!val[K_TYPE]) return bad(err, path, K_TYPE, "missing", NULL);
    size_t t = 0;
    while (t < sizeof types / sizeof *types && strcmp(types[t].name, val[K_TYPE])) t++;
    if (t == sizeof types / sizeof *types)
        return bad(err, path, K_TYPE, "a voxel type swinrun does not read (MET_UCHAR .. MET_DOUBLE)", val[K_TYPE]);
    h->type = types[t].t, h->type_bytes = types[t].bytes;
    if (!val[K_BINARY] || boolean(val[K_BINARY]) != 1)
        return bad(err, path, K_BINARY, "voxels written as text: save the image with binary data", val[K_BINARY]);
    const int msb = val[K_MSB] ? boolean(val[K_MSB]) : 0;
    if (msb < 0) return bad(err, path, K_MSB, "not True or False", val[K_MSB]);
    const int compressed = val[K_COMPRESSED] ? boolean(val[K_COMPRESSED]) : 0;
    if (compressed < 0) return bad(err, path, K_COMPRESSED, "not True or False", val[K_COMPRESSED]);
    h->msb = msb, h->compressed = compressed;
    h->compressed_size = -1;
    if (h->compressed && val[K_CSIZE] &&
        (st = integer(path, K_CSIZE, val[K_CSIZE], 1, INT64_MAX / 2, &h->compressed_size, err)))
        return st;
    if ((st = data_file(path, val[K_DATAFILE], h, err))) return st;
    if (strcasecmp(val[K_DATAFILE], "LOCAL")) { /* MetaIO takes Local and local too */
        h->data_offset = 0;
        if (val[K_HSIZE] && (st = integer(path, K_HSIZE, val[K_HSIZE], -1, INT64_MAX / 2, &h->data_offset, err)))
            return st;
        if (h->data_offset == -1 && h->compressed)
            return bad(err, path, K_HSIZE, "-1 (the voxels at the end) with compressed voxels", val[K_HSIZE]);
    }
    return geometry(path, nd, val, h, err);
}

swin_status swin_mha_header_read(const char *path, struct swin_raw_header *h, swin_error *err)
{
    memset(h, 0, sizeof *h);
    FILE *f = fopen(path, "rb");
    if (!f) return swin_error_set(err, SWIN_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    char line[8192];
    char *val[K_COUNT] = {0};
    swin_status st = SWIN_OK;
    long read = 0;
    int number = 0;
    bool done = false;
    int got;
    char *l;
    while (!st && !done && (got = swin_raw_header_line(f, line, sizeof line, &read, &l))) {
        number++;
        if (got < 0) {
            st = swin_error_set(err, SWIN_ERR_FORMAT,
                                "%s: not a MetaImage header (line %d is not text, or too long, before ElementDataFile)",
                                path, number);
            break;
        }
        if (!*l) continue;
        char *eq = strchr(l, '=');
        if (!eq) {
            st = swin_error_set(err, SWIN_ERR_FORMAT, "%s: MetaImage header line %d is not \"Key = Value\"", path,
                                number);
            break;
        }
        *eq = 0;
        const char *key = swin_raw_trim(l);
        const char *value = swin_raw_trim(eq + 1);
        for (size_t i = 0; i < sizeof known / sizeof *known && !st; i++)
            if (!strcasecmp(key, known[i].name)) {
                if (!swin_raw_keep(&val[known[i].k], value))
                    st = swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
                done = known[i].k == K_DATAFILE; /* the voxels follow this line */
            }
    }
    if (!st && !done)
        st = swin_error_set(err, SWIN_ERR_FORMAT, "%s: %s", path,
                            ferror(f) ? "cannot read the MetaImage header"
                                      : "no ElementDataFile line: not a MetaImage header, or a truncated one");
    if (!st) {
        h->data_offset = ftell(f);
        st = interpret(path, val, h, err);
    }
    fclose(f);
    for (int k = 0; k < K_COUNT; k++) free(val[k]);
    return st;
}

static const char *type_name(enum swin_raw_type t)
{
    return t == SWIN_RAW_UINT8 ? "MET_UCHAR" : t == SWIN_RAW_UINT16 ? "MET_USHORT" : "MET_FLOAT";
}

void swin_mha_header_write(FILE *f, const struct swin_raw_header *like, enum swin_raw_type type, int64_t volumes,
                           long *size_at)
{
    const int nd = volumes > 1 ? 4 : 3;
    fprintf(f, "ObjectType = Image\nNDims = %d\nBinaryData = True\nBinaryDataByteOrderMSB = False\n"
               "CompressedData = True\nCompressedDataSize = ", nd);
    *size_at = ftell(f);
    fprintf(f, "%*s\nTransformMatrix =", SWIN_RAW_SIZE_FIELD, "");
    for (int a = 0; a < nd; a++)
        for (int b = 0; b < nd; b++) fprintf(f, " %.17g", a < 3 && b < 3 ? like->direction[a][b] : (double)(a == b));
    fprintf(f, "\nOffset =");
    for (int a = 0; a < nd; a++) fprintf(f, " %.17g", a < 3 ? like->offset[a] : 0.0);
    fprintf(f, "\nElementSpacing =");
    for (int a = 0; a < nd; a++) fprintf(f, " %.17g", a < 3 ? like->spacing[a] : 1.0);
    fprintf(f, "\nDimSize =");
    for (int a = 0; a < nd; a++) fprintf(f, " %lld", (long long)(a < 3 ? like->dim[a] : volumes));
    fprintf(f, "\nElementType = %s\nElementDataFile = LOCAL\n", type_name(type));
}
