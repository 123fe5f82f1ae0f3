/* Models and contexts: loading, what a model is, plans, and creating a context. */
#include "swinrun_py.h"

static void free_model(PyObject *capsule)
{
    swin_model_free(PyCapsule_GetPointer(capsule, SWINPY_MODEL_CAPSULE));
}

/* A context keeps its model's capsule alive (the context reads the model's weights). */
static void free_context(PyObject *capsule)
{
    swin_context_free(PyCapsule_GetPointer(capsule, SWINPY_CONTEXT_CAPSULE));
    Py_XDECREF((PyObject *)PyCapsule_GetContext(capsule));
}

PyObject *swinpy_model_load(PyObject *self, PyObject *args)
{
    const char *path;
    int merge_order, no_normalize, norm_groups;
    if (!PyArg_ParseTuple(args, "sipi", &path, &merge_order, &no_normalize, &norm_groups)) return NULL;
    if (merge_order < SWIN_MERGE_ORDER_DEFAULT || merge_order > SWIN_MERGE_ORDER_V2)
        return swinpy_raise_status(SWIN_ERR_ARG, "merge order %d is not one of 0..3", merge_order);
    swin_model_load_params lp = {.merge_order = (swin_merge_order_choice)merge_order, .no_normalize = no_normalize,
                                 .norm_groups = norm_groups};
    swin_model_t *m = NULL;
    swin_error err = {0};
    swin_status st;
    Py_BEGIN_ALLOW_THREADS st = swin_model_load_ex(path, &lp, &m, &err);
    Py_END_ALLOW_THREADS if (st) return swinpy_raise(&err);
    PyObject *cap = PyCapsule_New(m, SWINPY_MODEL_CAPSULE, free_model);
    if (!cap) swin_model_free(m);
    return cap;
}

PyObject *swinpy_model_info(PyObject *self, PyObject *args)
{
    PyObject *cap;
    if (!PyArg_ParseTuple(args, "O", &cap)) return NULL;
    swin_model_t *m = swinpy_model(cap);
    if (!m) return NULL;
    swin_model_info info;
    swin_model_get_info(m, &info);
    return swinpy_model_info_dict(&info);
}

int swinpy_context_params(PyObject *t, swin_context_params *p)
{
    int backend, precision;
    unsigned long long mem_limit;
    *p = swin_context_default_params();
    if (!PyArg_ParseTuple(t, "ii(iii)iiK", &backend, &precision, &p->cube[0], &p->cube[1], &p->cube[2], &p->threads,
                          &p->device, &mem_limit))
        return -1;
    p->backend = (swin_backend)backend;
    p->precision = (swin_precision)precision;
    p->mem_limit = (size_t)mem_limit;
    return 0;
}

/* (model, (backend, precision, (d, h, w), threads, device, mem_limit)) */
static swin_model_t *model_and_params(PyObject *args, swin_context_params *p, PyObject **model_cap)
{
    PyObject *params;
    if (!PyArg_ParseTuple(args, "OO!", model_cap, &PyTuple_Type, &params)) return NULL;
    swin_model_t *m = swinpy_model(*model_cap);
    if (!m || swinpy_context_params(params, p)) return NULL;
    return m;
}

PyObject *swinpy_model_plan(PyObject *self, PyObject *args)
{
    swin_context_params p;
    PyObject *cap;
    swin_model_t *m = model_and_params(args, &p, &cap);
    if (!m) return NULL;
    swin_plan_info plan;
    swin_error err = {0};
    swin_status st;
    Py_BEGIN_ALLOW_THREADS st = swin_model_plan(m, &p, &plan, &err);
    Py_END_ALLOW_THREADS if (st) return swinpy_raise(&err);
    return swinpy_plan_dict(&plan);
}

PyObject *swinpy_model_segment_defaults(PyObject *self, PyObject *args)
{
    PyObject *cap;
    if (!PyArg_ParseTuple(args, "O", &cap)) return NULL;
    swin_model_t *m = swinpy_model(cap);
    if (!m) return NULL;
    swin_segment_params sp = swin_model_segment_params(m);
    return swinpy_segment_params_dict(&sp);
}

PyObject *swinpy_context_create(PyObject *self, PyObject *args)
{
    swin_context_params p;
    PyObject *model_cap;
    swin_model_t *m = model_and_params(args, &p, &model_cap);
    if (!m) return NULL;
    swin_context_t *ctx = NULL;
    swin_error err = {0};
    swin_status st;
    Py_BEGIN_ALLOW_THREADS st = swin_context_create(m, &p, &ctx, &err);
    Py_END_ALLOW_THREADS if (st) return swinpy_raise(&err);
    PyObject *cap = PyCapsule_New(ctx, SWINPY_CONTEXT_CAPSULE, free_context);
    if (!cap) {
        swin_context_free(ctx);
        return NULL;
    }
    Py_INCREF(model_cap);
    if (PyCapsule_SetContext(cap, model_cap)) {
        Py_DECREF(model_cap);
        Py_DECREF(cap);
        return NULL;
    }
    return cap;
}

PyObject *swinpy_context_plan(PyObject *self, PyObject *args)
{
    PyObject *cap;
    if (!PyArg_ParseTuple(args, "O", &cap)) return NULL;
    swin_context_t *ctx = swinpy_context(cap);
    if (!ctx) return NULL;
    swin_plan_info plan;
    swin_context_plan(ctx, &plan);
    return swinpy_plan_dict(&plan);
}
