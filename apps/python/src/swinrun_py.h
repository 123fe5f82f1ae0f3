/* The extension module swinrun._swinrun: thin functions over pipeline/swinrun.h that the Python
 * package (apps/python/swinrun) wraps. Models and contexts travel as capsules; arrays as
 * buffers (the caller allocates outputs); statuses become the exception classes the package
 * registers with _set_errors. Every forward pass and segmentation runs without the GIL. */
#ifndef SWINRUN_PY_H
#define SWINRUN_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "pipeline/swinrun.h"

#define SWINPY_MODEL_CAPSULE "swinrun.model"
#define SWINPY_CONTEXT_CAPSULE "swinrun.context"

/* Raises the exception class registered for err->status with err->msg; returns NULL. */
PyObject *swinpy_raise(const swin_error *err);
/* Raises the class of status with a message of the module's own; returns NULL. */
PyObject *swinpy_raise_status(swin_status status, const char *fmt, ...);

/* The model or context a capsule holds (NULL with an exception set when it is not one). */
swin_model_t *swinpy_model(PyObject *capsule);
swin_context_t *swinpy_context(PyObject *capsule);

/* Dicts of the library's structs. */
PyObject *swinpy_model_info_dict(const swin_model_info *info);
PyObject *swinpy_plan_dict(const swin_plan_info *plan);
PyObject *swinpy_segment_params_dict(const swin_segment_params *p);
PyObject *swinpy_report_dict(const swin_segment_report *r);
const char *swinpy_backend_name(swin_backend b);

/* The module's functions, by file. */
PyObject *swinpy_model_load(PyObject *self, PyObject *args);
PyObject *swinpy_model_info(PyObject *self, PyObject *args);
PyObject *swinpy_model_plan(PyObject *self, PyObject *args);
PyObject *swinpy_model_segment_defaults(PyObject *self, PyObject *args);
PyObject *swinpy_context_create(PyObject *self, PyObject *args);
PyObject *swinpy_context_plan(PyObject *self, PyObject *args);
PyObject *swinpy_context_run(PyObject *self, PyObject *args);
PyObject *swinpy_segment(PyObject *self, PyObject *args);
PyObject *swinpy_segment_file(PyObject *self, PyObject *args);

/* Context parameters from (backend, precision, threads, device, (d, h, w), mem_limit). */
int swinpy_context_params(PyObject *args_tuple, swin_context_params *out);

#endif
