/* A pickle interpreter that executes nothing: it reads the pickle torch.save writes
 * (data.pkl, protocols 2-5) into an inert tree of values.
 *
 * Only the globals a weights-only load allows mean something: collections.OrderedDict
 * (an empty dict), torch._utils._rebuild_tensor(_v2) / _rebuild_parameter(_with_state) /
 * torch._tensor._rebuild_from_type_v2 (a tensor record), the torch.*Storage types (a
 * storage's dtype in a persistent id), torch.Size (a tuple). Every other global (optimizer
 * classes, numpy scalars, posix.system, builtins.eval, ...) stays a named placeholder: calling
 * it makes an inert PK_OBJECT that remembers the global's name and nothing runs; BUILD
 * hands such an object its state as a value, never to code (TorchScript's modules are objects
 * of `__torch__.*` classes whose state is the dict of their attributes).
 *
 * Limits: memory grows at most by a fixed multiple of the pickle's size, memo indices below
 * 2^20, marks nested at most 1000 deep; nothing walks the tree recursively. */
#ifndef SWIN_WEIGHTS_PICKLE_H
#define SWIN_WEIGHTS_PICKLE_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

#define PK_MAX_RANK 8

enum pk_kind {
    PK_NONE, PK_BOOL, PK_INT, PK_FLOAT, PK_STR, PK_BYTES,
    PK_TUPLE, PK_LIST, PK_DICT,   /* items: n values (a dict: n/2 key, value pairs) */
    PK_GLOBAL,                    /* a global not called (yet): name "module.qualname" */
    PK_OBJECT,                    /* the inert result of calling an unknown global: name */
    PK_STORAGE,                   /* persistent id ('storage', type, key, location, numel) */
    PK_TENSOR,
};

/* Element types of torch storages. */
enum pk_dtype { PK_F32, PK_F16, PK_BF16, PK_F64, PK_I64, PK_I32, PK_I16, PK_I8, PK_U8, PK_BOOL8, PK_DTYPE_UNKNOWN };

/* The 4-byte fields first: a value is 120 bytes, one per opcode of a hostile pickle at worst. */
struct pk_value {
    enum pk_kind kind;
    int fn;                    /* GLOBAL: which allowed function (internal) */
    enum pk_dtype dtype;       /* STORAGE, and GLOBAL of a storage type */
    int ndim;                  /* TENSOR */
    int64_t i;                 /* INT, BOOL; STORAGE: numel */
    double f;
    char *s;                   /* STR, BYTES (len bytes + NUL); GLOBAL, OBJECT: the global's name; STORAGE: key */
    size_t len;
    struct pk_value **items;   /* TUPLE, LIST, DICT; OBJECT: its arguments */
    size_t n, cap;
    /* TENSOR */
    const struct pk_value *storage;
    int64_t offset;
    int64_t *size, *stride;    /* ndim each, allocated with the tensor */
    /* OBJECT: the state BUILD gave it, NULL before (a TorchScript module's attribute dict) */
    const struct pk_value *state;
    struct pk_value *next_alloc;
};

struct swin_pickle {
    struct pk_value *root;
    struct pk_value *all;      /* every allocated value, freed together */
    size_t bytes;              /* allocated so far */
};

/* Runs the pickle in buf. what names it in messages (e.g. "model.pt: archive/data.pkl").
 * On error *p is freed and err says which byte and why. */
swin_status swin_pickle_load(const unsigned char *buf, size_t len, const char *what, struct swin_pickle *p, swin_error *err);
void swin_pickle_free(struct swin_pickle *p);

/* Dict lookup by string key (the last binding wins, as in Python); NULL when absent or d is not a dict. */
const struct pk_value *swin_pickle_dict_get(const struct pk_value *d, const char *key);
const char *swin_pickle_dtype_name(enum pk_dtype t);
size_t swin_pickle_dtype_size(enum pk_dtype t);

#endif
