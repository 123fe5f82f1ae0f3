#include "tests/kernels/cuda/cuda_op_test.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 64
static const float SENTINEL = -12345.678f;   /* float16: -12344 */

static void die(const char *what)
{
    fprintf(stderr, "FAIL %s\n", what);
    exit(1);
}

static void cuda_ok(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "FAIL %s: %s\n", what, cudaGetErrorString(e));
        exit(1);
    }
}

enum swin_dtype ct_dtype(void)
{
    const char *d = getenv("CT_DTYPE");
    return d && !strcmp(d, "f16") ? SWIN_F16 : SWIN_F32;
}

void ct_round(float *p, size_t n)
{
    if (ct_dtype() != SWIN_F16) return;
    for (size_t i = 0; i < n; i++) p[i] = (float)(_Float16)p[i];
}

/* The device bytes of n elements of the storage type under test. */
static size_t dev_bytes(size_t n) { return n * swin_dtype_bytes(ct_dtype()); }

/* Host float32 <-> device storage (n elements). */
static void to_device(void *dst, const float *src, size_t n, const char *what)
{
    if (ct_dtype() == SWIN_F32) {
        cuda_ok(cudaMemcpy(dst, src, n * sizeof(float), cudaMemcpyHostToDevice), what);
    } else {
        _Float16 *h = malloc(n * sizeof *h);
        if (!h) die("out of host memory for a conversion");
        for (size_t i = 0; i < n; i++) h[i] = (_Float16)src[i];
        cuda_ok(cudaMemcpy(dst, h, n * sizeof *h, cudaMemcpyHostToDevice), what);
        free(h);
    }
    /* the backend's stream is non-blocking: make sure the copy has landed */
    cuda_ok(cudaDeviceSynchronize(), what);
}

static void from_device(float *dst, const void *src, size_t n, const char *what)
{
    if (ct_dtype() == SWIN_F32) {
        cuda_ok(cudaMemcpy(dst, src, n * sizeof(float), cudaMemcpyDeviceToHost), what);
        return;
    }
    _Float16 *h = malloc(n * sizeof *h);
    if (!h) die("out of host memory for a conversion");
    cuda_ok(cudaMemcpy(h, src, n * sizeof *h, cudaMemcpyDeviceToHost), what);
    for (size_t i = 0; i < n; i++) dst[i] = (float)h[i];
    free(h);
}

void ct_env_init(ct_env *e, size_t weight_floats)
{
    memset(e, 0, sizeof *e);
    e->cap = weight_floats * sizeof(float) + 256 * 64;
    e->flat = aligned_alloc(256, (e->cap + 255) / 256 * 256);
    if (!e->flat) die("out of host memory for the weights");
    memset(e->flat, 0, e->cap);
}

float *ct_weight(ct_env *e, test_rng *r, size_t n, float lo, float hi)
{
    size_t bytes = (n * sizeof(float) + 255) / 256 * 256;
    if (e->used + bytes > e->cap) die("ct_weight: weight buffer too small (raise ct_env_init's size)");
    float *w = (float *)(e->flat + e->used);
    e->used += bytes;
    test_fill_uniform(r, w, n, lo, hi);
    ct_round(w, n);
    return w;
}

void ct_env_upload(ct_env *e)
{
    swin_error err = {0};
    swin_cuda_backend_free(e->gpu);
    e->gpu = NULL;
    e->model.flat = e->flat;
    e->model.flat_bytes = e->used ? e->used : 256;
    if (!e->cpu && swin_cpu_backend_create(1, &e->cpu, &err)) die(err.msg);
    swin_status st = swin_cuda_backend_create(0, &e->model, ct_dtype(), &e->gpu, &err);
#ifdef CT_REAL_GPU
    /* The nvcc build on a machine without a usable GPU: the backend must say so cleanly. */
    if (st == SWIN_ERR_BACKEND) {
        fprintf(stderr, "SKIP no usable CUDA device: %s\n", err.msg);
        exit(77);
    }
#endif
    if (st) die(err.msg);
}

void ct_env_free(ct_env *e)
{
    swin_cuda_backend_free(e->gpu);
    swin_cpu_backend_free(e->cpu);
    free(e->flat);
}

cvol cvol_new(int d, int h, int w, int c, int pitch, test_rng *r, float lo, float hi)
{
    cvol v;
    memset(&v, 0, sizeof v);
    const size_t vox = (size_t)d * h * w;
    v.total = vox * pitch + GUARD;
    v.hmem = malloc(v.total * sizeof(float));
    if (!v.hmem) die("out of host memory for a volume");
    for (size_t i = 0; i < v.total; i++) v.hmem[i] = SENTINEL;
    for (size_t i = 0; i < vox; i++) test_fill_uniform(r, v.hmem + i * pitch, (size_t)c, lo, hi);
    ct_round(v.hmem, v.total);
    cuda_ok(cudaMalloc(&v.dmem, dev_bytes(v.total)), "cudaMalloc of a test volume");
    to_device(v.dmem, v.hmem, v.total, "upload of a test volume");
    v.host = (struct swin_vol){v.hmem, d, h, w, c, pitch, SWIN_F32};
    v.dev = (struct swin_vol){v.dmem, d, h, w, c, pitch, ct_dtype()};
    return v;
}

void cvol_slice(const cvol *v, int c0, int c, struct swin_vol *host, struct swin_vol *dev)
{
    *host = v->host;
    *dev = v->dev;
    host->data = (float *)host->data + c0;
    dev->data = (char *)dev->data + dev_bytes((size_t)c0);
    host->c = dev->c = c;
}

bool cvol_compare(const char *what, const cvol *v, int c0, int c, double rel)
{
    float *got = malloc(v->total * sizeof(float));
    const size_t vox = swin_vol_voxels(v->host), pitch = (size_t)v->host.pitch;
    float *g = malloc((vox * c + 1) * sizeof(float)), *ref = malloc((vox * c + 1) * sizeof(float));
    if (!got || !g || !ref) die("out of host memory for a comparison");
    cuda_ok(cudaDeviceSynchronize(), what);
    from_device(got, v->dmem, v->total, "download of a test volume");
    size_t changed = 0;
    for (size_t i = 0; i < v->total; i++) {
        const size_t ch = i % pitch;
        if (i < vox * pitch && ch >= (size_t)c0 && ch < (size_t)(c0 + c)) {
            g[i / pitch * c + ch - c0] = got[i];
            ref[i / pitch * c + ch - c0] = v->hmem[i];
        } else {
            changed += memcmp(&got[i], &v->hmem[i], sizeof(float)) != 0;
        }
    }
    bool ok = check_close_scaled(what, g, ref, vox * c, rel);
    char msg[256];
    snprintf(msg, sizeof msg, "%s: elements outside channels [%d, %d) identical on both backends (%zu differ)", what,
             c0, c0 + c, changed);
    ok &= check_true(msg, changed == 0);
    free(got);
    free(g);
    free(ref);
    return ok;
}

void cvol_free(cvol *v)
{
    free(v->hmem);
    cudaFree(v->dmem);
}

void *ct_host_ws(size_t bytes)
{
    char *p = malloc(bytes + 256 + 4);
    if (!p) die("out of host memory for a workspace");
    return p + 4;
}

void *ct_dev_ws(size_t bytes)
{
    char *p = NULL;
    cuda_ok(cudaMalloc((void **)&p, bytes + 4), "cudaMalloc of a workspace");
    return p + 4;
}

void ct_host_ws_free(void *ws) { free((char *)ws - 4); }
void ct_dev_ws_free(void *ws) { cudaFree((char *)ws - 4); }

void ct_set_chunk_bytes(ct_env *e, size_t bytes)
{
    swin_error err = {0};
    if (swin_cuda_backend_set_chunk_bytes(e->gpu, bytes, &err)) die(err.msg);
}

bool ct_check_chunks(const char *what, const ct_env *e, enum swin_cuda_chunked_op op, long long expect)
{
    const struct swin_cuda_chunk_count c = swin_cuda_backend_chunk_count(e->gpu, op);
    char msg[320];
    snprintf(msg, sizeof msg, "%s: one call over %lld chunks of a %zu-byte budget (calls %lld, want 1 call over %lld >= 2)",
             what, c.most, swin_cuda_backend_chunk_bytes(e->gpu), c.calls, expect);
    return check_true(msg, expect >= 2 && c.calls == 1 && c.fewest == expect && c.most == expect);
}

bool ct_rc(const char *what, int rc, const struct swin_ops *ops, void *be)
{
    if (rc) {
        fprintf(stderr, "FAIL %s (%s backend): status %d: %s\n", what, ops->name, rc, ops->last_error(be));
        exit(1);
    }
    return true;
}
