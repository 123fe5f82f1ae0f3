/* The ONNX file index: the graph's nodes (unpacked one by one with protobuf-c), its inputs,
 * and every initializer's name, type, shape and payload location, without the payloads.
 *
 * Payloads are read later, in chunks, straight from the file (or the external-data side
 * file) with pread: see onnx_tensor_read(). */
#ifndef SWIN_WEIGHTS_ONNX_FILE_H
#define SWIN_WEIGHTS_ONNX_FILE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/status.h"
#include SWIN_ONNX_PB_H

#define ONNX_MAX_RANK 8

enum onnx_dtype { ONNX_FLOAT = 1, ONNX_INT32 = 6, ONNX_INT64 = 7, ONNX_FLOAT16 = 10, ONNX_BFLOAT16 = 16 };

/* The floating-point types weights may be stored in; swin_onnx_tensor_read_f32 converts them. */
static inline bool onnx_dtype_is_float(int dtype)
{
    return dtype == ONNX_FLOAT || dtype == ONNX_FLOAT16 || dtype == ONNX_BFLOAT16;
}

enum tensor_src {
    SRC_NONE,       /* no data (empty tensor) */
    SRC_FILE,       /* raw little-endian bytes at [off, off+len) of a file (raw_data, packed float/int32 data, external) */
    SRC_VARINTS,    /* packed int64_data/int32_data varints at [off, off+len) of the model file */
    SRC_MEMORY,     /* bytes in memory (a Constant node's tensor, unpacked with its node) */
    SRC_MEM_I64,    /* int64 values in memory (a Constant node's int64_data) */
};

struct swin_onnx_tensor {
    const char *name;
    int dtype;
    int ndim;
    int64_t dims[ONNX_MAX_RANK];
    uint64_t numel;
    enum tensor_src src;
    int file;               /* SRC_FILE: index into onnx_file.files (0 = the model file) */
    uint64_t off, len;      /* SRC_FILE / SRC_VARINTS */
    const void *mem;        /* SRC_MEMORY / SRC_MEM_I64 */
    int producer;           /* node index of the Constant that made it, -1 for an initializer */
};

struct swin_onnx_side_file {
    char *path;
    int fd;
    uint64_t size;
};

struct swin_onnx_value_info {    /* a graph input or output */
    char *name;
    int elem_type;                 /* ONNX data type, 0 when not a tensor or not given */
    int ndim;
    int64_t dims[ONNX_MAX_RANK];   /* 0 where the dim is a dim_param or unknown */
};

struct swin_onnx_file {
    const char *path;
    int64_t ir_version, opset;     /* opset of the default domain, 0 if not imported */
    char producer[64];             /* ModelProto producer_name and producer_version, "" when absent */
    char producer_version[64];
    bool onnxsim_metadata;         /* metadata_props written by onnx-simplifier (onnxsim.*) */
    bool ort_domains;              /* opset imports only ONNX Runtime writes (com.microsoft.nchwc, ...) */
    SwinOnnx__NodeProto **nodes;
    int n_nodes;
    struct swin_onnx_tensor *inits;     /* initializers */
    int n_inits;
    struct swin_onnx_value_info *inputs, *outputs;
    int n_inputs, n_outputs;
    struct swin_onnx_side_file *files;  /* files[0] is the model itself */
    int n_files;
};

/* Indexes `path`. On failure everything is freed and *f zeroed. */
swin_status swin_onnx_file_open(const char *path, struct swin_onnx_file *f, swin_error *err);
void swin_onnx_file_close(struct swin_onnx_file *f);
/* Frees the unpacked nodes (and with them every Constant node's tensor) once the graph has
 * been matched, so they are not resident while the weights are read. */
void swin_onnx_file_drop_nodes(struct swin_onnx_file *f);

/* Reads elements [first, first + count) of a float32, float16 or bfloat16 tensor into dst,
 * as float32. */
swin_status swin_onnx_tensor_read_f32(const struct swin_onnx_file *f, const struct swin_onnx_tensor *t, uint64_t first,
                                 uint64_t count, float *dst, swin_error *err);
/* Reads all elements of an int64 or int32 tensor as int64 (count must equal t->numel). */
swin_status swin_onnx_tensor_read_i64(const struct swin_onnx_file *f, const struct swin_onnx_tensor *t, int64_t *dst,
                                 uint64_t count, swin_error *err);

/* Fills *t from a protobuf-c TensorProto held in memory (a Constant node's value). */
swin_status swin_onnx_tensor_from_proto(const SwinOnnx__TensorProto *p, const char *name, int producer,
                                   struct swin_onnx_tensor *t, const char *path, swin_error *err);

#endif
