#include "runtime/exec.h"

static bool exec_reserve(struct swin_exec *e, size_t bytes, const char *name, int *id, void **data)
{
    *id = -1;
    *data = NULL;
    if (!EXEC_OK(e)) return false;
    int i = swin_plan_alloc(e->plan, bytes, name);
    if (i < 0) {
        e->status = e->planning
                        ? swin_error_set(e->err, SWIN_ERR_NOMEM, "planner: out of host memory at '%s'", name)
                        : swin_error_set(e->err, SWIN_ERR_INTERNAL,
                                         "run diverged from the plan at '%s' (%zu bytes); please report this",
                                         name, bytes);
        return false;
    }
    *id = i;
    if (!e->planning) *data = e->arena + e->plan->t[i].offset;
    return true;
}

bool swin_exec_activation(struct swin_exec *e, struct swin_activation *t, int d, int h, int w, int c, const char *name)
{
    void *data;
    const enum swin_dtype dtype = e->ops->act_dtype;
    size_t bytes = (size_t)d * (size_t)h * (size_t)w * (size_t)c * swin_dtype_bytes(dtype);
    bool ok = exec_reserve(e, bytes, name, &t->id, &data);
    t->v = (struct swin_vol){.data = data, .d = d, .h = h, .w = w, .c = c, .pitch = c, .dtype = dtype};
    return ok;
}

bool swin_exec_workspace(struct swin_exec *e, struct swin_workspace *ws, size_t bytes, const char *name)
{
    ws->bytes = bytes;
    if (bytes == 0) {  /* ops that need no scratch get none */
        ws->id = -1;
        ws->data = NULL;
        return EXEC_OK(e);
    }
    return exec_reserve(e, bytes, name, &ws->id, &ws->data);
}

void swin_exec_release(struct swin_exec *e, int id)
{
    if (e->planning && id >= 0) swin_plan_free(e->plan, id);
}

bool swin_exec_shrink_channels(struct swin_exec *e, struct swin_activation *t, int c)
{
    if (!EXEC_OK(e)) return false;
    const size_t bytes = swin_vol_voxels(t->v) * (size_t)c * swin_dtype_bytes(t->v.dtype);
    const bool ok = t->v.pitch == t->v.c && c < t->v.c && swin_plan_shrink(e->plan, t->id, bytes);
    if (!ok) {
        e->status = swin_error_set(e->err, SWIN_ERR_INTERNAL,
                                   "planner: cannot resize tensor %d from %d to %d channels; please report this",
                                   t->id, t->v.c, c);
        return false;
    }
    t->v.c = t->v.pitch = c;
    return true;
}

void swin_exec_op_failed(struct swin_exec *e, int rc, const char *op)
{
    const char *msg = e->ops->last_error ? e->ops->last_error(e->be) : "";
    e->status = swin_error_set(e->err, (swin_status)rc, "%s backend, op %s: %s", e->ops->name, op,
                               msg && *msg ? msg : swin_status_name((swin_status)rc));
}
