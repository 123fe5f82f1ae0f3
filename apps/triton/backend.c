/* libtriton_swinrun.so: the Triton Inference Server backend API (1.19) over swinrun's public
 * API (pipeline/swinrun.h). One swin_model_t per Triton model, one swin_context_t per model
 * instance; requests run one after another on the instance's context, so the forward pass
 * allocates nothing. Modes and parameters: apps/triton/README.md. */
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/swinrun.h"
#include "core/clock.h"
#include "apps/triton/config.h"
#include "apps/triton/request.h"
#include "apps/triton/triton_api.h"

typedef struct model_state {
    swt_config cfg;
    swin_model_t *model;
    swin_model_info info;
} model_state;

typedef struct instance_state {
    model_state *ms;
    swin_context_t *ctx;
    swin_plan_info plan;
    swt_window_geom geom;       /* window mode: what one forward pass takes and gives */
    float *staging_in;          /* one window, when Triton's input is split or unaligned */
    float *staging_out;         /* one window's logits, when the output buffer is unaligned */
    char name[SWT_NAME_MAX];
} instance_state;

__attribute__((format(printf, 2, 3)))
static TRITONSERVER_Error *error_new(TRITONSERVER_Error_Code code, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return TRITONSERVER_ErrorNew(code, msg);
}

static void log_info(const char *msg) {
    TRITONSERVER_Error *e = TRITONSERVER_LogMessage(TRITONSERVER_LOG_INFO, __FILE__, __LINE__, msg);
    if (e) TRITONSERVER_ErrorDelete(e);
}

/* The Triton error code for a swinrun status: the caller's fault, the server's limits, or a bug. */
static TRITONSERVER_Error_Code code_of(swin_status s) {
    switch (s) {
    case SWIN_ERR_ARG: case SWIN_ERR_SHAPE: case SWIN_ERR_FORMAT: case SWIN_ERR_MODEL: case SWIN_ERR_MEM_LIMIT:
        return TRITONSERVER_ERROR_INVALID_ARG;
    case SWIN_ERR_IO: return TRITONSERVER_ERROR_NOT_FOUND;
    case SWIN_ERR_NOMEM: case SWIN_ERR_BACKEND: return TRITONSERVER_ERROR_UNAVAILABLE;
    case SWIN_ERR_CANCELLED: return TRITONSERVER_ERROR_CANCELLED;
    default: return TRITONSERVER_ERROR_INTERNAL;
    }
}

/* Segment mode: the volume's declared channels (dims [nz, ny, nx] is one; [C, nz, ny, nx]
 * C, or any with -1) against the model's input channels. */
static TRITONSERVER_Error *check_volume_dims(const model_state *ms) {
    const swt_tensor *vol = NULL;
    for (int i = 0; i < ms->cfg.n_inputs; i++)
        if (!strcmp(ms->cfg.inputs[i].name, SWT_SEG_VOLUME)) vol = &ms->cfg.inputs[i];
    const long long declared = vol->ndims == 4 ? vol->dims[0] : 1;
    const int ci = ms->info.in_channels;
    if (declared == ci || declared == -1) return NULL;
    if (ci == 1)
        return error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "model '%s': the model takes 1 input channel: declare %s dims [ -1, -1, -1 ] (nz, ny, nx)",
                         ms->cfg.name, SWT_SEG_VOLUME);
    return error_new(TRITONSERVER_ERROR_INVALID_ARG,
                     "model '%s': the model takes %d input channels (e.g. MRI sequences): declare %s dims "
                     "[ %d, -1, -1, -1 ] (channels, nz, ny, nx)",
                     ms->cfg.name, ci, SWT_SEG_VOLUME, ci);
}

TRITONSERVER_Error *TRITONBACKEND_Initialize(TRITONBACKEND_Backend *backend) {
    swin_set_vocabulary(SWIN_VOCAB_TRITON);
    uint32_t major, minor;
    TRITONSERVER_Error *e = TRITONBACKEND_ApiVersion(&major, &minor);
    if (e) return e;
    if (major != TRITONBACKEND_API_VERSION_MAJOR || minor < TRITONBACKEND_API_VERSION_MINOR)
        return error_new(TRITONSERVER_ERROR_UNSUPPORTED,
                         "swinrun backend: built for backend API %d.%d, this Triton has %u.%u: use Triton 2.51 or later",
                         TRITONBACKEND_API_VERSION_MAJOR, TRITONBACKEND_API_VERSION_MINOR, major, minor);
    /* glibc raises its mmap threshold after the first large free, up to 32 MiB, and from
     * then on serves weights and arenas from heaps that seldom shrink: a model unloaded and
     * loaded again would leave the server's RSS higher each time. Fixed at glibc's default
     * (128 KiB), buffers that large are mapped and unmapped, back to the system on unload. */
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    char msg[128];
    snprintf(msg, sizeof msg, "swinrun backend %s (backend API %u.%u)", SWINRUN_VERSION, major, minor);
    log_info(msg);
    return NULL;
}

/* Window mode: the config's dims against the model's (1, Ci, D, H, W) -> (1, Co, D, H, W),
 * the leading 1 absent when max_batch_size > 0; -1 matches anything. */
static TRITONSERVER_Error *check_window_dims(const model_state *ms, const int cube[3]) {
    const swt_config *c = &ms->cfg;
    for (int io = 0; io < 2; io++) {
        const swt_tensor *t = io ? &c->outputs[0] : &c->inputs[0];
        long long want[5] = {1, io ? ms->info.out_channels : ms->info.in_channels, cube[0], cube[1], cube[2]};
        int skip = c->max_batch_size > 0 ? 1 : 0;
        for (int i = 0; i < t->ndims; i++)
            if (t->dims[i] != -1 && t->dims[i] != want[i + skip])
                return error_new(TRITONSERVER_ERROR_INVALID_ARG,
                                 "model '%s': %s '%s' dims[%d] is %lld, the model has %lld there (%s (1, %lld, %d, %d, %d))",
                                 c->name, io ? "output" : "input", t->name, i, t->dims[i], want[i + skip],
                                 io ? "logits" : "input", want[1], cube[0], cube[1], cube[2]);
    }
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInitialize(TRITONBACKEND_Model *model) {
    TRITONSERVER_Message *msg;
    TRITONSERVER_Error *e = TRITONBACKEND_ModelConfig(model, 1, &msg);
    if (e) return e;
    const char *json;
    size_t len;
    e = TRITONSERVER_MessageSerializeToJson(msg, &json, &len);
    if (e) {
        TRITONSERVER_MessageDelete(msg);
        return e;
    }
    model_state *ms = calloc(1, sizeof *ms);
    if (!ms) {
        TRITONSERVER_MessageDelete(msg);
        return error_new(TRITONSERVER_ERROR_UNAVAILABLE, "swinrun backend: out of host memory");
    }
    char why[512];
    bool ok = swt_config_parse(json, len, &ms->cfg, why, sizeof why);
    TRITONSERVER_MessageDelete(msg);
    if (!ok) {
        free(ms);
        return error_new(TRITONSERVER_ERROR_INVALID_ARG, "swinrun backend: config.pbtxt: %s", why);
    }

    TRITONBACKEND_ArtifactType type;
    const char *location;
    uint64_t version;
    if ((e = TRITONBACKEND_ModelRepository(model, &type, &location)) || (e = TRITONBACKEND_ModelVersion(model, &version))) {
        free(ms);
        return e;
    }
    if (type != TRITONBACKEND_ARTIFACT_FILESYSTEM) {
        e = error_new(TRITONSERVER_ERROR_UNSUPPORTED, "model '%s': swinrun reads models from the file system only",
                      ms->cfg.name);
        free(ms);
        return e;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%llu/%s", location, (unsigned long long)version, ms->cfg.model_file);
    if (!ms->cfg.model_file_given && access(path, F_OK) != 0) {
        /* no model.onnx: the version folder itself may be a MONAI bundle (configs/inference.json or .yaml) */
        char bundle[4096];
        snprintf(bundle, sizeof bundle, "%s/%llu/configs", location, (unsigned long long)version);
        if (access(bundle, F_OK) == 0) snprintf(path, sizeof path, "%s/%llu", location, (unsigned long long)version);
    }
    swin_error err;
    if (swin_model_load_ex(path, &ms->cfg.load, &ms->model, &err)) {
        e = error_new(code_of(err.status), "model '%s': %s", ms->cfg.name, err.msg);
        free(ms);
        return e;
    }
    swin_model_get_info(ms->model, &ms->info);
    if (ms->cfg.mode == SWT_MODE_SEGMENT) e = check_volume_dims(ms);
    if (!e && ms->cfg.mode == SWT_MODE_SEGMENT && !ms->cfg.cube[0] && !ms->info.cube[0])
        e = error_new(TRITONSERVER_ERROR_INVALID_ARG,
                      "model '%s': the model does not say which cube it runs on (a checkpoint, or an export with "
                      "dynamic axes): give parameter cube \"D,H,W\" (multiples of 32; MONAI's recipes use 96,96,96)",
                      ms->cfg.name);
    if (!e && ms->cfg.mode == SWT_MODE_WINDOW) {
        const int *cube = ms->cfg.cube[0] ? ms->cfg.cube : ms->info.cube;
        if (!cube[0])
            e = error_new(TRITONSERVER_ERROR_INVALID_ARG,
                          "model '%s': the export has dynamic spatial axes: give parameter cube \"D,H,W\"", ms->cfg.name);
        else
            e = check_window_dims(ms, cube);
    }
    if (!e) e = TRITONBACKEND_ModelSetState(model, ms);
    if (e) {
        swin_model_free(ms->model);
        free(ms);
        return e;
    }
    char line[4096 + 256];
    snprintf(line, sizeof line, "swinrun model '%s': %s, mode %s, %d -> %d channels, %zu weight bytes", ms->cfg.name,
             path, ms->cfg.mode == SWT_MODE_SEGMENT ? "segment" : "window", ms->info.in_channels,
             ms->info.out_channels, ms->info.weight_bytes);
    log_info(line);
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelFinalize(TRITONBACKEND_Model *model) {
    void *p;
    TRITONSERVER_Error *e = TRITONBACKEND_ModelState(model, &p);
    if (e) return e;
    model_state *ms = p;
    if (ms) {
        swin_model_free(ms->model);
        free(ms);
    }
    malloc_trim(0);  /* the freed small allocations' pages back to the system too */
    return NULL;
}

static void instance_free(instance_state *st) {
    if (!st) return;
    swin_context_free(st->ctx);
    free(st->staging_in);
    free(st->staging_out);
    free(st);
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceInitialize(TRITONBACKEND_ModelInstance *instance) {
    TRITONBACKEND_Model *model;
    void *p;
    const char *name;
    TRITONSERVER_InstanceGroupKind kind;
    int32_t device;
    TRITONSERVER_Error *e;
    if ((e = TRITONBACKEND_ModelInstanceModel(instance, &model)) || (e = TRITONBACKEND_ModelState(model, &p)) ||
        (e = TRITONBACKEND_ModelInstanceName(instance, &name)) || (e = TRITONBACKEND_ModelInstanceKind(instance, &kind)) ||
        (e = TRITONBACKEND_ModelInstanceDeviceId(instance, &device)))
        return e;
    model_state *ms = p;
    if (kind != TRITONSERVER_INSTANCEGROUPKIND_CPU && kind != TRITONSERVER_INSTANCEGROUPKIND_GPU)
        return error_new(TRITONSERVER_ERROR_INVALID_ARG, "instance '%s': swinrun runs KIND_CPU and KIND_GPU instances, not %s",
                         name, TRITONSERVER_InstanceGroupKindString(kind));
    instance_state *st = calloc(1, sizeof *st);
    if (!st) return error_new(TRITONSERVER_ERROR_UNAVAILABLE, "instance '%s': out of host memory", name);
    st->ms = ms;
    snprintf(st->name, sizeof st->name, "%s", name);
    swin_context_params cp = swt_context_params(&ms->cfg, kind == TRITONSERVER_INSTANCEGROUPKIND_GPU, device);

    /* the plan first, unlimited, then against the limit: an instance over it is refused before
     * anything is allocated, with the parameter's name in the message */
    swin_error err;
    swin_context_params unlimited = cp;
    unlimited.mem_limit = 0;
    if (swin_model_plan(ms->model, &unlimited, &st->plan, &err)) {
        e = error_new(code_of(err.status), "instance '%s': %s", name, err.msg);
        goto fail;
    }
    const swin_plan_info *pl = &st->plan;
    if (cp.mem_limit && pl->total_bytes > cp.mem_limit) {
        e = error_new(TRITONSERVER_ERROR_INVALID_ARG,
                      "instance '%s': the plan needs %zu bytes (weights %zu + arena %zu + context %zu) at cube %dx%dx%d, "
                      "over parameter memory_limit %zu: raise memory_limit, give a smaller cube, or run fewer instances "
                      "per device", name, pl->total_bytes, pl->weight_bytes, pl->arena_bytes, pl->context_bytes,
                      pl->cube[0], pl->cube[1], pl->cube[2], cp.mem_limit);
        goto fail;
    }
    if (swin_context_create(ms->model, &cp, &st->ctx, &err)) {
        e = error_new(code_of(err.status), "instance '%s': %s", name, err.msg);
        goto fail;
    }
    swin_context_plan(st->ctx, &st->plan);
    st->geom = (swt_window_geom){.in_channels = ms->info.in_channels, .out_channels = ms->info.out_channels};
    memcpy(st->geom.cube, st->plan.cube, sizeof st->geom.cube);
    if (ms->cfg.mode == SWT_MODE_WINDOW) {
        size_t vox = (size_t)pl->cube[0] * (size_t)pl->cube[1] * (size_t)pl->cube[2];
        st->staging_in = malloc(vox * (size_t)ms->info.in_channels * sizeof(float));
        st->staging_out = malloc(vox * (size_t)ms->info.out_channels * sizeof(float));
        if (!st->staging_in || !st->staging_out) {
            e = error_new(TRITONSERVER_ERROR_UNAVAILABLE, "instance '%s': out of host memory", name);
            goto fail;
        }
    }
    if ((e = TRITONBACKEND_ModelInstanceSetState(instance, st))) goto fail;
    char line[512];
    snprintf(line, sizeof line, "swinrun instance '%s': %s backend (%s), %d threads, cube %dx%dx%d, plan %zu bytes",
             name, st->plan.backend == SWIN_BACKEND_CUDA ? "cuda" : "cpu", st->plan.backend_reason, cp.threads,
             st->plan.cube[0], st->plan.cube[1], st->plan.cube[2], st->plan.total_bytes);
    log_info(line);
    return NULL;
fail:
    instance_free(st);
    return e;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceFinalize(TRITONBACKEND_ModelInstance *instance) {
    void *p;
    TRITONSERVER_Error *e = TRITONBACKEND_ModelInstanceState(instance, &p);
    if (e) return e;
    instance_free(p);
    return NULL;
}

/* Copies bytes [offset, offset + n) of an input, however Triton split it into buffers, to dst. */
static TRITONSERVER_Error *gather(TRITONBACKEND_Input *in, uint32_t buffers, uint64_t offset, uint64_t n, void *dst) {
    uint64_t pos = 0;
    for (uint32_t i = 0; i < buffers && n; i++) {
        const void *buf;
        uint64_t size;
        TRITONSERVER_MemoryType mt = TRITONSERVER_MEMORY_CPU;
        int64_t mid = 0;
        TRITONSERVER_Error *e = TRITONBACKEND_InputBuffer(in, i, &buf, &size, &mt, &mid);
        if (e) return e;
        if (mt == TRITONSERVER_MEMORY_GPU)
            return error_new(TRITONSERVER_ERROR_UNSUPPORTED, "swinrun takes its inputs in host memory, not on a GPU");
        if (offset < pos + size) {
            uint64_t from = offset - pos, take = size - from < n ? size - from : n;
            memcpy(dst, (const char *)buf + from, take);
            dst = (char *)dst + take;
            offset += take;
            n -= take;
        }
        pos += size;
    }
    return n ? error_new(TRITONSERVER_ERROR_INVALID_ARG, "input shorter than its shape says") : NULL;
}

/* The whole input in host memory: Triton's own buffer when it is one and aligned to `align`,
 * else a copy in *owned (freed by the caller). */
static TRITONSERVER_Error *host_input(TRITONBACKEND_Input *in, uint32_t buffers, uint64_t bytes, size_t align,
                                      const void **data, void **owned) {
    *owned = NULL;
    if (buffers == 1) {
        const void *buf;
        uint64_t size;
        TRITONSERVER_MemoryType mt = TRITONSERVER_MEMORY_CPU;
        int64_t mid = 0;
        TRITONSERVER_Error *e = TRITONBACKEND_InputBuffer(in, 0, &buf, &size, &mt, &mid);
        if (e) return e;
        if (mt != TRITONSERVER_MEMORY_GPU && size == bytes && (uintptr_t)buf % align == 0) {
            *data = buf;
            return NULL;
        }
    }
    *owned = malloc(bytes ? bytes : 1);
    if (!*owned) return error_new(TRITONSERVER_ERROR_UNAVAILABLE, "out of host memory for a %llu-byte input",
                                  (unsigned long long)bytes);
    TRITONSERVER_Error *e = gather(in, buffers, 0, bytes, *owned);
    if (e) {
        free(*owned);
        *owned = NULL;
        return e;
    }
    *data = *owned;
    return NULL;
}

typedef struct input_view {
    TRITONBACKEND_Input *in;
    const char *datatype;
    const int64_t *shape;
    uint32_t ndims, buffers;
    uint64_t bytes;
} input_view;

static TRITONSERVER_Error *get_input(TRITONBACKEND_Request *r, const char *name, input_view *v) {
    TRITONSERVER_Error *e = TRITONBACKEND_RequestInput(r, name, &v->in);
    if (e) {
        TRITONSERVER_ErrorDelete(e);
        return error_new(TRITONSERVER_ERROR_INVALID_ARG, "the request has no input '%s'", name);
    }
    const char *n;
    TRITONSERVER_DataType dt;
    if ((e = TRITONBACKEND_InputProperties(v->in, &n, &dt, &v->shape, &v->ndims, &v->bytes, &v->buffers))) return e;
    v->datatype = TRITONSERVER_DataTypeString(dt);
    return NULL;
}

/* One output buffer of `bytes` in host memory. */
static TRITONSERVER_Error *host_output(TRITONBACKEND_Response *resp, const char *name, TRITONSERVER_DataType dt,
                                       const int64_t *shape, uint32_t ndims, uint64_t bytes, void **buf) {
    TRITONBACKEND_Output *out;
    TRITONSERVER_Error *e = TRITONBACKEND_ResponseOutput(resp, &out, name, dt, shape, ndims);
    if (e) return e;
    TRITONSERVER_MemoryType mt = TRITONSERVER_MEMORY_CPU;
    int64_t mid = 0;
    if ((e = TRITONBACKEND_OutputBuffer(out, buf, bytes, &mt, &mid))) return e;
    if (mt == TRITONSERVER_MEMORY_GPU)
        return error_new(TRITONSERVER_ERROR_UNSUPPORTED, "swinrun writes its outputs in host memory, not on a GPU");
    return NULL;
}

typedef struct run_times {
    uint64_t compute_start, compute_end;
    int64_t batch;   /* windows (window mode) or volumes (segment mode) */
} run_times;

static TRITONSERVER_Error *run_window(instance_state *st, TRITONBACKEND_Request *r, TRITONBACKEND_Response *resp,
                                      run_times *t) {
    const swt_config *c = &st->ms->cfg;
    input_view v;
    TRITONSERVER_Error *e = get_input(r, c->inputs[0].name, &v);
    if (e) return e;
    char why[512];
    int64_t windows;
    if (!swt_check_window_input(c, &st->geom, v.datatype, v.shape, v.ndims, v.bytes, &windows, why, sizeof why))
        return error_new(TRITONSERVER_ERROR_INVALID_ARG, "%s", why);
    const swt_window_geom *g = &st->geom;
    size_t vox = (size_t)g->cube[0] * (size_t)g->cube[1] * (size_t)g->cube[2];
    size_t in_n = vox * (size_t)g->in_channels, out_n = vox * (size_t)g->out_channels;
    int64_t shape[5] = {windows, g->out_channels, g->cube[0], g->cube[1], g->cube[2]};
    void *obuf;
    if ((e = host_output(resp, c->outputs[0].name, TRITONSERVER_TYPE_FP32, shape, 5,
                         (uint64_t)windows * out_n * sizeof(float), &obuf)))
        return e;
    /* Triton's input buffer read in place when it is one aligned block, else window by window */
    const float *whole = NULL;
    if (v.buffers == 1) {
        const void *buf;
        uint64_t size;
        TRITONSERVER_MemoryType mt = TRITONSERVER_MEMORY_CPU;
        int64_t mid = 0;
        if ((e = TRITONBACKEND_InputBuffer(v.in, 0, &buf, &size, &mt, &mid))) return e;
        if (mt != TRITONSERVER_MEMORY_GPU && size == v.bytes && (uintptr_t)buf % sizeof(float) == 0) whole = buf;
    }
    bool out_aligned = (uintptr_t)obuf % sizeof(float) == 0;
    t->compute_start = swin_clock_ns();
    for (int64_t w = 0; w < windows; w++) {
        const float *in = whole ? whole + (size_t)w * in_n : st->staging_in;
        if (!whole && (e = gather(v.in, v.buffers, (uint64_t)w * in_n * sizeof(float), in_n * sizeof(float), st->staging_in)))
            return e;
        float *out = out_aligned ? (float *)obuf + (size_t)w * out_n : st->staging_out;
        swin_error err;
        if (swin_context_run(st->ctx, in, out, &err))
            return error_new(code_of(err.status), "window %lld of %lld: %s", (long long)w, (long long)windows, err.msg);
        if (!out_aligned) memcpy((char *)obuf + (size_t)w * out_n * sizeof(float), out, out_n * sizeof(float));
    }
    t->compute_end = swin_clock_ns();
    t->batch = windows;
    return NULL;
}

static bool request_cancelled(void *user) {
    bool cancelled = false;
    TRITONSERVER_Error *e = TRITONBACKEND_RequestIsCancelled(user, &cancelled);
    if (e) TRITONSERVER_ErrorDelete(e);
    return cancelled;
}

static TRITONSERVER_Error *run_segment(instance_state *st, TRITONBACKEND_Request *r, TRITONBACKEND_Response *resp,
                                       run_times *t) {
    const swt_config *c = &st->ms->cfg;
    input_view vol, aff;
    TRITONSERVER_Error *e;
    if ((e = get_input(r, SWT_SEG_VOLUME, &vol)) || (e = get_input(r, SWT_SEG_AFFINE, &aff))) return e;
    char why[512];
    long long dim[3];
    int vtype, nch;
    if (!swt_check_volume_input(c, vol.datatype, vol.shape, vol.ndims, vol.bytes, dim, &nch, &vtype, why, sizeof why) ||
        !swt_check_affine_input(aff.datatype, aff.shape, aff.ndims, aff.bytes, why, sizeof why))
        return error_new(TRITONSERVER_ERROR_INVALID_ARG, "%s", why);
    swin_volume v[SWIN_VOLUME_MAX_CHANNELS];
    v[0] = (swin_volume){.type = vtype == 1 ? SWIN_VOXELS_I16 : SWIN_VOXELS_F32, .dim = {dim[0], dim[1], dim[2]}};
    double a[16];
    if ((e = gather(aff.in, aff.buffers, 0, sizeof a, a))) return e;
    if (!swt_check_affine_values(a, why, sizeof why)) return error_new(TRITONSERVER_ERROR_INVALID_ARG, "%s", why);
    memcpy(v[0].affine, a, sizeof a);
    void *owned;
    if ((e = host_input(vol.in, vol.buffers, vol.bytes, vtype == 1 ? 2 : 4, &v[0].voxels, &owned))) return e;
    size_t voxels = (size_t)dim[0] * (size_t)dim[1] * (size_t)dim[2];
    for (int ch = 1; ch < nch; ch++) { /* (C, nz, ny, nx): channel ch is the ch-th block of voxels */
        v[ch] = v[0];
        v[ch].voxels = (const char *)v[0].voxels + (size_t)ch * voxels * (vtype == 1 ? 2 : 4);
    }
    void *lbuf;
    const int64_t *lshape = vol.shape + vol.ndims - 3; /* the labels: (nz, ny, nx) */
    if ((e = host_output(resp, SWT_SEG_LABELS, TRITONSERVER_TYPE_UINT16, lshape, 3, voxels * sizeof(uint16_t), &lbuf))) {
        free(owned);
        return e;
    }
    uint16_t *labels = (uintptr_t)lbuf % sizeof(uint16_t) == 0 ? lbuf : malloc(voxels * sizeof(uint16_t));
    if (!labels) {
        free(owned);
        return error_new(TRITONSERVER_ERROR_UNAVAILABLE, "out of host memory for %zu labels", voxels);
    }
    swin_segment_params base = swin_model_segment_params(st->ms->model);
    swin_segment_params sp = swt_segment_params(c, &base);
    sp.cancel = request_cancelled;
    sp.user = r;
    swin_error err;
    t->compute_start = swin_clock_ns();
    swin_status s = swin_segment_channels(st->ctx, v, nch, &sp, labels, NULL, NULL, &err);
    t->compute_end = swin_clock_ns();
    if (labels != lbuf) {
        if (!s) memcpy(lbuf, labels, voxels * sizeof(uint16_t));
        free(labels);
    }
    free(owned);
    if (s) return error_new(code_of(err.status), "%s", err.msg);
    t->batch = 1;
    return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceExecute(TRITONBACKEND_ModelInstance *instance,
                                                       TRITONBACKEND_Request **requests, const uint32_t count) {
    void *p;
    TRITONSERVER_Error *e = TRITONBACKEND_ModelInstanceState(instance, &p);
    if (e) return e;  /* Triton answers every request with this error and keeps ownership */
    instance_state *st = p;
    uint64_t exec_start = swin_clock_ns(), first_compute = 0, last_compute = 0;
    int64_t batch = 0;
    for (uint32_t i = 0; i < count; i++) {
        TRITONBACKEND_Request *r = requests[i];
        uint64_t start = swin_clock_ns();
        run_times t = {0};
        TRITONBACKEND_Response *resp = NULL;
        e = TRITONBACKEND_ResponseNew(&resp, r);
        if (!e) {
            e = st->ms->cfg.mode == SWT_MODE_SEGMENT ? run_segment(st, r, resp, &t) : run_window(st, r, resp, &t);
            TRITONSERVER_Error *se = TRITONBACKEND_ResponseSend(resp, TRITONSERVER_RESPONSE_COMPLETE_FINAL, e);
            if (se) TRITONSERVER_ErrorDelete(se);
        }
        if (!t.compute_start) t.compute_start = t.compute_end = swin_clock_ns();
        uint64_t end = swin_clock_ns();
        TRITONSERVER_Error *re =
            TRITONBACKEND_ModelInstanceReportStatistics(instance, r, e == NULL, start, t.compute_start, t.compute_end, end);
        if (re) TRITONSERVER_ErrorDelete(re);
        if (e) {
            TRITONSERVER_ErrorDelete(e);
        } else {
            batch += t.batch;
            if (!first_compute) first_compute = t.compute_start;
            last_compute = t.compute_end;
        }
        re = TRITONBACKEND_RequestRelease(r, TRITONSERVER_REQUEST_RELEASE_ALL);
        if (re) TRITONSERVER_ErrorDelete(re);
    }
    if (batch > 0) {
        e = TRITONBACKEND_ModelInstanceReportBatchStatistics(instance, (uint64_t)batch, exec_start, first_compute,
                                                             last_compute, swin_clock_ns());
        if (e) TRITONSERVER_ErrorDelete(e);
    }
    return NULL;
}
