/* A view of the graph for pattern matching: which node produces a value, who consumes
 * it, and which values are constants (initializers, Constant node outputs, and Identity
 * nodes applied to either), with a small lookup for constant contents. */
#ifndef SWIN_WEIGHTS_GRAPH_H
#define SWIN_WEIGHTS_GRAPH_H

#include <stdbool.h>

#include "weights/onnx/onnx_file.h"
#include "weights/onnx/strmap.h"

struct swin_onnx_index {
    struct swin_onnx_file *f;
    struct swin_onnx_tensor *consts;   /* Constant node outputs */
    int n_consts;
    struct swin_strmap tensor;         /* value name -> tensor id (< n_inits: inits, else consts) */
    struct swin_strmap producer;       /* value name -> node index */
    struct swin_strmap value;          /* value name -> value id, for the consumer lists */
    int *cons_start, *cons;       /* consumers of value v: cons[cons_start[v] .. cons_start[v+1]) */
    int n_values;
};

swin_status swin_onnx_index_build(struct swin_onnx_index *g, struct swin_onnx_file *f, swin_error *err);
void swin_onnx_index_free(struct swin_onnx_index *g);

/* The constant tensor a value name refers to, or NULL when the value is computed. */
const struct swin_onnx_tensor *swin_onnx_index_tensor(const struct swin_onnx_index *g, const char *name);
/* The node that produces a value, or -1 (graph input, initializer, unknown). */
int swin_onnx_index_producer(const struct swin_onnx_index *g, const char *name);
/* The node that produces a value when its op is `op`, else -1. */
int swin_onnx_producer_op(const struct swin_onnx_index *g, const char *name, const char *op);
/* The nodes that consume a value (count returned, list in *nodes). */
int swin_onnx_index_consumers(const struct swin_onnx_index *g, const char *name, const int **nodes);

/* Node input i's name, or "" when absent. */
const char *swin_onnx_node_in(const SwinOnnx__NodeProto *n, int i);
/* Node output i's name, or "" when absent (every indexed node has output 0: onnx_file.c). */
const char *swin_onnx_node_out(const SwinOnnx__NodeProto *n, int i);
/* Attribute lookups; the default when the attribute is absent. */
int64_t swin_onnx_node_attr_int(const SwinOnnx__NodeProto *n, const char *name, int64_t dflt);
float swin_onnx_node_attr_float(const SwinOnnx__NodeProto *n, const char *name, float dflt);
/* STRING attribute equal to `value`; `dflt` when the attribute is absent. */
bool swin_onnx_node_attr_str_is(const SwinOnnx__NodeProto *n, const char *name, const char *value, bool dflt);
/* INTS attribute: the count (-1 if absent), values in *vals. */
int swin_onnx_node_attr_ints(const SwinOnnx__NodeProto *n, const char *name, const int64_t **vals);
/* FLOATS attribute: the count (-1 if absent), values in *vals. */
int swin_onnx_node_attr_floats(const SwinOnnx__NodeProto *n, const char *name, const float **vals);

/* Reads a constant integer tensor of at most max elements; returns its count or -1. */
int swin_onnx_index_const_i64(const struct swin_onnx_index *g, const char *name, int64_t *out, int max, swin_error *err);
/* True when a constant float tensor is absent or all `value` (the non-affine case). */
bool swin_onnx_index_const_all(const struct swin_onnx_index *g, const struct swin_onnx_tensor *t, float value, swin_error *err, swin_status *st);

/* The constant float tensor among node n's first two inputs (input 0 looked at first), the
 * other input's name in *other; NULL when neither is one. */
const struct swin_onnx_tensor *swin_onnx_const_float_operand(const struct swin_onnx_index *g,
                                                             const SwinOnnx__NodeProto *n, const char **other);

/* "node #12 '/swinViT/Conv' (Conv)" for messages. */
const char *swin_onnx_node_desc(const struct swin_onnx_index *g, int node, char *buf, size_t n);

#endif
