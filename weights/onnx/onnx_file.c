#include "weights/onnx/onnx_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "weights/onnx/pb_check.h"
#include "weights/onnx/wire.h"

/* Field numbers from onnx.proto. */
enum { MODEL_IR_VERSION = 1, MODEL_PRODUCER = 2, MODEL_PRODUCER_VERSION = 3, MODEL_GRAPH = 7, MODEL_OPSET = 8,
       MODEL_METADATA = 14 };
enum { GRAPH_NODE = 1, GRAPH_INITIALIZER = 5, GRAPH_INPUT = 11, GRAPH_OUTPUT = 12, GRAPH_SPARSE_INIT = 15 };
enum {
    TENSOR_DIMS = 1, TENSOR_DATA_TYPE = 2, TENSOR_SEGMENT = 3, TENSOR_FLOAT_DATA = 4, TENSOR_INT32_DATA = 5,
    TENSOR_INT64_DATA = 7, TENSOR_NAME = 8, TENSOR_RAW_DATA = 9, TENSOR_EXTERNAL = 13, TENSOR_LOCATION = 14,
};

#define MAX_SMALL_FIELD (1u << 20)   /* names, dims, external_data entries, opset ids */

struct indexer {
    struct swin_wire_reader r;
    struct swin_onnx_file *f;
    swin_error *err;
    int cap_nodes, cap_inits, cap_inputs, cap_outputs;
    char *model_dir;
    bool out_of_memory; /* protobuf-c's last unpack ran out of memory */
};

static int elem_size(int dtype)
{
    switch (dtype) {
    case 1: case 6: case 12: return 4;        /* float, int32, uint32 */
    case 7: case 11: case 13: return 8;       /* int64, double, uint64 */
    case 10: case 16: case 4: case 5: return 2;
    case 2: case 3: case 9: return 1;
    default: return 0;
    }
}

static void *grow(void *p, int *cap, int need, size_t elem)
{
    if (need <= *cap) return p;
    int ncap = *cap ? *cap * 2 : 64;
    while (ncap < need) ncap *= 2;
    void *q = realloc(p, (size_t)ncap * elem);
    if (q) *cap = ncap;
    return q;
}

static swin_status nomem(struct indexer *ix, const char *what)
{
    return swin_error_set(ix->err, SWIN_ERR_NOMEM, "%s: out of host memory while reading %s", ix->f->path, what);
}

/* Reads a small length-delimited field (a string or a submessage) into a new buffer. */
static swin_status read_small(struct indexer *ix, const struct swin_wire_field *fl, const char *what, unsigned char **out)
{
    if (fl->type != WIRE_LEN)
        return swin_error_set(ix->err, SWIN_ERR_FORMAT, "%s: not a valid ONNX file: %s has wire type %d at byte %llu",
                              ix->f->path, what, (int)fl->type, (unsigned long long)fl->data);
    if (fl->len > MAX_SMALL_FIELD)
        return swin_error_set(ix->err, SWIN_ERR_FORMAT, "%s: not a valid ONNX file: %s is %llu bytes long at byte %llu",
                              ix->f->path, what, (unsigned long long)fl->len, (unsigned long long)fl->data);
    unsigned char *b = malloc(fl->len + 1);
    if (!b) return nomem(ix, what);
    swin_status st = swin_wire_read(&ix->r, fl->data, (size_t)fl->len, b);
    if (st) { free(b); return st; }
    b[fl->len] = 0;
    *out = b;
    return SWIN_OK;
}

/* protobuf-c allocates through malloc here (not its own default), so that running out of
 * memory is told apart from a refusal: allocator_data points to a flag set on failure. */
static void *pb_alloc(void *out_of_memory, size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p && out_of_memory) *(bool *)out_of_memory = true;
    return p;
}

static void pb_free(void *unused, void *p)
{
    free(p);
}

static ProtobufCAllocator pb_allocator = {.alloc = pb_alloc, .free = pb_free};

/* protobuf-c unpacks only bytes swin_pb_check has accepted (weights/onnx/pb_check.h); NULL when either
 * refuses them, with *why saying what swin_pb_check found (NULL when protobuf-c refused), or
 * when memory ran out (then ix->out_of_memory is set). */
static void *unpack(struct indexer *ix, const ProtobufCMessageDescriptor *d, const unsigned char *b, size_t n,
                    const char **why)
{
    *why = swin_pb_check(d, b, n);
    if (*why) return NULL;
    ProtobufCAllocator a = {.alloc = pb_alloc, .free = pb_free, .allocator_data = &ix->out_of_memory};
    ix->out_of_memory = false;
    return protobuf_c_message_unpack(d, &a, n, b);
}

static swin_status bad_tensor(struct indexer *ix, const char *name, const char *what)
{
    return swin_error_set(ix->err, SWIN_ERR_FORMAT, "%s: initializer '%s': %s", ix->f->path, name ? name : "(unnamed)", what);
}

/* Validates the dims and sets numel. */
static swin_status set_numel(struct indexer *ix, struct swin_onnx_tensor *t)
{
    uint64_t n = 1;
    for (int i = 0; i < t->ndim; i++) {
        if (t->dims[i] < 0) return bad_tensor(ix, t->name, "negative dimension");
        if (t->dims[i] && n > UINT64_MAX / 16 / (uint64_t)t->dims[i]) return bad_tensor(ix, t->name, "dimensions overflow");
        n *= (uint64_t)t->dims[i];
    }
    t->numel = n;
    return SWIN_OK;
}

/* Checks the payload length against the type and shape. */
static swin_status check_len(struct indexer *ix, const struct swin_onnx_tensor *t)
{
    int es = elem_size(t->dtype);
    if (t->src == SRC_FILE && es && t->len != t->numel * (uint64_t)es) {
        char m[160];
        snprintf(m, sizeof m, "payload has %llu bytes, shape and type need %llu", (unsigned long long)t->len,
                 (unsigned long long)(t->numel * (uint64_t)es));
        return bad_tensor(ix, t->name, m);
    }
    if (t->src == SRC_VARINTS && t->numel > t->len)   /* a varint takes at least one byte */
        return bad_tensor(ix, t->name, "has fewer int data bytes than its shape has elements");
    if (t->src == SRC_NONE && t->numel && es) return bad_tensor(ix, t->name, "has no data (or data in an unsupported field)");
    return SWIN_OK;
}

static int open_side_file(struct indexer *ix, const char *location, swin_error *err, const char *tname)
{
    struct swin_onnx_file *f = ix->f;
    if (location[0] == '/' || strstr(location, ".."))
        return -(int)bad_tensor(ix, tname, "external data location must be a relative path inside the model's folder");
    size_t n = strlen(ix->model_dir) + strlen(location) + 2;
    char *p = malloc(n);
    if (!p) return -(int)nomem(ix, "an external data path");
    snprintf(p, n, "%s/%s", ix->model_dir, location);
    for (int i = 1; i < f->n_files; i++)
        if (!strcmp(f->files[i].path, p)) { free(p); return i; }
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        swin_error_set(err, SWIN_ERR_IO, "%s: cannot open external data file %s for initializer '%s': %s", f->path, p,
                       tname, strerror(errno));
        free(p);
        return -(int)SWIN_ERR_IO;
    }
    struct stat sb;
    struct swin_onnx_side_file *nf = realloc(f->files, (size_t)(f->n_files + 1) * sizeof *nf);
    if (fstat(fd, &sb) || !nf) {
        close(fd);
        free(p);
        if (nf) f->files = nf;
        return -(int)nomem(ix, "an external data file");
    }
    f->files = nf;
    f->files[f->n_files] = (struct swin_onnx_side_file){p, fd, (uint64_t)sb.st_size};
    return f->n_files++;
}

static swin_status parse_tensor(struct indexer *ix, uint64_t end, struct swin_onnx_tensor *t)
{
    memset(t, 0, sizeof *t);
    t->producer = -1;
    t->dtype = 0;
    char *location = NULL;
    uint64_t ext_off = 0, ext_len = UINT64_MAX;
    int data_location = 0;
    struct swin_wire_field fl;
    int k;
    swin_status st = SWIN_OK;
    while ((k = swin_wire_next(&ix->r, end, &fl, "TensorProto")) == 1) {
        switch (fl.number) {
        case TENSOR_DIMS:
            if (fl.type == WIRE_VARINT) {
                if (t->ndim == ONNX_MAX_RANK) { st = bad_tensor(ix, t->name, "rank above 8"); goto out; }
                t->dims[t->ndim++] = (int64_t)fl.value;
            } else if (fl.type == WIRE_LEN) {
                unsigned char *b;
                if ((st = read_small(ix, &fl, "TensorProto.dims", &b))) goto out;
                size_t pos = 0;
                while (pos < fl.len) {
                    uint64_t v;
                    size_t u = swin_wire_varint_mem(b + pos, (size_t)fl.len - pos, &v);
                    if (!u || t->ndim == ONNX_MAX_RANK) { free(b); st = bad_tensor(ix, t->name, "malformed dims or rank above 8"); goto out; }
                    t->dims[t->ndim++] = (int64_t)v;
                    pos += u;
                }
                free(b);
            }
            break;
        case TENSOR_DATA_TYPE: t->dtype = (int)fl.value; break;
        case TENSOR_SEGMENT: st = bad_tensor(ix, t->name, "segmented tensors are not supported"); goto out;
        case TENSOR_FLOAT_DATA:
        case TENSOR_RAW_DATA:
            if (fl.type != WIRE_LEN) { st = bad_tensor(ix, t->name, "unpacked float_data is not supported"); goto out; }
            t->src = SRC_FILE, t->file = 0, t->off = fl.data, t->len = fl.len;
            break;
        case TENSOR_INT32_DATA:
        case TENSOR_INT64_DATA:
            if (fl.type != WIRE_LEN) { st = bad_tensor(ix, t->name, "unpacked int data is not supported"); goto out; }
            t->src = SRC_VARINTS, t->off = fl.data, t->len = fl.len;
            break;
        case TENSOR_NAME: {
            unsigned char *b;
            if ((st = read_small(ix, &fl, "TensorProto.name", &b))) goto out;
            free((char *)t->name);
            t->name = (char *)b;
            break;
        }
        case TENSOR_EXTERNAL: {
            unsigned char *b;
            if ((st = read_small(ix, &fl, "TensorProto.external_data", &b))) goto out;
            const char *why;
            SwinOnnx__StringStringEntryProto *e = unpack(ix, &swin_onnx__string_string_entry_proto__descriptor, b, (size_t)fl.len, &why);
            free(b);
            if (!e && ix->out_of_memory) { st = nomem(ix, "an external_data entry"); goto out; }
            if (!e || !e->key || !e->value) {
                if (e) swin_onnx__string_string_entry_proto__free_unpacked(e, &pb_allocator);
                char m[160];
                snprintf(m, sizeof m, "corrupt external_data entry%s%s%s", why ? " (" : "", why ? why : "", why ? ")" : "");
                st = bad_tensor(ix, t->name, m);
                goto out;
            }
            char *endp = NULL;
            if (!strcmp(e->key, "location")) {
                free(location);
                location = strdup(e->value);
            } else if (!strcmp(e->key, "offset")) {
                ext_off = strtoull(e->value, &endp, 10);
            } else if (!strcmp(e->key, "length")) {
                ext_len = strtoull(e->value, &endp, 10);
            }
            bool bad_num = endp && (*endp || endp == e->value);
            swin_onnx__string_string_entry_proto__free_unpacked(e, &pb_allocator);
            if (bad_num) { st = bad_tensor(ix, t->name, "external_data offset/length is not a number"); goto out; }
            break;
        }
        case TENSOR_LOCATION: data_location = (int)fl.value; break;
        default: break;   /* doc_string, string/double/uint64 data: not used by swinrun */
        }
    }
    if (k < 0) { st = ix->err->status; goto out; }
    if ((st = set_numel(ix, t))) goto out;
    if (data_location == 1) {
        if (!location) { st = bad_tensor(ix, t->name, "external data without a location"); goto out; }
        int fi = open_side_file(ix, location, ix->err, t->name ? t->name : "(unnamed)");
        if (fi < 0) { st = (swin_status)-fi; goto out; }
        uint64_t fsize = ix->f->files[fi].size;
        if (ext_len == UINT64_MAX) ext_len = t->numel * (uint64_t)elem_size(t->dtype);
        if (ext_off > fsize || ext_len > fsize - ext_off) {
            char m[256];
            snprintf(m, sizeof m, "external data [%llu, +%llu) lies outside %s (%llu bytes; truncated?)",
                     (unsigned long long)ext_off, (unsigned long long)ext_len, ix->f->files[fi].path, (unsigned long long)fsize);
            st = bad_tensor(ix, t->name, m);
            goto out;
        }
        t->src = SRC_FILE, t->file = fi, t->off = ext_off, t->len = ext_len;
    }
    if (!t->name) t->name = strdup("");
    if (!t->name) { st = nomem(ix, "an initializer name"); goto out; }
    st = check_len(ix, t);
out:
    free(location);
    if (st) { free((char *)t->name); t->name = NULL; }
    return st;
}

static swin_status parse_value_info(struct indexer *ix, const struct swin_wire_field *fl, struct swin_onnx_value_info *vi)
{
    unsigned char *b;
    swin_status st = read_small(ix, fl, "ValueInfoProto", &b);
    if (st) return st;
    const char *why;
    SwinOnnx__ValueInfoProto *p = unpack(ix, &swin_onnx__value_info_proto__descriptor, b, (size_t)fl->len, &why);
    free(b);
    if (!p && ix->out_of_memory) return nomem(ix, "a graph input or output");
    if (!p)
        return swin_error_set(ix->err, SWIN_ERR_FORMAT, "%s: not a valid ONNX file: corrupt graph input/output at byte %llu%s%s%s",
                              ix->f->path, (unsigned long long)fl->data, why ? " (" : "", why ? why : "", why ? ")" : "");
    memset(vi, 0, sizeof *vi);
    vi->name = strdup(p->name ? p->name : "");
    vi->ndim = -1;
    if (p->type && p->type->value_case == SWIN_ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && p->type->tensor_type)
        vi->elem_type = p->type->tensor_type->has_elem_type ? p->type->tensor_type->elem_type : 0;
    if (p->type && p->type->value_case == SWIN_ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && p->type->tensor_type &&
        p->type->tensor_type->shape) {
        SwinOnnx__TensorShapeProto *sh = p->type->tensor_type->shape;
        vi->ndim = sh->n_dim > ONNX_MAX_RANK ? ONNX_MAX_RANK : (int)sh->n_dim;
        for (int i = 0; i < vi->ndim; i++)
            vi->dims[i] = sh->dim[i]->value_case == SWIN_ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ? sh->dim[i]->dim_value : 0;
    }
    swin_onnx__value_info_proto__free_unpacked(p, &pb_allocator);
    return vi->name ? SWIN_OK : nomem(ix, "a graph input name");
}

static swin_status parse_graph(struct indexer *ix, uint64_t end)
{
    struct swin_onnx_file *f = ix->f;
    struct swin_wire_field fl;
    int k;
    swin_status st;
    while ((k = swin_wire_next(&ix->r, end, &fl, "GraphProto")) == 1) {
        if (fl.type != WIRE_LEN) continue;
        switch (fl.number) {
        case GRAPH_NODE: {
            void *q = grow(f->nodes, &ix->cap_nodes, f->n_nodes + 1, sizeof *f->nodes);
            if (!q) return nomem(ix, "the node list");
            f->nodes = q;
            unsigned char *b = malloc(fl.len ? fl.len : 1);
            if (!b) return nomem(ix, "a node");
            if ((st = swin_wire_read(&ix->r, fl.data, (size_t)fl.len, b))) { free(b); return st; }
            const char *why;
            SwinOnnx__NodeProto *n = unpack(ix, &swin_onnx__node_proto__descriptor, b, (size_t)fl.len, &why);
            free(b);
            if (!n && ix->out_of_memory) return nomem(ix, "a node");
            bool named = n && n->op_type;
            for (size_t a = 0; named && a < n->n_attribute; a++) named = n->attribute[a]->name != NULL;
            if (!named) {
                if (n) swin_onnx__node_proto__free_unpacked(n, &pb_allocator);
                return swin_error_set(ix->err, SWIN_ERR_FORMAT, "%s: not a valid ONNX file: node #%d (at byte %llu) is corrupt%s%s%s",
                                      f->path, f->n_nodes, (unsigned long long)fl.data, why ? " (" : "", why ? why : "",
                                      why ? ")" : "");
            }
            /* every reader takes a node's first output for granted (graph.h: swin_onnx_node_out) */
            if (n->n_output == 0) {
                swin_error_set(ix->err, SWIN_ERR_FORMAT, "%s: not a valid ONNX file: node #%d '%s' (%s) has no output",
                               f->path, f->n_nodes, n->name ? n->name : "", n->op_type);
                swin_onnx__node_proto__free_unpacked(n, &pb_allocator);
                return SWIN_ERR_FORMAT;
            }
            f->nodes[f->n_nodes++] = n;
            break;
        }
        case GRAPH_INITIALIZER: {
            void *q = grow(f->inits, &ix->cap_inits, f->n_inits + 1, sizeof *f->inits);
            if (!q) return nomem(ix, "the initializer list");
            f->inits = q;
            uint64_t save = ix->r.pos;
            ix->r.pos = fl.data;
            if ((st = parse_tensor(ix, fl.data + fl.len, &f->inits[f->n_inits]))) return st;
            ix->r.pos = save;
            f->n_inits++;
            break;
        }
        case GRAPH_INPUT:
        case GRAPH_OUTPUT: {
            bool in = fl.number == GRAPH_INPUT;
            int *cap = in ? &ix->cap_inputs : &ix->cap_outputs;
            int *cnt = in ? &f->n_inputs : &f->n_outputs;
            struct swin_onnx_value_info **arr = in ? &f->inputs : &f->outputs;
            void *q = grow(*arr, cap, *cnt + 1, sizeof **arr);
            if (!q) return nomem(ix, "the graph inputs");
            *arr = q;
            if ((st = parse_value_info(ix, &fl, &(*arr)[*cnt]))) return st;
            (*cnt)++;
            break;
        }
        case GRAPH_SPARSE_INIT:
            return swin_error_set(ix->err, SWIN_ERR_MODEL, "%s: the graph has sparse initializers, which a Swin UNETR export never has",
                                  f->path);
        default: break;
        }
    }
    return k < 0 ? ix->err->status : SWIN_OK;
}

static swin_status parse_model(struct indexer *ix)
{
    struct swin_onnx_file *f = ix->f;
    struct swin_wire_field fl;
    int k, graphs = 0;
    swin_status st;
    uint64_t end = ix->r.file_size;
    while ((k = swin_wire_next(&ix->r, end, &fl, "ModelProto")) == 1) {
        if (fl.number == MODEL_IR_VERSION && fl.type == WIRE_VARINT) {
            f->ir_version = (int64_t)fl.value;
        } else if (fl.number == MODEL_OPSET && fl.type == WIRE_LEN) {
            unsigned char *b = NULL;
            if ((st = read_small(ix, &fl, "ModelProto.opset_import", &b))) return st;
            const char *why;
            SwinOnnx__OperatorSetIdProto *o = unpack(ix, &swin_onnx__operator_set_id_proto__descriptor, b, (size_t)fl.len, &why);
            free(b);
            if (!o && ix->out_of_memory) return nomem(ix, "ModelProto.opset_import");
            if (!o)
                return swin_error_set(ix->err, SWIN_ERR_FORMAT, "%s: not a valid ONNX file: corrupt opset_import%s%s%s", f->path,
                                      why ? " (" : "", why ? why : "", why ? ")" : "");
            if (!o->domain || !o->domain[0] || !strcmp(o->domain, "ai.onnx")) f->opset = o->version;
            else if (!strcmp(o->domain, "com.microsoft.nchwc") || !strcmp(o->domain, "com.microsoft.experimental"))
                f->ort_domains = true;
            swin_onnx__operator_set_id_proto__free_unpacked(o, &pb_allocator);
        } else if ((fl.number == MODEL_PRODUCER || fl.number == MODEL_PRODUCER_VERSION) && fl.type == WIRE_LEN) {
            unsigned char *b;
            if ((st = read_small(ix, &fl, "ModelProto.producer", &b))) return st;
            char *dst = fl.number == MODEL_PRODUCER ? f->producer : f->producer_version;
            snprintf(dst, sizeof f->producer, "%s", (char *)b);
            free(b);
        } else if (fl.number == MODEL_METADATA && fl.type == WIRE_LEN) {
            unsigned char *b;
            if ((st = read_small(ix, &fl, "ModelProto.metadata_props", &b))) return st;
            const char *why;
            SwinOnnx__StringStringEntryProto *e = unpack(ix, &swin_onnx__string_string_entry_proto__descriptor, b, (size_t)fl.len, &why);
            free(b);
            if (!e && ix->out_of_memory) return nomem(ix, "ModelProto.metadata_props");
            if (e && e->key && !strncmp(e->key, "onnxsim.", 8)) f->onnxsim_metadata = true;
            if (e) swin_onnx__string_string_entry_proto__free_unpacked(e, &pb_allocator);
        } else if (fl.number == MODEL_GRAPH && fl.type == WIRE_LEN) {
            if (graphs++) return swin_error_set(ix->err, SWIN_ERR_FORMAT, "%s: not a valid ONNX file: two graphs", f->path);
            uint64_t save = ix->r.pos;
            ix->r.pos = fl.data;
            if ((st = parse_graph(ix, fl.data + fl.len))) return st;
            ix->r.pos = save;
        }
    }
    if (k < 0) return ix->err->status;
    if (!graphs || !f->ir_version)
        return swin_error_set(ix->err, SWIN_ERR_FORMAT, "%s: not an ONNX model: no %s (truncated, or another kind of file?)", f->path,
                              graphs ? "ir_version" : "graph");
    return SWIN_OK;
}

swin_status swin_onnx_file_open(const char *path, struct swin_onnx_file *f, swin_error *err)
{
    memset(f, 0, sizeof *f);
    f->path = path;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return swin_error_set(err, SWIN_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
        close(fd);
        return swin_error_set(err, SWIN_ERR_IO, "%s: not a regular file", path);
    }
    f->files = malloc(sizeof *f->files);
    char *p0 = strdup(path);
    if (!f->files || !p0) {
        free(f->files);
        free(p0);
        close(fd);
        memset(f, 0, sizeof *f);
        return swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of host memory", path);
    }
    f->files[0] = (struct swin_onnx_side_file){p0, fd, (uint64_t)sb.st_size};
    f->n_files = 1;
    if (sb.st_size == 0) {
        swin_onnx_file_close(f);
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: empty file, not an ONNX model", path);
    }
    struct indexer *ix = calloc(1, sizeof *ix);
    char *dir = strdup(path);
    if (!ix || !dir) {
        free(ix);
        free(dir);
        swin_onnx_file_close(f);
        return swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of host memory", path);
    }
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0; else strcpy(dir, ".");
    ix->model_dir = dir;
    ix->f = f;
    ix->err = err;
    swin_wire_init(&ix->r, fd, (uint64_t)sb.st_size, path, err);
    swin_status st = parse_model(ix);
    free(dir);
    free(ix);
    if (st) swin_onnx_file_close(f);
    return st;
}

void swin_onnx_file_drop_nodes(struct swin_onnx_file *f)
{
    for (int i = 0; i < f->n_nodes; i++) swin_onnx__node_proto__free_unpacked(f->nodes[i], &pb_allocator);
    free(f->nodes);
    f->nodes = NULL;
    f->n_nodes = 0;
}

void swin_onnx_file_close(struct swin_onnx_file *f)
{
    swin_onnx_file_drop_nodes(f);
    for (int i = 0; i < f->n_inits; i++) free((char *)f->inits[i].name);
    for (int i = 0; i < f->n_inputs; i++) free(f->inputs[i].name);
    for (int i = 0; i < f->n_outputs; i++) free(f->outputs[i].name);
    for (int i = 0; i < f->n_files; i++) {
        close(f->files[i].fd);
        free(f->files[i].path);
    }
    free(f->inits);
    free(f->inputs);
    free(f->outputs);
    free(f->files);
    memset(f, 0, sizeof *f);
}

static swin_status pread_all(const struct swin_onnx_file *f, int fi, uint64_t off, size_t len, void *dst, swin_error *err)
{
    unsigned char *d = dst;
    while (len) {
        ssize_t k = pread(f->files[fi].fd, d, len, (off_t)off);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0)
            return swin_error_set(err, SWIN_ERR_IO, "%s: read failed at byte %llu: %s", f->files[fi].path,
                                  (unsigned long long)off, k < 0 ? strerror(errno) : "unexpected end of file");
        d += k;
        off += (uint64_t)k;
        len -= (size_t)k;
    }
    return SWIN_OK;
}

/* IEEE 754 binary16 -> binary32, exact (subnormals, infinities and NaN kept). */
static float f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, bits;
    if (e == 0x1f) {
        bits = sign | 0x7f800000u | (m << 13);
    } else if (e) {
        bits = sign | ((e + 112) << 23) | (m << 13);
    } else if (m) {                         /* subnormal: normalise */
        int shift = 0;
        while (!(m & 0x400)) m <<= 1, shift++;
        bits = sign | ((uint32_t)(113 - shift) << 23) | ((m & 0x3ff) << 13);
    } else {
        bits = sign;
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static float bf16_to_f32(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* 16-bit float payloads, read in chunks and widened. int32_data holds them one value per
 * varint (SRC_VARINTS), raw_data and external data as little-endian pairs of bytes. */
static swin_status read_half(const struct swin_onnx_file *f, const struct swin_onnx_tensor *t, uint64_t first, uint64_t count,
                             float *dst, swin_error *err)
{
    float (*widen)(uint16_t) = t->dtype == ONNX_FLOAT16 ? f16_to_f32 : bf16_to_f32;
    if (t->src == SRC_VARINTS) {
        int64_t *v = malloc((size_t)(t->numel ? t->numel : 1) * sizeof *v);
        if (!v) return swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of host memory reading '%s'", f->path, t->name);
        struct swin_onnx_tensor as_int = *t;
        as_int.dtype = ONNX_INT32;
        swin_status st = swin_onnx_tensor_read_i64(f, &as_int, v, t->numel, err);
        for (uint64_t i = 0; !st && i < count; i++) dst[i] = widen((uint16_t)v[first + i]);
        free(v);
        return st;
    }
    uint16_t buf[4096];
    for (uint64_t done = 0; done < count;) {
        uint64_t n = count - done < 4096 ? count - done : 4096;
        if (t->src == SRC_FILE) {
            swin_status st = pread_all(f, t->file, t->off + (first + done) * 2, (size_t)n * 2, buf, err);
            if (st) return st;
        } else if (t->src == SRC_MEMORY) {
            memcpy(buf, (const unsigned char *)t->mem + (first + done) * 2, (size_t)n * 2);
        } else {
            return swin_error_set(err, SWIN_ERR_MODEL, "%s: float tensor '%s' stores its data in an unsupported field", f->path,
                                  t->name);
        }
        for (uint64_t i = 0; i < n; i++) dst[done + i] = widen(buf[i]);
        done += n;
    }
    return SWIN_OK;
}

swin_status swin_onnx_tensor_read_f32(const struct swin_onnx_file *f, const struct swin_onnx_tensor *t, uint64_t first,
                                 uint64_t count, float *dst, swin_error *err)
{
    if (!onnx_dtype_is_float(t->dtype))
        return swin_error_set(err, SWIN_ERR_MODEL,
                              "%s: tensor '%s' has ONNX data type %d, expected float32 (1), float16 (10) or bfloat16 (16)",
                              f->path, t->name, t->dtype);
    if (first > t->numel || count > t->numel - first)
        return swin_error_set(err, SWIN_ERR_INTERNAL, "%s: read past the end of tensor '%s'", f->path, t->name);
    if (t->dtype != ONNX_FLOAT) return read_half(f, t, first, count, dst, err);
    switch (t->src) {
    case SRC_FILE: return pread_all(f, t->file, t->off + first * 4, (size_t)count * 4, dst, err);
    case SRC_MEMORY: memcpy(dst, (const float *)t->mem + first, (size_t)count * 4); return SWIN_OK;
    default:
        return swin_error_set(err, SWIN_ERR_MODEL, "%s: float tensor '%s' stores its data in an unsupported field", f->path, t->name);
    }
}

swin_status swin_onnx_tensor_read_i64(const struct swin_onnx_file *f, const struct swin_onnx_tensor *t, int64_t *dst, uint64_t count,
                                 swin_error *err)
{
    if ((t->dtype != ONNX_INT64 && t->dtype != ONNX_INT32) || count != t->numel)
        return swin_error_set(err, SWIN_ERR_MODEL, "%s: tensor '%s' is not an integer tensor of %llu elements", f->path,
                              t->name, (unsigned long long)count);
    if (t->src == SRC_MEM_I64) {
        memcpy(dst, t->mem, (size_t)count * 8);
        return SWIN_OK;
    }
    unsigned char *tmp = NULL;
    const unsigned char *bytes;
    size_t nbytes;
    if (t->src == SRC_MEMORY) {
        bytes = t->mem;
        nbytes = (size_t)t->len;
    } else if (t->src == SRC_FILE || t->src == SRC_VARINTS) {
        nbytes = (size_t)t->len;
        tmp = malloc(nbytes ? nbytes : 1);
        if (!tmp) return swin_error_set(err, SWIN_ERR_NOMEM, "%s: out of host memory reading '%s'", f->path, t->name);
        swin_status st = pread_all(f, t->src == SRC_FILE ? t->file : 0, t->off, nbytes, tmp, err);
        if (st) { free(tmp); return st; }
        bytes = tmp;
    } else {
        return swin_error_set(err, SWIN_ERR_MODEL, "%s: integer tensor '%s' has no data", f->path, t->name);
    }
    swin_status st = SWIN_OK;
    if (t->src == SRC_VARINTS) {
        size_t pos = 0;
        for (uint64_t i = 0; i < count; i++) {
            uint64_t v;
            size_t u = swin_wire_varint_mem(bytes + pos, nbytes - pos, &v);
            if (!u) { st = swin_error_set(err, SWIN_ERR_FORMAT, "%s: tensor '%s': malformed int data", f->path, t->name); break; }
            dst[i] = t->dtype == ONNX_INT32 ? (int64_t)(int32_t)v : (int64_t)v;
            pos += u;
        }
    } else if (t->dtype == ONNX_INT64) {
        memcpy(dst, bytes, (size_t)count * 8);
    } else {
        for (uint64_t i = 0; i < count; i++) {
            int32_t v;
            memcpy(&v, bytes + 4 * i, 4);
            dst[i] = v;
        }
    }
    free(tmp);
    return st;
}

swin_status swin_onnx_tensor_from_proto(const SwinOnnx__TensorProto *p, const char *name, int producer, struct swin_onnx_tensor *t,
                                   const char *path, swin_error *err)
{
    memset(t, 0, sizeof *t);
    t->name = name;
    t->producer = producer;
    t->dtype = p->has_data_type ? p->data_type : 0;
    if (p->n_dims > ONNX_MAX_RANK)
        return swin_error_set(err, SWIN_ERR_MODEL, "%s: constant '%s' has rank above 8", path, name);
    t->ndim = (int)p->n_dims;
    uint64_t n = 1;
    for (int i = 0; i < t->ndim; i++) {
        t->dims[i] = p->dims[i];
        if (p->dims[i] < 0 || (p->dims[i] && n > UINT64_MAX / 16 / (uint64_t)p->dims[i]))
            return swin_error_set(err, SWIN_ERR_FORMAT, "%s: constant '%s' has an invalid shape", path, name);
        n *= (uint64_t)p->dims[i];
    }
    t->numel = n;
    int es = elem_size(t->dtype);
    if (p->has_data_location && p->data_location == SWIN_ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
        return swin_error_set(err, SWIN_ERR_MODEL, "%s: constant node output '%s' uses external data (not supported)", path, name);
    if (p->has_raw_data) {
        t->src = SRC_MEMORY, t->mem = p->raw_data.data, t->len = p->raw_data.len;
        if (es && t->len != n * (uint64_t)es)
            return swin_error_set(err, SWIN_ERR_FORMAT, "%s: constant '%s' has %llu payload bytes, its shape needs %llu", path,
                                  name, (unsigned long long)t->len, (unsigned long long)(n * (uint64_t)es));
    } else if (t->dtype == ONNX_FLOAT && p->n_float_data == n) {
        t->src = SRC_MEMORY, t->mem = p->float_data, t->len = n * 4;
    } else if (t->dtype == ONNX_INT64 && p->n_int64_data == n) {
        t->src = SRC_MEM_I64, t->mem = p->int64_data, t->len = n * 8;
    } else if (t->dtype == ONNX_INT32 && p->n_int32_data == n) {
        t->src = SRC_MEMORY, t->mem = p->int32_data, t->len = n * 4;
    } else if (n == 0) {
        t->src = SRC_NONE;
    } else if (p->n_float_data || p->n_int32_data || p->n_int64_data || p->n_string_data || p->n_double_data ||
               p->n_uint64_data) {
        if (t->dtype == ONNX_FLOAT || t->dtype == ONNX_INT32 || t->dtype == ONNX_INT64)
            return swin_error_set(err, SWIN_ERR_FORMAT, "%s: constant '%s' has a data field whose length is not its shape's %llu elements",
                                  path, name, (unsigned long long)n);
        t->src = SRC_NONE;   /* other types: readers report it if it is ever needed */
    } else {
        return swin_error_set(err, SWIN_ERR_FORMAT, "%s: constant '%s' has a shape of %llu elements but no data", path, name,
                              (unsigned long long)n);
    }
    return SWIN_OK;
}
