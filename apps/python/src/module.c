/* swinrun._swinrun: the method table, the status -> exception mapping and the capsules. */
#include <stdarg.h>
#include <stdio.h>

#include "swinrun_py.h"

/* The exception class of each status, registered by the package (swinrun/errors.py). */
static PyObject *error_classes[SWIN_ERR_INTERNAL + 1];

static PyObject *class_of(swin_status status)
{
    if (status > SWIN_OK && status <= SWIN_ERR_INTERNAL && error_classes[status]) return error_classes[status];
    return PyExc_RuntimeError;
}

PyObject *swinpy_raise(const swin_error *err)
{
    PyErr_SetString(class_of(err->status), err->msg[0] ? err->msg : swin_status_name(err->status));
    return NULL;
}

PyObject *swinpy_raise_status(swin_status status, const char *fmt, ...)
{
    char msg[SWIN_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    PyErr_SetString(class_of(status), msg);
    return NULL;
}

swin_model_t *swinpy_model(PyObject *capsule)
{
    return PyCapsule_GetPointer(capsule, SWINPY_MODEL_CAPSULE);
}

swin_context_t *swinpy_context(PyObject *capsule)
{
    return PyCapsule_GetPointer(capsule, SWINPY_CONTEXT_CAPSULE);
}

/* _set_errors(classes): classes[s] is raised for status s (index 0 unused). */
static PyObject *set_errors(PyObject *self, PyObject *classes)
{
    if (!PyTuple_Check(classes) || PyTuple_Size(classes) != SWIN_ERR_INTERNAL + 1) {
        PyErr_SetString(PyExc_TypeError, "_set_errors expects a tuple of one class per status");
        return NULL;
    }
    for (int s = 1; s <= SWIN_ERR_INTERNAL; s++) {
        PyObject *c = PyTuple_GetItem(classes, s);
        PyObject *old = error_classes[s];
        Py_XINCREF(c);
        error_classes[s] = c;
        Py_XDECREF(old);
    }
    Py_RETURN_NONE;
}

static PyObject *status_names(PyObject *self, PyObject *unused)
{
    PyObject *t = PyTuple_New(SWIN_ERR_INTERNAL + 1);
    for (int s = 0; t && s <= SWIN_ERR_INTERNAL; s++) {
        PyObject *n = PyUnicode_FromString(swin_status_name((swin_status)s));
        if (!n || PyTuple_SetItem(t, s, n)) {
            Py_DECREF(t);
            return NULL;
        }
    }
    return t;
}

static PyMethodDef methods[] = {
    {"_set_errors", set_errors, METH_O, "Registers the exception class of each status."},
    {"status_names", status_names, METH_NOARGS, "The library's status names, indexed by status."},
    {"model_load", swinpy_model_load, METH_VARARGS, "model_load(path, merge_order, no_normalize, norm_groups) -> model"},
    {"model_info", swinpy_model_info, METH_VARARGS, "model_info(model) -> dict"},
    {"model_plan", swinpy_model_plan, METH_VARARGS, "model_plan(model, context params) -> dict"},
    {"model_segment_defaults", swinpy_model_segment_defaults, METH_VARARGS,
     "model_segment_defaults(model) -> dict of swin_model_segment_params"},
    {"context_create", swinpy_context_create, METH_VARARGS, "context_create(model, context params) -> context"},
    {"context_plan", swinpy_context_plan, METH_VARARGS, "context_plan(context) -> dict"},
    {"context_run", swinpy_context_run, METH_VARARGS,
     "context_run(context, input, logits): float32 (N, Ci, D, H, W) -> (N, Co, D, H, W), C order"},
    {"segment", swinpy_segment, METH_VARARGS,
     "segment(context, voxels, affine, labels, probabilities, params) -> report (volumes in NIfTI order)"},
    {"segment_file", swinpy_segment_file, METH_VARARGS, "segment_file(context, [inputs], output, params) -> report"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_swinrun",
    .m_doc = "swinrun's C library (pipeline/swinrun.h) for the swinrun package.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__swinrun(void)
{
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    swin_set_vocabulary(SWIN_VOCAB_PYTHON);
    if (PyModule_AddStringConstant(m, "VERSION", SWINRUN_VERSION) ||
        PyModule_AddIntConstant(m, "CUBE_MULTIPLE", SWIN_CUBE_MULTIPLE) ||
        PyModule_AddIntConstant(m, "CUBE_MIN", SWIN_CUBE_MIN) ||
        PyModule_AddIntConstant(m, "CUBE_MAX", SWIN_CUBE_MAX)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
