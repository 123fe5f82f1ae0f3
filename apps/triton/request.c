#include "apps/triton/request.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static bool fail(char *why, size_t why_len, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_len, fmt, ap);
    va_end(ap);
    return false;
}

/* "[a, b, c]" into buf. */
static const char *shape_text(const int64_t *shape, uint32_t ndims, char *buf, size_t len) {
    size_t n = (size_t)snprintf(buf, len, "[");
    for (uint32_t i = 0; i < ndims && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (n < len) snprintf(buf + n, len - n, "]");
    return buf;
}

bool swt_check_window_input(const swt_config *c, const swt_window_geom *g, const char *datatype,
                            const int64_t *shape, uint32_t ndims, uint64_t byte_size, int64_t *windows,
                            char *why, size_t why_len) {
    const char *name = c->inputs[0].name;
    char got[160];
    if (strcmp(datatype, "FP32"))
        return fail(why, why_len, "input '%s' has data type %s: the model takes FP32", name, datatype);
    /* (1, Ci, D, H, W), or (B, Ci, D, H, W) with B <= max_batch_size */
    int64_t want[5] = {1, g->in_channels, g->cube[0], g->cube[1], g->cube[2]};
    bool ok = ndims == 5;
    for (int i = 1; ok && i < 5; i++) ok = shape[i] == want[i];
    if (ok) ok = c->max_batch_size > 0 ? shape[0] >= 1 && shape[0] <= c->max_batch_size : shape[0] == 1;
    if (!ok) {
        if (c->max_batch_size > 0)
            return fail(why, why_len, "input '%s' has shape %s: the model takes [B, %d, %d, %d, %d] with B in 1..%d", name,
                        shape_text(shape, ndims, got, sizeof got), g->in_channels, g->cube[0], g->cube[1], g->cube[2],
                        c->max_batch_size);
        return fail(why, why_len, "input '%s' has shape %s: the model takes [1, %d, %d, %d, %d]", name,
                    shape_text(shape, ndims, got, sizeof got), g->in_channels, g->cube[0], g->cube[1], g->cube[2]);
    }
    uint64_t expect = (uint64_t)shape[0] * (uint64_t)g->in_channels * (uint64_t)g->cube[0] * (uint64_t)g->cube[1] *
                      (uint64_t)g->cube[2] * sizeof(float);
    if (byte_size != expect)
        return fail(why, why_len, "input '%s' holds %llu bytes: its shape needs %llu", name,
                    (unsigned long long)byte_size, (unsigned long long)expect);
    *windows = shape[0];
    return true;
}

bool swt_check_volume_input(const swt_config *c, const char *datatype, const int64_t *shape, uint32_t ndims,
                            uint64_t byte_size, long long dim[3], int *channels, int *voxel_type, char *why,
                            size_t why_len) {
    char got[160];
    size_t elem;
    if (!strcmp(datatype, "FP32")) {
        *voxel_type = 0;  /* SWIN_VOXELS_F32 */
        elem = 4;
    } else if (!strcmp(datatype, "INT16")) {
        *voxel_type = 1;  /* SWIN_VOXELS_I16 */
        elem = 2;
    } else {
        return fail(why, why_len, "input '%s' has data type %s: the volume is FP32 or INT16 (intensities, HU for CT)",
                    SWT_SEG_VOLUME, datatype);
    }
    if (ndims != 3 && ndims != 4)
        return fail(why, why_len,
                    "input '%s' has shape %s: the volume is [nz, ny, nx] (NIfTI's voxel order), or [C, nz, ny, nx] "
                    "of C channels", SWT_SEG_VOLUME, shape_text(shape, ndims, got, sizeof got));
    const int64_t nch = ndims == 4 ? shape[0] : 1;
    if (nch < 1 || nch > SWIN_VOLUME_MAX_CHANNELS)
        return fail(why, why_len, "input '%s' has shape %s: 1..%d channels", SWT_SEG_VOLUME,
                    shape_text(shape, ndims, got, sizeof got), SWIN_VOLUME_MAX_CHANNELS);
    const int64_t *side = shape + ndims - 3; /* nz, ny, nx */
    long long voxels = 1;
    for (int i = 0; i < 3; i++) {
        if (side[i] < 1)
            return fail(why, why_len, "input '%s' has shape %s: every side at least 1", SWT_SEG_VOLUME,
                        shape_text(shape, ndims, got, sizeof got));
        if (side[i] > c->max_voxels || voxels > c->max_voxels / side[i])
            return fail(why, why_len, "input '%s' of shape %s is too large: this model takes at most %lld voxels "
                        "per channel (parameter max_voxels)", SWT_SEG_VOLUME, shape_text(shape, ndims, got, sizeof got),
                        c->max_voxels);
        voxels *= side[i];
    }
    /* at most 2^40 voxels (max_voxels), 16 channels, 4 bytes: no overflow */
    if (byte_size != (uint64_t)voxels * (uint64_t)nch * elem)
        return fail(why, why_len, "input '%s' holds %llu bytes: shape %s of %s needs %llu", SWT_SEG_VOLUME,
                    (unsigned long long)byte_size, shape_text(shape, ndims, got, sizeof got), datatype,
                    (unsigned long long)voxels * (unsigned long long)nch * elem);
    dim[0] = side[2];
    dim[1] = side[1];
    dim[2] = side[0];
    *channels = (int)nch;
    return true;
}

bool swt_check_affine_input(const char *datatype, const int64_t *shape, uint32_t ndims, uint64_t byte_size,
                            char *why, size_t why_len) {
    char got[160];
    if (strcmp(datatype, "FP64"))
        return fail(why, why_len, "input '%s' has data type %s: the affine is FP64", SWT_SEG_AFFINE, datatype);
    if (ndims != 2 || shape[0] != 4 || shape[1] != 4 || byte_size != 16 * sizeof(double))
        return fail(why, why_len, "input '%s' has shape %s: the affine is [4, 4] (voxel -> RAS mm, NIfTI's sform)",
                    SWT_SEG_AFFINE, shape_text(shape, ndims, got, sizeof got));
    return true;
}

bool swt_check_affine_values(const double a[16], char *why, size_t why_len) {
    for (int i = 0; i < 16; i++)
        if (!isfinite(a[i])) return fail(why, why_len, "input '%s' has a non-finite value at [%d, %d]", SWT_SEG_AFFINE, i / 4, i % 4);
    if (a[12] != 0 || a[13] != 0 || a[14] != 0 || a[15] != 1)
        return fail(why, why_len, "input '%s': the bottom row must be [0, 0, 0, 1]", SWT_SEG_AFFINE);
    double det = a[0] * (a[5] * a[10] - a[6] * a[9]) - a[1] * (a[4] * a[10] - a[6] * a[8]) +
                 a[2] * (a[4] * a[9] - a[5] * a[8]);
    double scale = 0;  /* |det| against the product of the column norms: singular when tiny */
    double norms = 1;
    for (int j = 0; j < 3; j++) {
        double n = sqrt(a[j] * a[j] + a[4 + j] * a[4 + j] + a[8 + j] * a[8 + j]);
        norms *= n;
    }
    scale = norms > 0 ? fabs(det) / norms : 0;
    if (!(scale > 1e-6))
        return fail(why, why_len, "input '%s': the 3x3 part is singular (voxel axes not independent)", SWT_SEG_AFFINE);
    return true;
}
