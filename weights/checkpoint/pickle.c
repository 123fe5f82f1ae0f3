#include "weights/checkpoint/pickle.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MARKS 1000
#define MAX_MEMO (1u << 20)
#define BUDGET_PER_BYTE 48      /* memory allowed per byte of pickle, on top of BUDGET_BASE */
#define BUDGET_BASE (16u << 20)

enum fn { FN_NONE, FN_ORDERED_DICT, FN_REBUILD_TENSOR_V2, FN_REBUILD_TENSOR, FN_REBUILD_PARAM, FN_FROM_TYPE_V2, FN_SIZE,
          FN_STORAGE };

struct vm {
    const unsigned char *b;
    size_t len, pos, op_at;
    const char *what;
    struct swin_pickle *p;
    struct pk_value **stack;
    size_t sp, scap;
    size_t marks[MAX_MARKS];
    int nmarks;
    struct pk_value **memo;
    size_t memo_cap;
    size_t budget;
    swin_error *err;
};

static struct pk_value pk_none = {.kind = PK_NONE}, pk_true = {.kind = PK_BOOL, .i = 1}, pk_false = {.kind = PK_BOOL};

static swin_status fail(struct vm *v, const char *fmt, const char *arg)
{
    char m[200];
    snprintf(m, sizeof m, fmt, arg ? arg : "");
    return swin_error_set(v->err, SWIN_ERR_FORMAT, "%s: pickle byte %zu (opcode 0x%02x): %s", v->what, v->op_at,
                          v->op_at < v->len ? v->b[v->op_at] : 0, m);
}

static void *vm_alloc(struct vm *v, size_t n)
{
    if (n > v->budget - v->p->bytes) return NULL;
    void *q = calloc(1, n);
    if (q) v->p->bytes += n;
    return q;
}

static struct pk_value *new_value(struct vm *v, enum pk_kind k)
{
    struct pk_value *x = vm_alloc(v, sizeof *x);
    if (!x) return NULL;
    x->kind = k;
    x->next_alloc = v->p->all;
    v->p->all = x;
    return x;
}

#define NOMEM(v) fail(v, "the pickle needs more memory than its size allows (or the host has none)%s", NULL)

static swin_status push(struct vm *v, struct pk_value *x)
{
    if (!x) return NOMEM(v);
    if (v->sp == v->scap) {
        size_t nc = v->scap ? 2 * v->scap : 64;
        struct pk_value **s = vm_alloc(v, nc * sizeof *s);
        if (!s) return NOMEM(v);
        if (v->sp) memcpy(s, v->stack, v->sp * sizeof *s);
        free(v->stack);
        v->stack = s;
        v->scap = nc;
    }
    v->stack[v->sp++] = x;
    return SWIN_OK;
}

static struct pk_value *pop(struct vm *v)
{
    if (!v->sp || (v->nmarks && v->marks[v->nmarks - 1] == v->sp)) return NULL;
    return v->stack[--v->sp];
}

static swin_status add_item(struct vm *v, struct pk_value *c, struct pk_value *x)
{
    if (c->n == c->cap) {
        size_t nc = c->cap ? 2 * c->cap : 4;
        struct pk_value **it = vm_alloc(v, nc * sizeof *it);
        if (!it) return NOMEM(v);
        if (c->n) memcpy(it, c->items, c->n * sizeof *it);
        free(c->items);
        c->items = it;
        c->cap = nc;
    }
    c->items[c->n++] = x;
    return SWIN_OK;
}

/* The values above the topmost mark, which is removed: [*first, sp). */
static swin_status pop_mark(struct vm *v, size_t *first)
{
    if (!v->nmarks) return fail(v, "no MARK on the stack%s", NULL);
    *first = v->marks[--v->nmarks];
    return SWIN_OK;
}

static swin_status need(struct vm *v, size_t n)
{
    if (n > v->len - v->pos) return fail(v, "the pickle ends inside an opcode's argument%s", NULL);
    return SWIN_OK;
}

static uint64_t le(const unsigned char *q, int n)
{
    uint64_t x = 0;
    for (int i = n; i-- > 0;) x = x << 8 | q[i];
    return x;
}

/* A text argument ending in '\n' (GLOBAL, INT, PUT, ...): *s, *n without the newline. */
static swin_status line(struct vm *v, const char **s, size_t *n)
{
    const unsigned char *e = memchr(v->b + v->pos, '\n', v->len - v->pos);
    if (!e) return fail(v, "the pickle ends inside a text argument%s", NULL);
    *s = (const char *)v->b + v->pos;
    *n = (size_t)(e - (v->b + v->pos));
    v->pos += *n + 1;
    return SWIN_OK;
}

static struct pk_value *new_str(struct vm *v, enum pk_kind k, const char *s, size_t n)
{
    struct pk_value *x = new_value(v, k);
    if (!x || !(x->s = vm_alloc(v, n + 1))) return NULL;
    memcpy(x->s, s, n);
    x->len = n;
    return x;
}

static struct pk_value *new_int(struct vm *v, int64_t i)
{
    struct pk_value *x = new_value(v, PK_INT);
    if (x) x->i = i;
    return x;
}

static const struct { const char *name; enum pk_dtype t; } storages[] = {
    {"torch.FloatStorage", PK_F32}, {"torch.HalfStorage", PK_F16}, {"torch.BFloat16Storage", PK_BF16},
    {"torch.DoubleStorage", PK_F64}, {"torch.LongStorage", PK_I64}, {"torch.IntStorage", PK_I32},
    {"torch.ShortStorage", PK_I16}, {"torch.CharStorage", PK_I8}, {"torch.ByteStorage", PK_U8},
    {"torch.BoolStorage", PK_BOOL8},
};

static swin_status global(struct vm *v, const char *mod, size_t mn, const char *name, size_t nn)
{
    struct pk_value *g = new_value(v, PK_GLOBAL);
    if (!g || !(g->s = vm_alloc(v, mn + nn + 2))) return NOMEM(v);
    memcpy(g->s, mod, mn);
    g->s[mn] = '.';
    memcpy(g->s + mn + 1, name, nn);
    g->len = mn + 1 + nn;
    static const struct { const char *name; enum fn fn; } fns[] = {
        {"collections.OrderedDict", FN_ORDERED_DICT},
        {"torch._utils._rebuild_tensor_v2", FN_REBUILD_TENSOR_V2},
        {"torch._utils._rebuild_tensor", FN_REBUILD_TENSOR},
        {"torch._utils._rebuild_parameter", FN_REBUILD_PARAM},
        {"torch._utils._rebuild_parameter_with_state", FN_REBUILD_PARAM},
        {"torch._tensor._rebuild_from_type_v2", FN_FROM_TYPE_V2},
        {"torch.Size", FN_SIZE},
    };
    for (size_t i = 0; i < sizeof fns / sizeof *fns; i++)
        if (!strcmp(g->s, fns[i].name)) g->fn = fns[i].fn;
    g->dtype = PK_DTYPE_UNKNOWN;
    for (size_t i = 0; i < sizeof storages / sizeof *storages; i++)
        if (!strcmp(g->s, storages[i].name)) g->fn = FN_STORAGE, g->dtype = storages[i].t;
    return push(v, g);
}

static bool int_tuple(const struct pk_value *t, int64_t *out, int *n)
{
    if (t->kind != PK_TUPLE && t->kind != PK_LIST) return false;
    if (t->n > PK_MAX_RANK) return false;
    for (size_t i = 0; i < t->n; i++) {
        if (t->items[i]->kind != PK_INT) return false;
        out[i] = t->items[i]->i;
    }
    *n = (int)t->n;
    return true;
}

/* _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, hooks[, metadata]) */
static swin_status rebuild_tensor(struct vm *v, const struct pk_value *args, struct pk_value **out)
{
    int ns, nt;
    struct pk_value *t = new_value(v, PK_TENSOR);
    if (!t || !(t->size = vm_alloc(v, 2 * PK_MAX_RANK * sizeof *t->size))) return NOMEM(v);
    t->stride = t->size + PK_MAX_RANK;
    if (args->kind != PK_TUPLE || args->n < 4 || args->items[0]->kind != PK_STORAGE || args->items[1]->kind != PK_INT ||
        !int_tuple(args->items[2], t->size, &ns) || !int_tuple(args->items[3], t->stride, &nt) || ns != nt)
        return fail(v, "a tensor rebuilt from arguments that are not (storage, offset, size, stride) of rank <= 8%s", NULL);
    t->storage = args->items[0];
    t->offset = args->items[1]->i;
    t->ndim = ns;
    t->dtype = t->storage->dtype;
    *out = t;
    return SWIN_OK;
}

/* callable(*args), inertly. */
static swin_status call(struct vm *v, struct pk_value *f, struct pk_value *args, struct pk_value **out)
{
    if (f->kind != PK_GLOBAL) return fail(v, "a call of something that is not a global%s", NULL);
    if (args->kind != PK_TUPLE) return fail(v, "call arguments that are not a tuple%s", NULL);
    switch ((enum fn)f->fn) {
    case FN_ORDERED_DICT:
        if (args->n) break;
        *out = new_value(v, PK_DICT);
        return *out ? SWIN_OK : NOMEM(v);
    case FN_REBUILD_TENSOR_V2:
    case FN_REBUILD_TENSOR: return rebuild_tensor(v, args, out);
    case FN_REBUILD_PARAM:
        if (!args->n || args->items[0]->kind != PK_TENSOR) break;
        *out = args->items[0];
        return SWIN_OK;
    case FN_FROM_TYPE_V2:
        /* (func, type, args, state): a plain tensor or Parameter rebuilt by func(*args) */
        if (args->n < 3 || args->items[0]->kind != PK_GLOBAL || args->items[0]->fn == FN_FROM_TYPE_V2) break;
        return call(v, args->items[0], args->items[2], out);
    case FN_SIZE:
        if (args->n != 1 || args->items[0]->kind != PK_TUPLE) break;
        *out = args->items[0];
        return SWIN_OK;
    case FN_STORAGE:
    case FN_NONE: break;
    }
    struct pk_value *o = new_value(v, PK_OBJECT);
    if (!o || !(o->s = vm_alloc(v, f->len + 1))) return NOMEM(v);
    memcpy(o->s, f->s, f->len);
    o->len = f->len;
    for (size_t i = 0; i < args->n; i++)
        if (add_item(v, o, args->items[i])) return NOMEM(v);
    *out = o;
    return SWIN_OK;
}

/* BINPERSID: ('storage', storage_type, key, location, numel) */
static swin_status persistent(struct vm *v, struct pk_value *pid, struct pk_value **out)
{
    if (pid->kind != PK_TUPLE || pid->n != 5 || pid->items[0]->kind != PK_STR || strcmp(pid->items[0]->s, "storage") ||
        pid->items[1]->kind != PK_GLOBAL || pid->items[2]->kind != PK_STR || pid->items[4]->kind != PK_INT ||
        pid->items[4]->i < 0)
        return fail(v, "a persistent id that is not ('storage', type, key, location, numel)%s", NULL);
    if (pid->items[1]->fn != FN_STORAGE) return fail(v, "a storage of unknown type '%s'", pid->items[1]->s);
    struct pk_value *s = new_value(v, PK_STORAGE);
    if (!s) return NOMEM(v);
    s->dtype = pid->items[1]->dtype;
    s->s = pid->items[2]->s;
    s->len = pid->items[2]->len;
    s->i = pid->items[4]->i;
    *out = s;
    return SWIN_OK;
}

static swin_status memo_put(struct vm *v, uint64_t idx)
{
    if (!v->sp) return fail(v, "memoize with an empty stack%s", NULL);
    if (idx >= MAX_MEMO) return fail(v, "a memo index beyond 2^20%s", NULL);
    if (idx >= v->memo_cap) {
        size_t nc = v->memo_cap ? v->memo_cap : 64;
        while (nc <= idx) nc *= 2;
        struct pk_value **m = vm_alloc(v, nc * sizeof *m);
        if (!m) return NOMEM(v);
        if (v->memo_cap) memcpy(m, v->memo, v->memo_cap * sizeof *m);
        free(v->memo);
        v->memo = m;
        v->memo_cap = nc;
    }
    v->memo[idx] = v->stack[v->sp - 1];
    return SWIN_OK;
}

static swin_status memo_get(struct vm *v, uint64_t idx)
{
    if (idx >= v->memo_cap || !v->memo[idx]) return fail(v, "a memo index that was never stored%s", NULL);
    return push(v, v->memo[idx]);
}

static swin_status parse_text_int(struct vm *v, const char *s, size_t n, int64_t *out)
{
    char buf[32];
    if (n && s[n - 1] == 'L') n--;
    if (!n || n >= sizeof buf) return fail(v, "a text integer that is empty or too long%s", NULL);
    memcpy(buf, s, n);
    buf[n] = 0;
    char *end;
    long long x = strtoll(buf, &end, 10);
    if (*end) return fail(v, "a text integer that is not a number%s", NULL);
    *out = x;
    return SWIN_OK;
}

static swin_status step(struct vm *v, bool *stop)
{
    swin_status st;
    struct pk_value *x = NULL, *y = NULL, *z = NULL;
    size_t first = 0, n;
    const char *s, *s2;
    size_t sn, sn2;
    v->op_at = v->pos;
    unsigned char op = v->b[v->pos++];
#define NEED(k) do { if ((st = need(v, (k)))) return st; } while (0)
#define POP(x) do { if (!((x) = pop(v))) return fail(v, "stack underflow%s", NULL); } while (0)
    switch (op) {
    case 0x80: NEED(1); if (v->b[v->pos++] > 5) return fail(v, "pickle protocol above 5%s", NULL); return SWIN_OK;
    case 0x95: NEED(8); v->pos += 8; return SWIN_OK;                       /* FRAME */
    case '.': *stop = true; return SWIN_OK;
    case '(':
        if (v->nmarks == MAX_MARKS) return fail(v, "marks nested deeper than 1000%s", NULL);
        v->marks[v->nmarks++] = v->sp;
        return SWIN_OK;
    case 'N': return push(v, &pk_none);
    case 0x88: return push(v, &pk_true);
    case 0x89: return push(v, &pk_false);
    case 'K': NEED(1); return push(v, new_int(v, v->b[v->pos++]));
    case 'M': NEED(2); v->pos += 2; return push(v, new_int(v, (int64_t)le(v->b + v->pos - 2, 2)));
    case 'J': NEED(4); v->pos += 4; return push(v, new_int(v, (int32_t)(uint32_t)le(v->b + v->pos - 4, 4)));
    case 0x8a: case 0x8b: {                                                /* LONG1, LONG4 */
        int w = op == 0x8a ? 1 : 4;
        NEED((size_t)w);
        uint64_t k = le(v->b + v->pos, w);
        v->pos += (size_t)w;
        if (k > 8) return fail(v, "an integer wider than 64 bits%s", NULL);
        NEED((size_t)k);
        uint64_t u = le(v->b + v->pos, (int)k);
        if (k && k < 8 && (v->b[v->pos + k - 1] & 0x80)) u |= ~0ull << (8 * k);   /* sign-extend */
        v->pos += (size_t)k;
        return push(v, new_int(v, (int64_t)u));
    }
    case 'I': case 'L': {
        int64_t k;
        if ((st = line(v, &s, &sn))) return st;
        if (op == 'I' && sn == 2 && s[0] == '0' && (s[1] == '0' || s[1] == '1')) return push(v, s[1] == '1' ? &pk_true : &pk_false);
        if ((st = parse_text_int(v, s, sn, &k))) return st;
        return push(v, new_int(v, k));
    }
    case 'G': {
        NEED(8);
        uint64_t u = 0;
        for (int i = 0; i < 8; i++) u = u << 8 | v->b[v->pos + (size_t)i];
        v->pos += 8;
        x = new_value(v, PK_FLOAT);
        if (x) memcpy(&x->f, &u, 8);
        return push(v, x);
    }
    case 'F': {
        char buf[64];
        if ((st = line(v, &s, &sn))) return st;
        if (sn >= sizeof buf) return fail(v, "a text float that is too long%s", NULL);
        memcpy(buf, s, sn);
        buf[sn] = 0;
        x = new_value(v, PK_FLOAT);
        if (x) x->f = strtod(buf, NULL);
        return push(v, x);
    }
    case 'X': case 0x8c: case 0x8d: case 'T': case 'U': case 'B': case 'C': case 0x8e: case 0x96: {
        int w = op == 0x8c || op == 'U' || op == 'C' ? 1 : op == 0x8d || op == 0x8e || op == 0x96 ? 8 : 4;
        NEED((size_t)w);
        uint64_t k = le(v->b + v->pos, w);
        v->pos += (size_t)w;
        NEED(k);
        bool text = op == 'X' || op == 0x8c || op == 0x8d || op == 'T' || op == 'U';
        x = new_str(v, text ? PK_STR : PK_BYTES, (const char *)v->b + v->pos, (size_t)k);
        v->pos += (size_t)k;
        return push(v, x);
    }
    case 'V': case 'S':
        if ((st = line(v, &s, &sn))) return st;
        if (op == 'S' && sn >= 2 && (s[0] == '\'' || s[0] == '"')) s++, sn -= 2;
        return push(v, new_str(v, PK_STR, s, sn));
    case ']': case 0x8f: return push(v, new_value(v, PK_LIST));
    case '}': return push(v, new_value(v, PK_DICT));
    case ')': return push(v, new_value(v, PK_TUPLE));
    case 'l': case 't': case 'd': case 0x91:
        if ((st = pop_mark(v, &first))) return st;
        n = v->sp - first;
        if (op == 'd' && n % 2) return fail(v, "DICT with an odd number of items%s", NULL);
        if (!(x = new_value(v, op == 't' ? PK_TUPLE : op == 'd' ? PK_DICT : PK_LIST))) return NOMEM(v);
        for (size_t i = first; i < v->sp; i++)
            if ((st = add_item(v, x, v->stack[i]))) return st;
        v->sp = first;
        return push(v, x);
    case 0x85: case 0x86: case 0x87: {
        struct pk_value *it[3];
        int k = op - 0x84;
        for (int i = k; i-- > 0;) POP(it[i]);
        if (!(x = new_value(v, PK_TUPLE))) return NOMEM(v);
        for (int i = 0; i < k; i++)
            if ((st = add_item(v, x, it[i]))) return st;
        return push(v, x);
    }
    case 'a':
        POP(y);
        POP(x);
        if (x->kind == PK_LIST && (st = add_item(v, x, y))) return st;
        if (x->kind != PK_LIST && x->kind != PK_OBJECT) return fail(v, "APPEND to something that is not a list%s", NULL);
        return push(v, x);
    case 'e': case 0x90:
        if ((st = pop_mark(v, &first))) return st;
        if (!first || (v->nmarks && v->marks[v->nmarks - 1] == first)) return fail(v, "APPENDS without a list%s", NULL);
        x = v->stack[first - 1];
        if (x->kind != PK_LIST && x->kind != PK_OBJECT) return fail(v, "APPENDS to something that is not a list%s", NULL);
        for (size_t i = first; i < v->sp && x->kind == PK_LIST; i++)
            if ((st = add_item(v, x, v->stack[i]))) return st;
        v->sp = first;
        return SWIN_OK;
    case 's':
        POP(z);
        POP(y);
        POP(x);
        if (x->kind != PK_DICT && x->kind != PK_OBJECT) return fail(v, "SETITEM on something that is not a dict%s", NULL);
        if (x->kind == PK_DICT && ((st = add_item(v, x, y)) || (st = add_item(v, x, z)))) return st;
        return push(v, x);
    case 'u':
        if ((st = pop_mark(v, &first))) return st;
        if (!first || (v->nmarks && v->marks[v->nmarks - 1] == first) || (v->sp - first) % 2)
            return fail(v, "SETITEMS without a dict or with an odd number of items%s", NULL);
        x = v->stack[first - 1];
        if (x->kind != PK_DICT && x->kind != PK_OBJECT) return fail(v, "SETITEMS on something that is not a dict%s", NULL);
        for (size_t i = first; i < v->sp && x->kind == PK_DICT; i++)
            if ((st = add_item(v, x, v->stack[i]))) return st;
        v->sp = first;
        return SWIN_OK;
    case 'c': case 'i':
        if ((st = line(v, &s, &sn)) || (st = line(v, &s2, &sn2))) return st;
        if ((st = global(v, s, sn, s2, sn2))) return st;
        if (op == 'c') return SWIN_OK;
        /* INST: the global called on the values above the mark */
        POP(y);
        if ((st = pop_mark(v, &first))) return st;
        if (!(x = new_value(v, PK_TUPLE))) return NOMEM(v);
        for (size_t i = first; i < v->sp; i++)
            if ((st = add_item(v, x, v->stack[i]))) return st;
        v->sp = first;
        if ((st = call(v, y, x, &z))) return st;
        return push(v, z);
    case 0x93:
        POP(y);
        POP(x);
        if (x->kind != PK_STR || y->kind != PK_STR) return fail(v, "STACK_GLOBAL of non-strings%s", NULL);
        return global(v, x->s, x->len, y->s, y->len);
    case 'o':
        if ((st = pop_mark(v, &first))) return st;
        if (first == v->sp) return fail(v, "OBJ without a class%s", NULL);
        y = v->stack[first];
        if (!(x = new_value(v, PK_TUPLE))) return NOMEM(v);
        for (size_t i = first + 1; i < v->sp; i++)
            if ((st = add_item(v, x, v->stack[i]))) return st;
        v->sp = first;
        if ((st = call(v, y, x, &z))) return st;
        return push(v, z);
    case 'R': case 0x81:
        POP(y);
        POP(x);
        if ((st = call(v, x, y, &z))) return st;
        return push(v, z);
    case 0x92:
        POP(z);
        POP(y);
        POP(x);
        if ((st = call(v, x, y, &z))) return st;
        return push(v, z);
    case 'b':
        POP(y);   /* the state: an object keeps it as a value; anything else drops it (a dict's _metadata) */
        if (!v->sp) return fail(v, "BUILD without an object%s", NULL);
        if (v->stack[v->sp - 1]->kind == PK_OBJECT) v->stack[v->sp - 1]->state = y;
        return SWIN_OK;
    case 'Q':
        POP(x);
        if ((st = persistent(v, x, &y))) return st;
        return push(v, y);
    case 'P': return fail(v, "a text persistent id (PERSID); torch.save writes BINPERSID%s", NULL);
    case '0': POP(x); return SWIN_OK;
    case '1': return pop_mark(v, &first) ? fail(v, "POP_MARK without a mark%s", NULL) : (v->sp = first, SWIN_OK);
    case '2': POP(x); push(v, x); return push(v, x);
    case 'p': case 'g': {
        int64_t k;
        if ((st = line(v, &s, &sn)) || (st = parse_text_int(v, s, sn, &k))) return st;
        if (k < 0) return fail(v, "a negative memo index%s", NULL);
        return op == 'p' ? memo_put(v, (uint64_t)k) : memo_get(v, (uint64_t)k);
    }
    case 'q': NEED(1); return memo_put(v, v->b[v->pos++]);
    case 'h': NEED(1); return memo_get(v, v->b[v->pos++]);
    case 'r': NEED(4); v->pos += 4; return memo_put(v, le(v->b + v->pos - 4, 4));
    case 'j': NEED(4); v->pos += 4; return memo_get(v, le(v->b + v->pos - 4, 4));
    case 0x94: {
        size_t k = 0;
        while (k < v->memo_cap && v->memo[k]) k++;
        return memo_put(v, k);
    }
    default: {
        char hex[8];
        snprintf(hex, sizeof hex, "0x%02x", op);
        return fail(v, "opcode %s is not one a weights file uses", hex);
    }
    }
#undef NEED
#undef POP
}

swin_status swin_pickle_load(const unsigned char *buf, size_t len, const char *what, struct swin_pickle *p, swin_error *err)
{
    memset(p, 0, sizeof *p);
    struct vm v = {.b = buf, .len = len, .what = what, .p = p, .err = err};
    v.budget = len > (SIZE_MAX - BUDGET_BASE) / BUDGET_PER_BYTE ? SIZE_MAX : BUDGET_BASE + BUDGET_PER_BYTE * len;
    bool stop = false;
    swin_status st = SWIN_OK;
    while (!st && !stop) {
        if (v.pos >= len) {
            v.op_at = len;
            st = fail(&v, "the pickle ends without STOP%s", NULL);
            break;
        }
        st = step(&v, &stop);
    }
    if (!st && (v.sp != 1 || v.nmarks)) {
        v.op_at = v.pos ? v.pos - 1 : 0;
        st = fail(&v, "STOP with a stack that does not hold exactly one value%s", NULL);
    }
    if (!st) p->root = v.stack[0];
    free(v.stack);
    free(v.memo);
    if (st) swin_pickle_free(p);
    return st;
}

void swin_pickle_free(struct swin_pickle *p)
{
    for (struct pk_value *x = p->all, *nx; x; x = nx) {
        nx = x->next_alloc;
        free(x->items);
        free(x->size);
        if (x->kind != PK_STORAGE) free(x->s);
        free(x);
    }
    memset(p, 0, sizeof *p);
}

const struct pk_value *swin_pickle_dict_get(const struct pk_value *d, const char *key)
{
    if (!d || d->kind != PK_DICT) return NULL;
    for (size_t i = d->n; i >= 2; i -= 2)
        if (d->items[i - 2]->kind == PK_STR && !strcmp(d->items[i - 2]->s, key)) return d->items[i - 1];
    return NULL;
}

const char *swin_pickle_dtype_name(enum pk_dtype t)
{
    static const char *const n[] = {"float32", "float16", "bfloat16", "float64", "int64", "int32", "int16", "int8", "uint8", "bool", "?"};
    return n[t <= PK_DTYPE_UNKNOWN ? t : PK_DTYPE_UNKNOWN];
}

size_t swin_pickle_dtype_size(enum pk_dtype t)
{
    static const size_t s[] = {4, 2, 2, 8, 8, 4, 2, 1, 1, 1, 0};
    return s[t <= PK_DTYPE_UNKNOWN ? t : PK_DTYPE_UNKNOWN];
}
