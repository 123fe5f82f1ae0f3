/* libFuzzer harness: the Triton backend's decoding of what reaches it from outside, the model
 * configuration (Triton's JSON of config.pbtxt) and a request's tensor properties.
 *
 * Input: the JSON, then optionally a 0 byte and a request record:
 *   u8 data type (index into TYPES), u8 rank (mod 9), rank x int64 shape, u64 byte size,
 *   then up to 16 float64 affine values.
 * A configuration that parses is checked for its invariants, then the record goes through
 * the checks of the configuration's mode; whatever a check accepts must be consistent with
 * the shape and byte size it accepted (otherwise the harness traps). */
#include <stdint.h>
#include <string.h>

#include "apps/triton/config.h"
#include "apps/triton/request.h"

static const char *const TYPES[] = {"FP32", "INT16", "FP64", "UINT16", "INT32", "BYTES", "BF16", "FP16"};

static void require(int cond) {
    if (!cond) __builtin_trap();
}

static size_t take(const uint8_t **p, const uint8_t *end, void *dst, size_t n) {
    size_t k = (size_t)(end - *p) < n ? (size_t)(end - *p) : n;
    memset(dst, 0, n);
    memcpy(dst, *p, k);
    *p += k;
    return k;
}

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size) {
    const uint8_t *zero = memchr(bytes, 0, size);
    size_t swin_json_len = zero ? (size_t)(zero - bytes) : size;
    swt_config c;
    char why[512] = "";
    if (!swt_config_parse((const char *)bytes, swin_json_len, &c, why, sizeof why)) {
        require(why[0] != '\0' && memchr(why, 0, sizeof why) != NULL);
        return 0;
    }
    require(c.mode == SWT_MODE_WINDOW || c.mode == SWT_MODE_SEGMENT);
    require(c.threads >= 0 && c.threads <= SWIN_THREADS_MAX && c.max_voxels >= 1);
    require(c.load.norm_groups >= 0 && c.load.norm_groups <= 4096 && c.load.merge_order >= SWIN_MERGE_ORDER_DEFAULT &&
            c.load.merge_order <= SWIN_MERGE_ORDER_V2);
    require(c.n_inputs >= 0 && c.n_inputs <= 2 && c.n_outputs >= 0 && c.n_outputs <= 1);
    if (!zero) return 0;

    const uint8_t *p = zero + 1, *end = bytes + size;
    uint8_t type = 0, rank = 0;
    take(&p, end, &type, 1);
    take(&p, end, &rank, 1);
    rank %= 9;
    int64_t shape[8];
    take(&p, end, shape, sizeof(int64_t) * rank);
    uint64_t byte_size;
    take(&p, end, &byte_size, sizeof byte_size);
    double affine[16];
    take(&p, end, affine, sizeof affine);
    const char *dt = TYPES[type % (sizeof TYPES / sizeof *TYPES)];

    why[0] = '\0';
    if (c.mode == SWT_MODE_WINDOW) {
        swt_window_geom g = {.in_channels = 1, .out_channels = 14, .cube = {32, 32, 32}};
        int64_t windows = 0;
        if (swt_check_window_input(&c, &g, dt, shape, rank, byte_size, &windows, why, sizeof why)) {
            require(windows >= 1 && (c.max_batch_size ? windows <= c.max_batch_size : windows == 1));
            require(byte_size == (uint64_t)windows * 32 * 32 * 32 * 4);
        } else {
            require(why[0] != '\0');
        }
        return 0;
    }
    long long dim[3];
    int vtype = -1, channels = 0;
    if (swt_check_volume_input(&c, dt, shape, rank, byte_size, dim, &channels, &vtype, why, sizeof why)) {
        require(dim[0] >= 1 && dim[1] >= 1 && dim[2] >= 1 && dim[0] * dim[1] <= c.max_voxels / dim[2]);
        require(channels >= 1 && channels <= SWIN_VOLUME_MAX_CHANNELS);
        require(byte_size == (uint64_t)(dim[0] * dim[1] * dim[2]) * (uint64_t)channels * (vtype == 1 ? 2u : 4u));
    } else {
        require(why[0] != '\0');
    }
    why[0] = '\0';
    if (!swt_check_affine_input(dt, shape, rank, byte_size, why, sizeof why)) require(why[0] != '\0');
    why[0] = '\0';
    if (!swt_check_affine_values(affine, why, sizeof why)) require(why[0] != '\0');
    return 0;
}
