/* segment and segment_file: the whole pipeline (pipeline/segment_api.h swin_segment*) without the
 * GIL; progress and cancel callbacks take the GIL back for the Python callables and for
 * pending signals (Ctrl-C cancels the run through the library's cancel callback). */
#include <stdbool.h>
#include <string.h>

#include "swinrun_py.h"

struct callbacks {
    PyObject *progress, *cancel;             /* Python callables or None */
    PyObject *exc_type, *exc_value, *exc_tb; /* what a callback or a signal handler raised */
};

static const char *stage_name(swin_stage s)
{
    static const char *names[] = {"read", "preprocess", "infer", "write", "done"};
    return s >= SWIN_STAGE_READ && s <= SWIN_STAGE_DONE ? names[s] : "?";
}

static bool failed(const struct callbacks *cb)
{
    return cb->exc_type != NULL;
}

/* Keeps the exception just raised for after the run (the first one only). */
static void keep_exception(struct callbacks *cb)
{
    if (failed(cb)) {
        PyErr_Clear();
        return;
    }
    PyErr_Fetch(&cb->exc_type, &cb->exc_value, &cb->exc_tb);
}

static void on_progress(void *user, swin_stage stage, double fraction)
{
    struct callbacks *cb = user;
    if (cb->progress == Py_None) return;
    PyGILState_STATE g = PyGILState_Ensure();
    if (!failed(cb)) {
        PyObject *r = PyObject_CallFunction(cb->progress, "sd", stage_name(stage), fraction);
        if (r) Py_DECREF(r);
        else keep_exception(cb);
    }
    PyGILState_Release(g);
}

static bool on_cancel(void *user)
{
    struct callbacks *cb = user;
    PyGILState_STATE g = PyGILState_Ensure();
    if (!failed(cb) && PyErr_CheckSignals()) keep_exception(cb);
    bool stop = false;
    if (!failed(cb) && cb->cancel != Py_None) { /* true: the library's SWIN_ERR_CANCELLED */
        PyObject *r = PyObject_CallNoArgs(cb->cancel);
        int yes = r ? PyObject_IsTrue(r) : -1;
        Py_XDECREF(r);
        if (yes < 0) keep_exception(cb);
        stop = yes > 0;
    }
    stop = stop || failed(cb);
    PyGILState_Release(g);
    return stop;
}

static char *param_keys[] = {"reorient",
                             "resample",
                             "spacing",
                             "intensity_clip",
                             "intensity_range",
                             "overlap",
                             "blend",
                             "sigma_scale",
                             "invert",
                             "seg_type",
                             "progress",
                             "cancel",
                             "probabilities_path",
                             "preview_path",
                             "rtstruct_path",
                             "dicom_series",
                             "intensity_norm",
                             "multi_label",
                             NULL};

/* The segmentation parameters from a dict of param_keys (the package fills in the model's
 * defaults; a key left out keeps the library's default); strings point into the dict. */
static int parse_params(PyObject *d, swin_segment_params *p, struct callbacks *cb)
{
    if (!PyDict_Check(d)) {
        PyErr_SetString(PyExc_TypeError, "segmentation parameters: expected a dict");
        return -1;
    }
    *p = swin_segment_default_params();
    int reorient = p->reorient, resample = p->resample, clip = p->intensity_clip, blend = p->blend, invert = p->invert,
        seg_type = p->seg_type, norm = p->normalize, multi_label = p->activation == SWIN_ACTIVATION_SIGMOID;
    cb->progress = cb->cancel = Py_None;
    PyObject *empty = PyTuple_New(0);
    if (!empty) return -1;
    int ok = PyArg_ParseTupleAndKeywords(empty, d, "|$pp(ddd)p(ff)didiiOOzzzzip", param_keys, &reorient, &resample,
                                         &p->spacing_mm[0], &p->spacing_mm[1], &p->spacing_mm[2], &clip,
                                         &p->intensity_range[0], &p->intensity_range[1], &p->overlap, &blend,
                                         &p->sigma_scale, &invert, &seg_type, &cb->progress, &cb->cancel,
                                         &p->probabilities_path, &p->preview_path, &p->rtstruct_path, &p->dicom_series,
                                         &norm, &multi_label);
    Py_DECREF(empty);
    if (!ok) return -1;
    if (blend < 0 || blend > 1 || invert < 0 || invert > 1 || seg_type < 0 || seg_type > 1 || norm < 0 || norm > 2) {
        swinpy_raise_status(SWIN_ERR_ARG, "blend, invert and seg_type are 0 or 1, intensity_norm 0..2");
        return -1;
    }
    if ((cb->progress != Py_None && !PyCallable_Check(cb->progress)) ||
        (cb->cancel != Py_None && !PyCallable_Check(cb->cancel))) {
        swinpy_raise_status(SWIN_ERR_ARG, "progress and cancel are callables or None");
        return -1;
    }
    p->reorient = reorient;
    p->resample = resample;
    p->intensity_clip = clip;
    p->blend = (swin_blend)blend;
    p->invert = (swin_invert)invert;
    p->seg_type = (swin_seg_type)seg_type;
    p->normalize = (swin_intensity_norm)norm;
    p->activation = multi_label ? SWIN_ACTIVATION_SIGMOID : SWIN_ACTIVATION_AUTO;
    p->progress = on_progress;
    p->cancel = on_cancel;
    p->user = cb;
    return 0;
}

/* The report dict, or the exception of the run: what a callback raised first, else the status. */
static PyObject *finish(swin_status st, const swin_error *err, struct callbacks *cb, const swin_segment_report *rep)
{
    if (failed(cb)) {
        PyErr_Restore(cb->exc_type, cb->exc_value, cb->exc_tb);
        return NULL;
    }
    if (st) return swinpy_raise(err);
    return swinpy_report_dict(rep);
}

static int format_is(const Py_buffer *b, char code, Py_ssize_t itemsize)
{
    const char *f = b->format ? b->format : "B";
    if (*f == '<' || *f == '=' || *f == '@') f++;
    return b->itemsize == itemsize && f[0] == code && f[1] == 0;
}

/* A 3D Fortran-ordered (NIfTI order) buffer. */
static int get_volume_buffer(PyObject *o, Py_buffer *b, int writable, const char *what)
{
    if (PyObject_GetBuffer(o, b, PyBUF_F_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0))) {
        PyErr_Clear();
        swinpy_raise_status(SWIN_ERR_ARG, "%s: expected a%s Fortran-ordered (NIfTI order) array", what,
                            writable ? " writable" : "");
        return -1;
    }
    return 0;
}

PyObject *swinpy_segment(PyObject *self, PyObject *args)
{
    PyObject *cap, *vox_obj, *aff_obj, *lab_obj, *prob_obj, *params;
    if (!PyArg_ParseTuple(args, "OOOOOO", &cap, &vox_obj, &aff_obj, &lab_obj, &prob_obj, &params)) return NULL;
    swin_context_t *ctx = swinpy_context(cap);
    if (!ctx) return NULL;
    swin_segment_params sp;
    struct callbacks cb = {0};
    if (parse_params(params, &sp, &cb)) return NULL;

    Py_buffer vox = {0}, aff = {0}, lab = {0}, prob = {0};
    PyObject *result = NULL;
    if (get_volume_buffer(vox_obj, &vox, 0, "volume")) return NULL;
    if (PyObject_GetBuffer(aff_obj, &aff, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT)) {
        PyErr_Clear();
        swinpy_raise_status(SWIN_ERR_ARG, "affine: expected a C-ordered float64 array");
        goto release_vox;
    }
    if (get_volume_buffer(lab_obj, &lab, 1, "labels")) goto release_aff;
    if (prob_obj != Py_None && get_volume_buffer(prob_obj, &prob, 1, "probabilities")) goto release_lab;

    /* (x, y, z) or (x, y, z, channels): in Fortran order channel c's volume is the c-th block
     * of x * y * z values */
    swin_volume v[SWIN_VOLUME_MAX_CHANNELS] = {{.voxels = vox.buf}};
    const int nch = vox.ndim == 4 ? (int)vox.shape[3] : 1;
    if (vox.ndim != 3 && vox.ndim != 4) {
        swinpy_raise_status(SWIN_ERR_SHAPE, "volume: expected 3 dimensions (x, y, z) or 4 (x, y, z, channels), got %d",
                            vox.ndim);
        goto release;
    }
    if (nch < 1 || nch > SWIN_VOLUME_MAX_CHANNELS) {
        swinpy_raise_status(SWIN_ERR_SHAPE, "volume: %d channels (1..%d)", nch, SWIN_VOLUME_MAX_CHANNELS);
        goto release;
    }
    if (format_is(&vox, 'h', 2)) v[0].type = SWIN_VOXELS_I16;
    else if (format_is(&vox, 'f', 4)) v[0].type = SWIN_VOXELS_F32;
    else {
        swinpy_raise_status(SWIN_ERR_ARG, "volume: expected int16 or float32 values, got format '%s'", vox.format);
        goto release;
    }
    for (int i = 0; i < 3; i++) v[0].dim[i] = vox.shape[i];
    if (aff.ndim != 2 || aff.shape[0] != 4 || aff.shape[1] != 4 || !format_is(&aff, 'd', 8)) {
        swinpy_raise_status(SWIN_ERR_SHAPE, "affine: expected a 4 x 4 float64 array");
        goto release;
    }
    memcpy(v[0].affine, aff.buf, sizeof v[0].affine);
    const size_t block = (size_t)(vox.shape[0] * vox.shape[1] * vox.shape[2]) * (size_t)vox.itemsize;
    for (int c = 1; c < nch; c++) {
        v[c] = v[0];
        v[c].voxels = (const char *)vox.buf + block * (size_t)c;
    }
    if (lab.ndim != 3 || !format_is(&lab, 'H', 2) || memcmp(lab.shape, vox.shape, 3 * sizeof(Py_ssize_t))) {
        swinpy_raise_status(SWIN_ERR_SHAPE, "labels: expected a uint16 array of the volume's shape");
        goto release;
    }
    swin_model_info mi;
    swin_model_get_info(swin_context_model(ctx), &mi);
    if (prob.buf && (prob.ndim != 4 || !format_is(&prob, 'f', 4) ||
                     memcmp(prob.shape, vox.shape, 3 * sizeof(Py_ssize_t)) || prob.shape[3] != mi.out_channels)) {
        swinpy_raise_status(SWIN_ERR_SHAPE, "probabilities: expected a float32 array (x, y, z, %d)", mi.out_channels);
        goto release;
    }

    swin_segment_report rep;
    swin_error err = {0};
    swin_status st;
    Py_BEGIN_ALLOW_THREADS st = swin_segment_channels(ctx, v, nch, &sp, lab.buf, prob.buf, &rep, &err);
    Py_END_ALLOW_THREADS result = finish(st, &err, &cb, &rep);
release:
    if (prob.buf) PyBuffer_Release(&prob);
release_lab:
    PyBuffer_Release(&lab);
release_aff:
    PyBuffer_Release(&aff);
release_vox:
    PyBuffer_Release(&vox);
    return result;
}

PyObject *swinpy_segment_file(PyObject *self, PyObject *args)
{
    PyObject *cap, *inputs, *params;
    const char *output;
    if (!PyArg_ParseTuple(args, "OO!sO", &cap, &PyList_Type, &inputs, &output, &params)) return NULL;
    swin_context_t *ctx = swinpy_context(cap);
    if (!ctx) return NULL;
    swin_segment_params sp;
    struct callbacks cb = {0};
    if (parse_params(params, &sp, &cb)) return NULL;
    Py_ssize_t n = PyList_Size(inputs);
    if (n < 1 || n > 1 << 20) return swinpy_raise_status(SWIN_ERR_ARG, "expected at least one input");
    const char **paths = PyMem_Calloc((size_t)n, sizeof *paths);
    if (!paths) return PyErr_NoMemory();
    PyObject *result = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        paths[i] = PyUnicode_AsUTF8AndSize(PyList_GetItem(inputs, i), NULL);
        if (!paths[i]) goto done;
    }
    swin_segment_report rep;
    swin_error err = {0};
    swin_status st;
    /* several NIfTI files: the channels of one volume; else the files of one DICOM series */
    const size_t len0 = strlen(paths[0]);
    const bool nifti = (len0 > 4 && !strcmp(paths[0] + len0 - 4, ".nii")) ||
                       (len0 > 7 && !strcmp(paths[0] + len0 - 7, ".nii.gz"));
    Py_BEGIN_ALLOW_THREADS st = n == 1  ? swin_segment_file(ctx, paths[0], output, &sp, &rep, &err)
                                : nifti ? swin_segment_files(ctx, paths, (int)n, output, &sp, &rep, &err)
                                        : swin_segment_dicom(ctx, paths, (int)n, output, &sp, &rep, &err);
    Py_END_ALLOW_THREADS result = finish(st, &err, &cb, &rep);
done:
    PyMem_Free(paths);
    return result;
}
