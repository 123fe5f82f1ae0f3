#include "weights/checkpoint/ckpt_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FAIL(st, ...) swin_error_set(err, st, __VA_ARGS__)
#define MAX_DIM ((int64_t)1 << 40)

enum swin_weights_kind swin_weights_kind_of(const char *path)
{
    unsigned char b[512] = {0};
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return SWIN_WEIGHTS_ONNX;
    struct stat sb;
    ssize_t k = fstat(fd, &sb) ? -1 : pread(fd, b, sizeof b, 0);
    close(fd);
    if (k < 9) return SWIN_WEIGHTS_ONNX;
    if (!memcmp(b, "PK\x03\x04", 4) || !memcmp(b, "PK\x05\x06", 4)) return SWIN_WEIGHTS_TORCH_ZIP;
    /* safetensors before the legacy pickle's 0x80: its first byte is the low byte of the header's
     * length, 0x80 for one header length in 256 */
    uint64_t hn = 0;
    for (int i = 8; i-- > 0;) hn = hn << 8 | b[i];
    if (b[8] == '{' && hn >= 2 && hn <= (uint64_t)sb.st_size - 8) return SWIN_WEIGHTS_SAFETENSORS;
    if (b[0] == 0x80 || (k >= 262 && !memcmp(b + 257, "ustar", 5))) return SWIN_WEIGHTS_TORCH_LEGACY;
    return SWIN_WEIGHTS_ONNX;
}

static size_t es_of(const struct swin_ckpt_tensor *t) { return swin_pickle_dtype_size(t->dtype); }

/* Shape, strides and offset against the storage: every element inside it, and no more
 * elements than it holds (an expanded view would make a weight larger than the file). */
static swin_status check_tensor(const struct swin_ckpt_file *c, struct swin_ckpt_tensor *t, swin_error *err)
{
    uint64_t numel = 1, last = 0;
    bool ok = t->offset >= 0 && t->ndim >= 0 && t->ndim <= PK_MAX_RANK && es_of(t);
    for (int i = 0; ok && i < t->ndim; i++) {
        ok = t->size[i] >= 0 && t->size[i] <= MAX_DIM && t->stride[i] >= 0 && t->stride[i] <= MAX_DIM;
        if (ok && t->size[i]) ok = numel <= (UINT64_MAX >> 2) / (uint64_t)t->size[i];
        if (ok) numel *= (uint64_t)t->size[i];
        /* each step stays inside the storage, so the sum cannot overflow */
        if (ok && t->size[i] > 1 && t->stride[i]) {
            ok = (uint64_t)(t->size[i] - 1) <= t->storage_numel / (uint64_t)t->stride[i];
            if (ok) last += (uint64_t)(t->size[i] - 1) * (uint64_t)t->stride[i];
            ok = ok && last <= t->storage_numel;
        }
    }
    if (!ok)
        return FAIL(SWIN_ERR_FORMAT, "%s: tensor '%s' has an impossible shape, stride or offset, or reaches past its storage (%llu elements)",
                    c->path, t->key, (unsigned long long)t->storage_numel);
    t->numel = numel;
    if (numel && ((uint64_t)t->offset >= t->storage_numel || last >= t->storage_numel - (uint64_t)t->offset || numel > t->storage_numel))
        return FAIL(SWIN_ERR_FORMAT, "%s: tensor '%s' (%llu elements) reaches past the end of its storage (%llu elements)",
                    c->path, t->key, (unsigned long long)numel, (unsigned long long)t->storage_numel);
    return SWIN_OK;
}

/* Drops a prefix every tensor key shares (DataParallel's module., Lightning's model. or net.,
 * torch.compile's _orig_mod.), again while one does. */
static void strip_prefixes(struct swin_ckpt_file *c)
{
    static const char *const pre[] = {"module.", "model.", "net.", "network.", "_orig_mod."};
    for (bool again = true; again && c->n;) {
        again = false;
        for (size_t p = 0; p < sizeof pre / sizeof *pre && !again; p++) {
            size_t pl = strlen(pre[p]);
            bool all = true;
            for (int i = 0; i < c->n && all; i++) all = !strncmp(c->t[i].key, pre[p], pl) && c->t[i].key[pl];
            if (!all) continue;
            for (int i = 0; i < c->n; i++) c->t[i].key += pl;
            size_t o = strlen(c->where);
            snprintf(c->where + o, sizeof c->where - o, ", prefix '%s' stripped", pre[p]);
            again = true;
        }
    }
}

swin_status swin_ckpt_open(const char *path, struct swin_ckpt_file *c, swin_error *err)
{
    memset(c, 0, sizeof *c);
    c->path = path;
    c->says_normalize = c->says_merging_v2 = c->says_group_norm = -1;
    c->says_norm_groups = 0;
    c->says_source = "the pickled module";
    c->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (c->fd < 0) return FAIL(SWIN_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(c->fd, &sb) || !S_ISREG(sb.st_mode)) {
        swin_ckpt_close(c);
        return FAIL(SWIN_ERR_IO, "%s: not a regular file", path);
    }
    c->size = (uint64_t)sb.st_size;
    swin_status st;
    switch (swin_weights_kind_of(path)) {
    case SWIN_WEIGHTS_TORCH_ZIP: st = swin_torch_zip_read(c, err); break;
    case SWIN_WEIGHTS_SAFETENSORS: st = swin_safetensors_read(c, err); break;
    case SWIN_WEIGHTS_TORCH_LEGACY:
        st = FAIL(SWIN_ERR_MODEL, "%s: a checkpoint in torch.save's legacy format (PyTorch < 1.6 or "
                  "_use_new_zipfile_serialization=False), which swinrun does not read: re-save it with a current PyTorch "
                  "(torch.save(torch.load(f, weights_only=True), f2))", path);
        break;
    default: st = FAIL(SWIN_ERR_FORMAT, "%s: neither a PyTorch checkpoint nor a safetensors file", path); break;
    }
    if (!st) {
        strip_prefixes(c);
        for (int i = 0; i < c->n && !st; i++)
            if (!c->t[i].placeholder) st = check_tensor(c, &c->t[i], err);
    }
    if (st) swin_ckpt_close(c);
    return st;
}

void swin_ckpt_close(struct swin_ckpt_file *c)
{
    if (c->fd >= 0) close(c->fd);
    swin_zip_close(&c->zip);
    swin_pickle_free(&c->pk);
    swin_json_free(c->json);
    free(c->t);
    free(c->module_keys);
    memset(c, 0, sizeof *c);
    c->fd = -1;
}

const struct swin_ckpt_tensor *swin_ckpt_find(const struct swin_ckpt_file *c, const char *key)
{
    for (int i = c->n; i-- > 0;)
        if (!strcmp(c->t[i].key, key)) return &c->t[i];
    return NULL;
}

void swin_ckpt_as_onnx_file(const struct swin_ckpt_file *c, struct swin_onnx_file *f, struct swin_onnx_side_file *side)
{
    memset(f, 0, sizeof *f);
    *side = (struct swin_onnx_side_file){.path = (char *)c->path, .fd = c->fd, .size = c->size};
    f->path = c->path;
    f->files = side;
    f->n_files = 1;
}

static bool contiguous(const struct swin_ckpt_tensor *t)
{
    int64_t want = 1;
    for (int i = t->ndim; i-- > 0;) {
        if (t->size[i] != 1 && t->stride[i] != want) return false;
        want *= t->size[i];
    }
    return true;
}

/* The elements in row-major order into a new buffer (numel * element size bytes): the
 * storage span the tensor touches is read, then gathered. */
static swin_status gather(const struct swin_ckpt_file *c, const struct swin_ckpt_tensor *t, void **out, swin_error *err)
{
    size_t es = es_of(t);
    uint64_t last = 0;
    for (int i = 0; i < t->ndim; i++)
        if (t->size[i]) last += (uint64_t)(t->size[i] - 1) * (uint64_t)t->stride[i];
    unsigned char *span = malloc((size_t)((t->numel ? last + 1 : 1) * es)), *dst = malloc((size_t)((t->numel ? t->numel : 1) * es));
    if (!span || !dst) {
        free(span);
        free(dst);
        return FAIL(SWIN_ERR_NOMEM, "%s: out of host memory reading '%s'", c->path, t->key);
    }
    swin_status st = t->numel ? swin_pread_exact(c->fd, c->path, t->storage_off + (uint64_t)t->offset * es, (size_t)((last + 1) * es),
                                                 span, err)
                              : SWIN_OK;
    int64_t idx[PK_MAX_RANK] = {0};
    for (uint64_t k = 0; !st && k < t->numel; k++) {
        uint64_t src = 0;
        for (int i = 0; i < t->ndim; i++) src += (uint64_t)idx[i] * (uint64_t)t->stride[i];
        memcpy(dst + k * es, span + src * es, es);
        for (int i = t->ndim; i-- > 0;) {
            if (++idx[i] < t->size[i]) break;
            idx[i] = 0;
        }
    }
    free(span);
    if (st) free(dst);
    else *out = dst;
    return st;
}

swin_status swin_ckpt_tensor_view(const struct swin_ckpt_file *c, const struct swin_ckpt_tensor *t, struct swin_onnx_tensor *out,
                                  void **buf, swin_error *err)
{
    *buf = NULL;
    memset(out, 0, sizeof *out);
    if (t->placeholder)
        return FAIL(SWIN_ERR_MODEL, "%s: '%s' is %s%s%s where a weight tensor must be", c->path, t->key,
                    *t->placeholder ? "a placeholder for the global '" : "not a tensor", t->placeholder,
                    *t->placeholder ? "' (never called)" : "");
    static const int onnx[] = {[PK_F32] = ONNX_FLOAT, [PK_F16] = ONNX_FLOAT16, [PK_BF16] = ONNX_BFLOAT16};
    if (t->dtype != PK_F32 && t->dtype != PK_F16 && t->dtype != PK_BF16)
        return FAIL(SWIN_ERR_MODEL, "%s: weight '%s' is %s; swinrun reads float32, float16 and bfloat16 weights", c->path, t->key,
                    swin_pickle_dtype_name(t->dtype));
    out->name = t->key;
    out->dtype = onnx[t->dtype];
    out->ndim = t->ndim;
    memcpy(out->dims, t->size, sizeof(int64_t) * (size_t)t->ndim);
    out->numel = t->numel;
    out->producer = -1;
    out->len = t->numel * es_of(t);
    if (contiguous(t)) {
        out->src = t->numel ? SRC_FILE : SRC_NONE;
        out->file = 0;
        out->off = t->storage_off + (uint64_t)t->offset * es_of(t);
        return SWIN_OK;
    }
    swin_status st = gather(c, t, buf, err);
    if (st) return st;
    out->src = SRC_MEMORY;
    out->mem = *buf;
    return SWIN_OK;
}

swin_status swin_ckpt_read_i64(const struct swin_ckpt_file *c, const struct swin_ckpt_tensor *t, int64_t *dst, swin_error *err)
{
    if (t->placeholder || (t->dtype != PK_I64 && t->dtype != PK_I32))
        return FAIL(SWIN_ERR_MODEL, "%s: '%s' is not an int64 or int32 tensor", c->path, t->key);
    void *raw;
    swin_status st = gather(c, t, &raw, err);
    if (st) return st;
    for (uint64_t i = 0; i < t->numel; i++) {
        if (t->dtype == PK_I64) {
            memcpy(&dst[i], (unsigned char *)raw + i * 8, 8);
        } else {
            int32_t v;
            memcpy(&v, (unsigned char *)raw + i * 4, 4);
            dst[i] = v;
        }
    }
    free(raw);
    return SWIN_OK;
}

swin_status swin_ckpt_read_f32(const struct swin_ckpt_file *c, const struct swin_ckpt_tensor *t, float *dst, swin_error *err)
{
    struct swin_onnx_tensor v;
    struct swin_onnx_file f;
    struct swin_onnx_side_file side;
    void *buf;
    swin_status st = swin_ckpt_tensor_view(c, t, &v, &buf, err);
    if (st) return st;
    swin_ckpt_as_onnx_file(c, &f, &side);
    if (t->numel) st = swin_onnx_tensor_read_f32(&f, &v, 0, t->numel, dst, err);
    free(buf);
    return st;
}
