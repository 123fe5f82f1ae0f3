/* A view of the graph for pattern matching: which node produces a value, who consumes
 * it, and which values are constants (initializers, Constant node outputs, and Identity
 * nodes applied to either), with a small lookup for constant contents. */
#ifndef SWIN_WEIGHTS_GRAPH_H
#define SWIN_WEIGHTS_GRAPH_H

#include <stdbool.h>

#include "weights/onnx_file.h"
#include "weights/strmap.h"

struct graph {
    struct onnx_file *f;
    struct onnx_tensor *consts;   /* Constant node outputs */
    int n_consts;
    struct strmap tensor;         /* value name -> tensor id (< n_inits: inits, else consts) */
    struct strmap producer;       /* value name -> node index */
    struct strmap value;          /* value name -> value id, for the consumer lists */
    int *cons_start, *cons;       /* consumers of value v: cons[cons_start[v] .. cons_start[v+1]) */
    int n_values;
};

swin_status graph_build(struct graph *g, struct onnx_file *f, swin_error *err);
void graph_free(struct graph *g);

/* The constant tensor a value name refers to, or NULL when the value is computed. */
const struct onnx_tensor *graph_tensor(const struct graph *g, const char *name);
/* The node that produces a value, or -1 (graph input, initializer, unknown). */
int graph_producer(const struct graph *g, const char *name);
/* The nodes that consume a value (count returned, list in *nodes). */
int graph_consumers(const struct graph *g, const char *name, const int **nodes);

/* Node input i's name, or "" when absent. */
const char *node_in(const Onnx__NodeProto *n, int i);
/* Node output i's name, or "" when absent (every indexed node has output 0: onnx_file.c). */
const char *node_out(const Onnx__NodeProto *n, int i);
/* Attribute lookups; the default when the attribute is absent. */
int64_t node_attr_int(const Onnx__NodeProto *n, const char *name, int64_t dflt);
float node_attr_float(const Onnx__NodeProto *n, const char *name, float dflt);
/* STRING attribute equal to `value`; `dflt` when the attribute is absent. */
bool node_attr_str_is(const Onnx__NodeProto *n, const char *name, const char *value, bool dflt);
/* INTS attribute: the count (-1 if absent), values in *vals. */
int node_attr_ints(const Onnx__NodeProto *n, const char *name, const int64_t **vals);

/* Reads a constant integer tensor of at most max elements; returns its count or -1. */
int graph_const_i64(const struct graph *g, const char *name, int64_t *out, int max, swin_error *err);
/* True when a constant float tensor is absent or all `value` (the non-affine case). */
bool graph_const_all(const struct graph *g, const struct onnx_tensor *t, float value, swin_error *err, swin_status *st);

/* "node #12 '/swinViT/Conv' (Conv)" for messages. */
const char *node_desc(const struct graph *g, int node, char *buf, size_t n);

#endif
