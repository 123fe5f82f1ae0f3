/* The execution context that forward() is written against, in plan and in run mode.
 *
 * Plan mode: swin_exec_activation()/swin_exec_workspace() only declare sizes to the planner and give
 * tensors NULL data; ops are not called (EXEC_OP skips them). Run mode: the same calls,
 * in the same order, return pointers into the one arena at the planned offsets, and
 * EXEC_OP runs the op and records the first failure. forward() never allocates. */
#ifndef SWIN_EXEC_H
#define SWIN_EXEC_H

#include <stdbool.h>

#include "kernels/op_check.h"
#include "runtime/plan.h"
#include "core/status.h"

struct swin_exec {
    struct swin_plan *plan;
    bool planning;
    char *arena;                 /* run mode: base of the planned arena */
    const struct swin_ops *ops;
    void *be;
    swin_error *err;
    swin_status status;          /* first failure; later ops are skipped */
    /* Run mode, where the logits go: NULL, to forward()'s host_out; else added into this ring
     * of the backend (ops ring_add) as the cube at padded start ring_start. */
    void *ring;
    const struct swin_ring_geom *ring_geom;
    const int64_t *ring_start;
};

/* An activation: a channels-last volume plus its planner id. */
struct swin_activation {
    struct swin_vol v;
    int id;
};

/* A scratch buffer for one op. */
struct swin_workspace {
    void *data;
    size_t bytes;
    int id;
};

bool swin_exec_activation(struct swin_exec *e, struct swin_activation *t, int d, int h, int w, int c, const char *name);
bool swin_exec_workspace(struct swin_exec *e, struct swin_workspace *ws, size_t bytes, const char *name);
void swin_exec_release(struct swin_exec *e, int id);
/* Gives activation t (a whole tensor, pitch == its channels) c fewer channels per voxel from
 * now on, in place: its tensor shrinks to the new size; the data pointer stays. The caller
 * has packed the contents into those bytes (runtime/inplace.h). */
bool swin_exec_shrink_channels(struct swin_exec *e, struct swin_activation *t, int c);
/* Records the failure of an op (rc != 0) with the backend's message. */
void swin_exec_op_failed(struct swin_exec *e, int rc, const char *op);

/* A view of channels [c0, c0 + nc) of a volume (same voxels, same pitch). */
static inline struct swin_vol vol_channels(struct swin_vol v, int c0, int nc)
{
    v.data = v.data ? (char *)v.data + (size_t)c0 * swin_dtype_bytes(v.dtype) : NULL;
    v.c = nc;
    return v;
}

#define EXEC_OK(e) ((e)->status == SWIN_OK)
#define EXEC_OP(e, opname, ...)                                                        \
    do {                                                                               \
        if (!(e)->planning && EXEC_OK(e)) {                                            \
            int rc_ = swin_op_##opname((e)->ops, (e)->be, __VA_ARGS__);                \
            if (rc_) swin_exec_op_failed((e), rc_, #opname);                                \
        }                                                                              \
    } while (0)

#endif
