/* context_run: a batch of cubes through one context, item by item, without the GIL; Ctrl-C
 * (any pending signal whose handler raises) stops it between items. */
#include <string.h>

#include "swinrun_py.h"

static int is_float32(const Py_buffer *b)
{
    const char *f = b->format ? b->format : "B";
    if (*f == '<' || *f == '=' || *f == '@') f++;
    return b->itemsize == 4 && strcmp(f, "f") == 0;
}

/* Checks one (N, C, D, H, W) float32 C-contiguous buffer against the context. */
static int check_batch(const Py_buffer *b, const char *what, int channels, const int cube[3], Py_ssize_t n)
{
    if (!is_float32(b)) {
        swinpy_raise_status(SWIN_ERR_ARG, "%s: expected float32 values, got buffer format '%s'", what,
                            b->format ? b->format : "B");
        return -1;
    }
    if (b->ndim != 5) {
        swinpy_raise_status(SWIN_ERR_SHAPE, "%s: expected 5 dimensions (N, C, D, H, W), got %d", what, b->ndim);
        return -1;
    }
    const Py_ssize_t *s = b->shape;
    if ((n >= 0 && s[0] != n) || s[1] != channels || s[2] != cube[0] || s[3] != cube[1] || s[4] != cube[2]) {
        swinpy_raise_status(SWIN_ERR_SHAPE,
                            "%s: shape (%zd, %zd, %zd, %zd, %zd) does not match the context's (N, %d, %d, %d, %d)",
                            what, s[0], s[1], s[2], s[3], s[4], channels, cube[0], cube[1], cube[2]);
        return -1;
    }
    return 0;
}

PyObject *swinpy_context_run(PyObject *self, PyObject *args)
{
    PyObject *cap, *in_obj, *out_obj;
    if (!PyArg_ParseTuple(args, "OOO", &cap, &in_obj, &out_obj)) return NULL;
    swin_context_t *ctx = swinpy_context(cap);
    if (!ctx) return NULL;
    swin_model_info mi;
    swin_model_get_info(swin_context_model(ctx), &mi);
    swin_plan_info plan;
    swin_context_plan(ctx, &plan);

    Py_buffer in, out;
    if (PyObject_GetBuffer(in_obj, &in, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT)) {
        PyErr_Clear();
        return swinpy_raise_status(SWIN_ERR_ARG, "input: expected a C-contiguous float32 array");
    }
    if (PyObject_GetBuffer(out_obj, &out, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE)) {
        PyErr_Clear();
        PyBuffer_Release(&in);
        return swinpy_raise_status(SWIN_ERR_ARG, "output: expected a writable C-contiguous float32 array");
    }
    PyObject *result = NULL;
    if (check_batch(&in, "input", mi.in_channels, plan.cube, -1) ||
        check_batch(&out, "output", mi.out_channels, plan.cube, in.shape[0]))
        goto done;
    size_t voxels = (size_t)plan.cube[0] * plan.cube[1] * plan.cube[2];
    for (Py_ssize_t i = 0; i < in.shape[0]; i++) {
        const float *x = (const float *)in.buf + (size_t)i * mi.in_channels * voxels;
        float *y = (float *)out.buf + (size_t)i * mi.out_channels * voxels;
        swin_error err = {0};
        swin_status st;
        Py_BEGIN_ALLOW_THREADS st = swin_context_run(ctx, x, y, &err);
        Py_END_ALLOW_THREADS if (st)
        {
            swinpy_raise(&err);
            goto done;
        }
        if (PyErr_CheckSignals()) goto done;
    }
    result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&in);
    PyBuffer_Release(&out);
    return result;
}
