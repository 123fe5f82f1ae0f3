/* The library's structs as dicts: model info, plans, segmentation parameters and reports. */
#include "swinrun_py.h"

#include <string.h>

const char *swinpy_backend_name(swin_backend b)
{
    return b == SWIN_BACKEND_CPU ? "cpu" : b == SWIN_BACKEND_CUDA ? "cuda" : "auto";
}

/* A str of s (NULL: ""), bytes that are not UTF-8 replaced (a bundle's names, cut at 63 bytes). */
static PyObject *utf8(const char *s)
{
    return PyUnicode_DecodeUTF8(s ? s : "", (Py_ssize_t)strlen(s ? s : ""), "replace");
}

/* Sets d[key] = value and drops the reference; -1 when value is NULL or the set fails. */
static int put(PyObject *d, const char *key, PyObject *value)
{
    if (!value) return -1;
    int r = PyDict_SetItemString(d, key, value);
    Py_DECREF(value);
    return r;
}

static PyObject *done(PyObject *d, int failed)
{
    if (failed) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

#define INT3(a) Py_BuildValue("(iii)", (a)[0], (a)[1], (a)[2])
#define LL3(a) Py_BuildValue("(LLL)", (a)[0], (a)[1], (a)[2])
#define D3(a) Py_BuildValue("(ddd)", (a)[0], (a)[1], (a)[2])

PyObject *swinpy_model_info_dict(const swin_model_info *i)
{
    PyObject *d = PyDict_New();
    if (!d) return NULL;
    int f = put(d, "in_channels", PyLong_FromLong(i->in_channels)) ||
            put(d, "out_channels", PyLong_FromLong(i->out_channels)) ||
            put(d, "feature_size", PyLong_FromLong(i->feature_size)) ||
            put(d, "depths", Py_BuildValue("(iiii)", i->depths[0], i->depths[1], i->depths[2], i->depths[3])) ||
            put(d, "heads", Py_BuildValue("(iiii)", i->heads[0], i->heads[1], i->heads[2], i->heads[3])) ||
            put(d, "window", INT3(i->window)) || put(d, "cube", i->cube[0] ? INT3(i->cube) : Py_NewRef(Py_None)) ||
            put(d, "normalize", PyBool_FromLong(i->normalize)) || put(d, "use_v2", PyBool_FromLong(i->use_v2)) ||
            put(d, "qkv_bias", PyBool_FromLong(i->qkv_bias)) || put(d, "patch_norm", PyBool_FromLong(i->patch_norm)) ||
            put(d, "instnorm_affine", PyBool_FromLong(i->instnorm_affine)) ||
            put(d, "batch_norm", PyBool_FromLong(i->batch_norm)) ||
            put(d, "batch_norm_at_load", PyBool_FromLong(i->batch_norm_at_load)) ||
            put(d, "attn_scale", Py_BuildValue("(dddd)", (double)i->attn_scale[0], (double)i->attn_scale[1],
                                               (double)i->attn_scale[2], (double)i->attn_scale[3])) ||
            put(d, "norm_groups", PyLong_FromLong(i->norm_groups)) ||
            put(d, "downsample", PyUnicode_FromString(i->downsample ? i->downsample : "")) ||
            put(d, "param_count", PyLong_FromSize_t(i->param_count)) ||
            put(d, "weight_bytes", PyLong_FromSize_t(i->weight_bytes)) || put(d, "opset", PyLong_FromLong(i->opset)) ||
            put(d, "exporter", PyUnicode_FromString(i->exporter ? i->exporter : "")) ||
            put(d, "post", PyUnicode_FromString(i->post ? i->post : "")) ||
            put(d, "weight_storage", PyUnicode_FromString(i->weight_storage ? i->weight_storage : "")) ||
            put(d, "recipe", PyUnicode_FromString(i->recipe ? i->recipe : "")) ||
            put(d, "recipe_warnings", PyUnicode_FromString(i->recipe_warnings ? i->recipe_warnings : "")) ||
            put(d, "channel_names", utf8(i->channel_names));
    return done(d, f);
}

PyObject *swinpy_plan_dict(const swin_plan_info *p)
{
    PyObject *d = PyDict_New();
    if (!d) return NULL;
    int f = put(d, "cube", INT3(p->cube)) || put(d, "backend", PyUnicode_FromString(swinpy_backend_name(p->backend))) ||
            put(d, "backend_reason", PyUnicode_FromString(p->backend_reason)) ||
            put(d, "precision", PyUnicode_FromString(swin_precision_name(p->precision))) ||
            put(d, "precision_note", PyUnicode_FromString(p->precision_note ? p->precision_note : "")) ||
            put(d, "weight_bytes", PyLong_FromSize_t(p->weight_bytes)) ||
            put(d, "arena_bytes", PyLong_FromSize_t(p->arena_bytes)) ||
            put(d, "lower_bound", PyLong_FromSize_t(p->lower_bound)) ||
            put(d, "context_bytes", PyLong_FromSize_t(p->context_bytes)) ||
            put(d, "total_bytes", PyLong_FromSize_t(p->total_bytes)) || put(d, "tensors", PyLong_FromLong(p->tensors)) ||
            put(d, "cpu_threads", PyLong_FromLong(p->cpu_threads));
    return done(d, f);
}

PyObject *swinpy_segment_params_dict(const swin_segment_params *p)
{
    PyObject *d = PyDict_New();
    if (!d) return NULL;
    int f = put(d, "reorient", PyBool_FromLong(p->reorient)) || put(d, "resample", PyBool_FromLong(p->resample)) ||
            put(d, "spacing", D3(p->spacing_mm)) || put(d, "intensity_clip", PyBool_FromLong(p->intensity_clip)) ||
            put(d, "intensity_range",
                Py_BuildValue("(dd)", (double)p->intensity_range[0], (double)p->intensity_range[1])) ||
            put(d, "overlap", PyFloat_FromDouble(p->overlap)) ||
            put(d, "blend", PyUnicode_FromString(p->blend == SWIN_BLEND_GAUSSIAN ? "gaussian" : "constant")) ||
            put(d, "sigma_scale", PyFloat_FromDouble(p->sigma_scale)) ||
            put(d, "invert", PyUnicode_FromString(p->invert == SWIN_INVERT_LINEAR ? "linear" : "nearest")) ||
            put(d, "intensity_norm", PyLong_FromLong((long)p->normalize)) ||
            put(d, "multi_label", PyBool_FromLong(p->activation == SWIN_ACTIVATION_SIGMOID));
    return done(d, f);
}

static PyObject *stats_list(const swin_segment_report *r)
{
    PyObject *l = PyList_New(0);
    for (int i = 0; l && i < r->nstats && i < SWIN_STATS_MAX; i++) {
        const swin_label_stats *s = &r->stats[i];
        PyObject *e = Py_BuildValue("{s:i,s:L,s:d,s:d,s:d}", "label", s->label, "voxels", s->voxels, "volume_ml",
                                    s->volume_ml, "hu_mean", s->hu_mean, "hu_std", s->hu_std);
        if (!e || PyList_Append(l, e)) {
            Py_XDECREF(e);
            Py_DECREF(l);
            return NULL;
        }
        Py_DECREF(e);
    }
    return l;
}

PyObject *swinpy_report_dict(const swin_segment_report *r)
{
    PyObject *d = PyDict_New();
    if (!d) return NULL;
    int f = put(d, "input_dim", LL3(r->input_dim)) || put(d, "grid_dim", LL3(r->grid_dim)) ||
            put(d, "input_axcodes", PyUnicode_FromString(r->input_axcodes)) ||
            put(d, "input_spacing", D3(r->input_spacing)) || put(d, "grid_spacing", D3(r->grid_spacing)) ||
            put(d, "cubes", PyLong_FromLongLong(r->cubes)) || put(d, "classes", PyLong_FromLong(r->classes)) ||
            put(d, "pipeline_bytes", PyLong_FromSize_t(r->pipeline_bytes)) ||
            put(d, "plan", swinpy_plan_dict(&r->plan)) || put(d, "seconds_read", PyFloat_FromDouble(r->seconds_read)) ||
            put(d, "seconds_preprocess", PyFloat_FromDouble(r->seconds_preprocess)) ||
            put(d, "seconds_infer", PyFloat_FromDouble(r->seconds_infer)) ||
            put(d, "seconds_cut", PyFloat_FromDouble(r->seconds_cut)) ||
            put(d, "seconds_forward", PyFloat_FromDouble(r->seconds_forward)) ||
            put(d, "seconds_blend", PyFloat_FromDouble(r->seconds_blend)) ||
            put(d, "seconds_argmax", PyFloat_FromDouble(r->seconds_argmax)) ||
            put(d, "seconds_write", PyFloat_FromDouble(r->seconds_write)) ||
            put(d, "seconds_write_overlapped", PyFloat_FromDouble(r->seconds_write_overlapped)) ||
            put(d, "seconds_device_idle",
                r->seconds_device_idle >= 0 ? PyFloat_FromDouble(r->seconds_device_idle) : Py_NewRef(Py_None)) ||
            put(d, "labels_present", PyLong_FromLong(r->labels_present)) || put(d, "statistics", stats_list(r));
    if (!f && r->dicom_input)
        f = put(d, "dicom_written", PyBool_FromLong(r->dicom_written)) ||
            put(d, "seconds_seg", PyFloat_FromDouble(r->seconds_seg)) ||
            put(d, "seconds_rtstruct", PyFloat_FromDouble(r->seconds_rtstruct)) ||
            put(d, "dicom_series_found", PyLong_FromLong(r->dicom_series_found)) ||
            put(d, "dicom_series_uid", PyUnicode_FromString(r->dicom_series_uid)) ||
            put(d, "dicom_series_reason", PyUnicode_FromString(r->dicom_series_reason)) ||
            put(d, "dicom_skipped", PyLong_FromLong(r->dicom_skipped)) ||
            put(d, "dicom_skipped_what", PyUnicode_FromString(r->dicom_skipped_what)) ||
            put(d, "dicom_tilt_degrees", PyFloat_FromDouble(r->dicom_tilt_deg)) ||
            put(d, "dicom_slices", PyLong_FromLong(r->dicom_slices)) ||
            put(d, "dicom_planes_filled", PyLong_FromLong(r->dicom_planes_filled)) ||
            put(d, "dicom_notice", PyUnicode_FromString(r->dicom_notice));
    if (!f) f = put(d, "dicom_input", PyBool_FromLong(r->dicom_input));
    return done(d, f);
}
