#include "formats/nifti/nifti_header.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <nifti/nifti2_io.h>

#include "formats/nifti/nifti_io.h"

enum { N1_SIZE = 348, N2_SIZE = 540 };
#define DEFLATE_MAX_RATIO 1032

/* Field readers: little-endian, or big-endian when `big`. */
static uint64_t rd(const unsigned char *b, int off, int size, bool big)
{
    uint64_t v = 0;
    for (int i = 0; i < size; i++) v |= (uint64_t)b[off + (big ? size - 1 - i : i)] << (8 * i);
    return v;
}
static int64_t rd16(const unsigned char *b, int off, bool big) { return (int16_t)rd(b, off, 2, big); }
static int64_t rd32(const unsigned char *b, int off, bool big) { return (int32_t)rd(b, off, 4, big); }
static int64_t rd64(const unsigned char *b, int off, bool big) { return (int64_t)rd(b, off, 8, big); }
static float rdf32(const unsigned char *b, int off, bool big)
{
    uint32_t u = (uint32_t)rd(b, off, 4, big);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* nifti1.h's NIFTI_VERSION on a 4-byte magic: 1..9 for "ni1"/"n+1" ..., 0 otherwise. */
static int magic_version(const unsigned char *m)
{
    return m[0] == 'n' && m[3] == 0 && (m[1] == 'i' || m[1] == '+') && m[2] >= '1' && m[2] <= '9' ? m[2] - '0' : 0;
}

static bool scalar_datatype(int dt)
{
    switch (dt) {
    case DT_UINT8: case DT_INT8: case DT_INT16: case DT_UINT16: case DT_INT32: case DT_UINT32:
    case DT_INT64: case DT_UINT64: case DT_FLOAT32: case DT_FLOAT64: return true;
    default: return false;
    }
}

/* The version and the byte order every other field is read in, decided once and as
 * nifti_clib does (nifti_header_version, NIFTI2_NEEDS_SWAP): sizeof_hdr is 348 or 540
 * read in one order or the other. */
static bool decide_order(const unsigned char *b, int *version, bool *big)
{
    for (int be = 0; be < 2; be++) {
        int64_t size = rd32(b, 0, be);
        if (size == N1_SIZE || size == N2_SIZE) {
            *version = size == N1_SIZE ? 1 : 2;
            *big = be;
            return true;
        }
    }
    return false;
}

static swin_status check_dims(const char *path, struct swin_nifti_header *h, swin_error *err)
{
    const int64_t *dim = h->dim;
    /* nifti_clib decides a NIfTI-1 byte order by dim[0] (need_nhdr_swap): in 1..7 in the
     * order sizeof_hdr gave, it is >= 256 in the other one, so both decisions agree */
    if (dim[0] < 1 || dim[0] > 7)
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: not a NIfTI file (no valid header: dim[0] = %lld)", path,
                              (long long)dim[0]);
    for (int i = 1; i <= dim[0]; i++)
        if (dim[i] <= 0)
            return swin_error_set(err, SWIN_ERR_SHAPE, "%s: dimension %d has size %lld: the image is empty", path, i,
                                  (long long)dim[i]);
    int64_t vols = 1;
    bool many = false;
    for (int i = 4; i <= dim[0]; i++) {
        if (dim[i] > INT64_MAX / vols) {
            many = true;
            break;
        }
        vols *= dim[i];
    }
    /* a few volumes are the channels of one image (MRI sequences: a 4D file, as the Medical
     * Segmentation Decathlon's); more are a series in time */
    if (many || vols > SWIN_VOLUME_MAX_CHANNELS)
        return swin_error_set(err, SWIN_ERR_SHAPE,
                              "%s: a %lldD image with %s%lld volumes; swinrun segments one 3D volume, or up to %d "
                              "volumes as the channels of a multi-channel model (extract one first)",
                              path, (long long)dim[0], many ? "more than " : "", (long long)(many ? INT64_MAX : vols),
                              SWIN_VOLUME_MAX_CHANNELS);
    h->volumes = vols;
    int64_t s[3];
    for (int i = 0; i < 3; i++) s[i] = i + 1 <= dim[0] ? dim[i + 1] : 1;
    if (s[0] < 2 || s[1] < 2 || s[2] < 2)
        return swin_error_set(err, SWIN_ERR_SHAPE, "%s: a 2D image (%lld x %lld x %lld); swinrun segments 3D volumes",
                              path, (long long)s[0], (long long)s[1], (long long)s[2]);
    for (int i = 0; i < 3; i++)
        if (s[i] > SWIN_VOLUME_MAX_DIM)
            return swin_error_set(err, SWIN_ERR_SHAPE, "%s: dimension %d is %lld voxels (limit %d): corrupt header?", path,
                                  i + 1, (long long)s[i], SWIN_VOLUME_MAX_DIM);
    if (s[0] * s[1] * s[2] > SWIN_VOLUME_MAX_VOXELS)   /* each <= 2^14: no overflow */
        return swin_error_set(err, SWIN_ERR_SHAPE, "%s: %lld x %lld x %lld is more than %lld voxels", path,
                              (long long)s[0], (long long)s[1], (long long)s[2], (long long)SWIN_VOLUME_MAX_VOXELS);
    h->nx = s[0], h->ny = s[1], h->nz = s[2];
    return SWIN_OK;
}

swin_status swin_nifti_data_fits(const char *path, const char *data_file, int64_t offset, uint64_t bytes,
                                 swin_error *err)
{
    struct stat sb;
    if (stat(data_file, &sb) != 0) return swin_error_set(err, SWIN_ERR_IO, "%s: %s: %s", path, data_file, strerror(errno));
    bool gz = nifti_is_gzfile(data_file);
    uint64_t room = (uint64_t)sb.st_size;
    if (gz) room = room > UINT64_MAX / DEFLATE_MAX_RATIO ? UINT64_MAX : room * DEFLATE_MAX_RATIO;
    if (offset < 0 || (uint64_t)offset > room || bytes > room - (uint64_t)offset)
        return swin_error_set(err, SWIN_ERR_FORMAT,
                              "%s: truncated or corrupt: the header puts %llu bytes of voxel data at byte %lld, %s %llu bytes",
                              path, (unsigned long long)bytes, (long long)offset,
                              gz ? "a .gz file of this size expands to at most" : "the file has", (unsigned long long)room);
    return SWIN_OK;
}

/* The checks of the header bytes b (got of them) read from hfile. */
static swin_status check_header(const char *path, const char *hfile, const unsigned char *b, size_t got,
                                struct swin_nifti_header *h, swin_error *err)
{
    if (got > N2_SIZE) got = 0;   /* znzread's -1: a corrupt gzip stream */
    if (got >= 12 && !memcmp(b, "<nifti_image", 12))
        return swin_error_set(err, SWIN_ERR_FORMAT,
                              "%s: a NIfTI ASCII header (<nifti_image ...>); swinrun reads binary NIfTI-1/NIfTI-2 files only",
                              path);
    bool big;   /* a big-endian file */
    if (got < 4 || !decide_order(b, &h->version, &big))
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: not a NIfTI file (no valid NIfTI-1/NIfTI-2 header)", path);
    int hsize = h->version == 1 ? N1_SIZE : N2_SIZE;
    if (got < (size_t)hsize)
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: not a NIfTI file (the NIfTI-%d header is cut at %zu of %d bytes)",
                              path, h->version, got, hsize);
    const unsigned char *magic = h->version == 1 ? b + 344 : b + 4;
    int mv = magic_version(magic);
    if (h->version == 1 ? mv > 1 : mv != 2)   /* as nifti_header_version: NIfTI-1 magic or none (ANALYZE) */
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: not a NIfTI file (a %d-byte header with a NIfTI-%d magic)",
                              path, hsize, mv);
    h->one_file = mv > 0 && magic[1] == '+';
    for (int i = 0; i < 8; i++) h->dim[i] = h->version == 1 ? rd16(b, 40 + 2 * i, big) : rd64(b, 16 + 8 * i, big);
    swin_status st = check_dims(path, h, err);
    if (st) return st;
    h->datatype = (int)rd16(b, h->version == 1 ? 70 : 12, big);
    if (!scalar_datatype(h->datatype))
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: voxel datatype %s is not a scalar intensity swinrun reads", path,
                              nifti_datatype_string(h->datatype));
    int swapsize;
    nifti_datatype_sizes(h->datatype, &h->nbyper, &swapsize);
    if (h->version == 1) {
        /* nifti_clib converts the float to int: it must be finite and fit one */
        float v = rdf32(b, 108, big);
        if (!(v >= -(float)(INT_MAX / 2) && v <= (float)(INT_MAX / 2)))
            return swin_error_set(err, SWIN_ERR_FORMAT, "%s: vox_offset %g is not a byte offset", path, (double)v);
        h->vox_offset = (int64_t)v;
    } else {
        h->vox_offset = rd64(b, 168, big);
    }
    if (h->one_file && h->vox_offset < hsize) h->vox_offset = hsize;   /* as nifti_clib's iname_offset */
    if (h->vox_offset < 0 || h->vox_offset > INT64_MAX / 4)
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: vox_offset %lld is not a byte offset", path, (long long)h->vox_offset);
    /* No magic: an ANALYZE 7.5 header. Its voxel-to-world axes are a convention (SPM's
     * radiological default, nibabel's flipped x) the file does not state: refused rather than
     * guessed, since a guess can swap left and right. */
    if (mv == 0)
        return swin_error_set(err, SWIN_ERR_FORMAT,
                              "%s: an ANALYZE 7.5 header (no NIfTI magic), which does not say which side is left: "
                              "convert it to NIfTI with the orientation you know (e.g. nibabel, SimpleITK), then segment that",
                              path);
    /* the data, and the extensions nifti_clib reads before them, must fit in the file */
    if (h->one_file)
        return swin_nifti_data_fits(path, hfile, h->vox_offset,
                                    (uint64_t)(h->nx * h->ny * h->nz * h->volumes) * (uint64_t)h->nbyper, err);
    return SWIN_OK;
}

swin_status swin_nifti_header_read(const char *path, struct swin_nifti_header *h, swin_error *err)
{
    memset(h, 0, sizeof *h);
    char *hfile = nifti_findhdrname(path);   /* the file nifti_clib will read the header from (x.img: x.hdr) */
    znzFile fp = hfile ? znzopen(hfile, "rb", nifti_is_gzfile(hfile)) : NULL;
    if (znz_isnull(fp)) {
        free(hfile);
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: not a NIfTI file (no header file found)", path);
    }
    unsigned char b[N2_SIZE];
    size_t got = znzread(b, 1, sizeof b, fp);
    znzclose(fp);
    swin_status st = check_header(path, hfile, b, got, h, err);
    free(hfile);
    return st;
}
