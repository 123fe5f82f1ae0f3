/* The zip torch.save writes (PyTorch >= 1.6): ARCHIVE/data.pkl (the pickled object),
 * ARCHIVE/data/KEY (one storage each, raw little-endian elements), ARCHIVE/byteorder,
 * ARCHIVE/version. The state dict is found in the pickle's inert tree (pickle.h), or made from
 * a whole module torch.save(model) pickled. The zip torch.jit.save writes has the same records
 * plus ARCHIVE/code/ (the TorchScript source, read as text by ts_code.c) and
 * ARCHIVE/constants.pkl; its data.pkl is the module, walked into a state dict the same way. */
#include "weights/checkpoint/ckpt_file.h"
#include "core/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAIL(st, ...) swin_error_set(err, st, __VA_ARGS__)

static bool has_tensors(const struct pk_value *d)
{
    if (!d || d->kind != PK_DICT) return false;
    for (size_t i = 1; i < d->n; i += 2)
        if (d->items[i]->kind == PK_TENSOR) return true;
    return false;
}

/* The state dict: the top level, or under one of the keys training code saves it as
 * (one or two levels down, e.g. Lightning's {"state_dict": ...}, {"model": {"state_dict": ...}}). */
static const struct pk_value *find_state_dict(const struct pk_value *root, char *where, size_t cap)
{
    static const char *const keys[] = {"state_dict", "model", "network", "net", "module", "model_state_dict", "model_state",
                                       "state"};
    if (has_tensors(root)) {
        snprintf(where, cap, "the top level");
        return root;
    }
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const struct pk_value *d = swin_pickle_dict_get(root, keys[i]);
        if (has_tensors(d)) {
            snprintf(where, cap, "['%s']", keys[i]);
            return d;
        }
        for (size_t j = 0; d && j < sizeof keys / sizeof *keys; j++) {
            const struct pk_value *e = swin_pickle_dict_get(d, keys[j]);
            if (has_tensors(e)) {
                snprintf(where, cap, "['%s']['%s']", keys[i], keys[j]);
                return e;
            }
        }
    }
    return NULL;
}

/* The first value of dict d (or of a dict under one of its keys) that is an unknown global
 * or the placeholder of calling one, where a tensor of a state dict would be; its key in key. */
static const struct pk_value *find_placeholder(const struct pk_value *d, const char **key, int depth)
{
    for (size_t i = 1; d && d->kind == PK_DICT && i < d->n; i += 2) {
        const struct pk_value *v = d->items[i];
        if (v->kind == PK_OBJECT || v->kind == PK_GLOBAL) {
            *key = d->items[i - 1]->kind == PK_STR ? d->items[i - 1]->s : "?";
            return v;
        }
        const struct pk_value *w = depth ? find_placeholder(v, key, depth - 1) : NULL;
        if (w) return w;
    }
    return NULL;
}

static swin_status no_state_dict(const struct swin_ckpt_file *c, const struct pk_value *root, swin_error *err)
{
    if (root->kind == PK_OBJECT || root->kind == PK_GLOBAL)
        return FAIL(SWIN_ERR_MODEL, "%s: holds a pickled '%s' object, not a state dict (swinrun runs nothing from a pickle): save "
                    "model.state_dict() instead", c->path, root->s);
    const char *key = NULL;
    const struct pk_value *ph = find_placeholder(root, &key, 2);
    if (ph)
        return FAIL(SWIN_ERR_MODEL, "%s: '%s' holds a pickled '%s' %s where a state dict has tensors (swinrun runs nothing "
                    "from a pickle): save model.state_dict() instead", c->path, key, ph->s,
                    ph->kind == PK_OBJECT ? "call" : "global");
    char keys[200] = "";
    size_t o = 0;
    for (size_t i = 0; root->kind == PK_DICT && i < root->n && o < sizeof keys - 1; i += 2)
        if (root->items[i]->kind == PK_STR) o += (size_t)snprintf(keys + o, sizeof keys - o, "%s'%s'", i ? ", " : "", root->items[i]->s);
    return FAIL(SWIN_ERR_MODEL, "%s: no state dict (a dict of tensors) at the top level or under 'state_dict', 'model', "
                "'network', 'net' or 'module'%s%s%s", c->path, root->kind == PK_DICT ? " (top-level keys: " : "", keys,
                root->kind == PK_DICT ? ")" : "");
}

static swin_status read_entry(const struct swin_ckpt_file *c, const struct swin_zip_entry *e, unsigned char **out, swin_error *err)
{
    unsigned char *b = malloc((size_t)(e->size ? e->size : 1));
    if (!b) return FAIL(SWIN_ERR_NOMEM, "%s: out of host memory reading '%s'", c->path, e->name);
    swin_status st = swin_zip_read(&c->zip, e, 0, (size_t)e->size, b, err);
    if (st) free(b);
    else *out = b;
    return st;
}

/* One state dict entry: key and its value, a tensor whose storage is ARCHIVE/data/KEY (prefix
 * is "ARCHIVE/"), or a placeholder. c->t has room for it. */
static swin_status add_entry(struct swin_ckpt_file *c, const char *prefix, const char *key, const struct pk_value *v,
                             swin_error *err)
{
    struct swin_ckpt_tensor *t = &c->t[c->n++];
    t->key = key;
    if (v->kind != PK_TENSOR) {
        t->placeholder = v->kind == PK_OBJECT || v->kind == PK_GLOBAL ? v->s : "";
        return SWIN_OK;
    }
    const struct pk_value *s = v->storage;
    t->dtype = s->dtype;
    t->ndim = v->ndim;
    memcpy(t->size, v->size, sizeof t->size);
    memcpy(t->stride, v->stride, sizeof t->stride);   /* PK_MAX_RANK each */
    t->offset = v->offset;
    char name[600];
    snprintf(name, sizeof name, "%sdata/%s", prefix, s->s);
    const struct swin_zip_entry *e = swin_zip_find(&c->zip, name);
    if (!e) return FAIL(SWIN_ERR_FORMAT, "%s: tensor '%s' names storage '%s', which the archive lacks", c->path, t->key, s->s);
    if (e->method)
        return FAIL(SWIN_ERR_FORMAT, "%s: storage '%s' is compressed (method %d); torch.save stores entries uncompressed", c->path,
                    s->s, e->method);
    size_t es = swin_pickle_dtype_size(s->dtype);
    if ((uint64_t)s->i > e->size / es)
        return FAIL(SWIN_ERR_FORMAT, "%s: storage '%s' claims %lld %s elements but its record holds %llu bytes", c->path, s->s,
                    (long long)s->i, swin_pickle_dtype_name(s->dtype), (unsigned long long)e->size);
    t->storage_off = e->data_off;
    t->storage_numel = (uint64_t)s->i;
    return SWIN_OK;
}

/* A module as data.pkl holds it, walked into a state dict; two forms:
 * - TorchScript (torch.jit.save of a traced or scripted module): an object of a `__torch__.*`
 *   class whose state (pickle.h) is the dict of its attributes: parameters and buffers as
 *   tensors, submodules as such objects again, plain values beside them;
 * - a whole torch.nn.Module pickled by torch.save(model): an object of the model's class whose
 *   state is its __dict__: tensors in `_parameters` and `_buffers` (less the names in
 *   `_non_persistent_buffers_set`, a pickled set), submodules in `_modules`.
 * Either way a ModuleList's or Sequential's submodules are named "0", "1", ..., and each tensor
 * by its attribute path (swinViT.layers1.0.blocks.1.attn.qkv.weight), as Module.state_dict()
 * names it. Run twice: once counting entries and key bytes, once filling c->t and the keys. A
 * pickle can nest an object in itself (its memo), so the walk stops at a depth and a count. */
enum { WALK_MAX_DEPTH = 32, WALK_MAX_PATHS = 1 << 20, WALK_MAX_KEY = 1024 };

enum module_form { NOT_A_MODULE, SCRIPT_MODULE, PICKLED_MODULE };

struct module_walk {
    struct swin_ckpt_file *c;
    const char *prefix;   /* "ARCHIVE/" */
    char *keys;           /* NULL while counting */
    size_t key_bytes, entries, paths;
    char path[WALK_MAX_KEY];
};

static enum module_form module_form(const struct pk_value *v)
{
    if (v->kind != PK_OBJECT || !v->state || v->state->kind != PK_DICT) return NOT_A_MODULE;
    const struct pk_value *m = swin_pickle_dict_get(v->state, "_modules"), *p = swin_pickle_dict_get(v->state, "_parameters");
    if (m && p && m->kind == PK_DICT && p->kind == PK_DICT) return PICKLED_MODULE;
    return strncmp(v->s, "__torch__.", 10) ? NOT_A_MODULE : SCRIPT_MODULE;
}

static swin_status walk_module(struct module_walk *w, const struct pk_value *m, size_t len, int depth, swin_error *err);

/* The value v of attribute name, its path so far w->path[0, len): a tensor becomes an entry, a
 * module is walked, anything else is skipped. */
static swin_status visit(struct module_walk *w, const char *name, const struct pk_value *v, size_t len, int depth,
                         swin_error *err)
{
    struct swin_ckpt_file *c = w->c;
    bool sub = module_form(v) != NOT_A_MODULE;
    if (v->kind != PK_TENSOR && !sub) return SWIN_OK;
    if (depth >= WALK_MAX_DEPTH)
        return FAIL(SWIN_ERR_FORMAT, "%s: a module with submodules nested over %d deep: not a model's module tree", c->path,
                    WALK_MAX_DEPTH);
    if (++w->paths > WALK_MAX_PATHS)
        return FAIL(SWIN_ERR_FORMAT, "%s: a module tree with over %d attribute paths: not a model's module tree", c->path,
                    WALK_MAX_PATHS);
    size_t kl = strlen(name);
    if (len + kl + 2 > sizeof w->path)
        return FAIL(SWIN_ERR_FORMAT, "%s: a module attribute path over %d characters (%.60s...)", c->path, WALK_MAX_KEY,
                    w->path);
    memcpy(w->path + len, name, kl);
    if (sub) {
        w->path[len + kl] = '.';
        return walk_module(w, v, len + kl + 1, depth + 1, err);
    }
    w->path[len + kl] = 0;
    if (w->keys) {
        char *key = memcpy(w->keys + w->key_bytes, w->path, len + kl + 1);
        swin_status st = add_entry(c, w->prefix, key, v, err);
        if (st) return st;
    }
    w->key_bytes += len + kl + 1;
    w->entries++;
    return SWIN_OK;
}

/* Whether name is in a pickled set (builtins.set called on a list of strings). */
static bool in_pickled_set(const struct pk_value *set, const char *name)
{
    if (!set || set->kind != PK_OBJECT || set->n != 1 || set->items[0]->kind != PK_LIST) return false;
    const struct pk_value *l = set->items[0];
    for (size_t i = 0; i < l->n; i++)
        if (l->items[i]->kind == PK_STR && !strcmp(l->items[i]->s, name)) return true;
    return false;
}

/* What module m's class and attributes say of the configuration (struct swin_ckpt_file). */
static void note_config(struct swin_ckpt_file *c, const struct pk_value *m)
{
    const char *dot = strrchr(m->s, '.'), *cls = dot ? dot + 1 : m->s;
    const struct pk_value *nz = swin_pickle_dict_get(m->state, "normalize");
    if (!strcmp(cls, "SwinUNETR") && nz && nz->kind == PK_BOOL) c->says_normalize = nz->i != 0;
    if (!strcmp(cls, "PatchMergingV2")) c->says_merging_v2 = 1;
    if (!strcmp(cls, "GroupNorm")) {
        const struct pk_value *g = swin_pickle_dict_get(m->state, "num_groups");
        const int groups = g && g->kind == PK_INT && g->i >= 1 && g->i <= SWIN_MAX_NORM_GROUPS ? (int)g->i : 0;
        if (c->says_group_norm != 1) c->says_norm_groups = groups;
        else if (c->says_norm_groups != groups) c->says_norm_groups = -1;
        c->says_group_norm = 1;
    }
    if ((!strcmp(cls, "InstanceNorm3d") || !strcmp(cls, "BatchNorm3d")) && c->says_group_norm < 0) c->says_group_norm = 0;
    if (!strcmp(cls, "PatchMerging") && c->says_merging_v2 < 0) c->says_merging_v2 = 0;
}

static swin_status walk_module(struct module_walk *w, const struct pk_value *m, size_t len, int depth, swin_error *err)
{
    swin_status st = SWIN_OK;
    const struct pk_value *d = m->state;
    note_config(w->c, m);
    if (module_form(m) == SCRIPT_MODULE) {
        for (size_t i = 0; i + 1 < d->n && !st; i += 2)
            if (d->items[i]->kind == PK_STR) st = visit(w, d->items[i]->s, d->items[i + 1], len, depth, err);
        return st;
    }
    static const char *const groups[] = {"_parameters", "_buffers", "_modules"};
    const struct pk_value *transient = swin_pickle_dict_get(d, "_non_persistent_buffers_set");
    for (int g = 0; g < 3 && !st; g++) {
        const struct pk_value *e = swin_pickle_dict_get(d, groups[g]);
        for (size_t i = 0; e && e->kind == PK_DICT && i + 1 < e->n && !st; i += 2) {
            const struct pk_value *k = e->items[i], *v = e->items[i + 1];
            if (k->kind != PK_STR || (g == 1 && in_pickled_set(transient, k->s))) continue;
            if ((g == 2) == (v->kind == PK_TENSOR)) continue;   /* tensors from the first two, modules from the last */
            st = visit(w, k->s, v, len, depth, err);
        }
    }
    return st;
}

/* The state dict of module object root (module_form: not NOT_A_MODULE). */
static swin_status read_module(struct swin_ckpt_file *c, const char *prefix, const struct pk_value *root, swin_error *err)
{
    struct module_walk *w = calloc(1, sizeof *w);
    if (!w) return FAIL(SWIN_ERR_NOMEM, "%s: out of host memory", c->path);
    w->c = c;
    w->prefix = prefix;
    swin_status st = walk_module(w, root, 0, 0, err);
    if (!st && !w->entries)
        st = FAIL(SWIN_ERR_MODEL, "%s: a module ('%s') without parameters or buffers", c->path, root->s);
    if (!st && (!(c->t = calloc(w->entries, sizeof *c->t)) || !(c->module_keys = malloc(w->key_bytes))))
        st = FAIL(SWIN_ERR_NOMEM, "%s: out of host memory", c->path);
    if (!st) {
        w->keys = c->module_keys;
        w->key_bytes = w->entries = w->paths = 0;
        st = walk_module(w, root, 0, 0, err);
    }
    free(w);
    return st;
}

static swin_status read_script(struct swin_ckpt_file *c, const char *prefix, swin_error *err)
{
    const struct pk_value *root = c->pk.root;
    if (module_form(root) != SCRIPT_MODULE)
        return FAIL(SWIN_ERR_MODEL, "%s: a TorchScript archive (torch.jit.save) whose data.pkl is not a module (%s): "
                    "save the model's state_dict() with torch.save, or export it to ONNX", c->path,
                    root->kind == PK_OBJECT || root->kind == PK_GLOBAL ? root->s : "a plain value");
    snprintf(c->format, sizeof c->format, "TorchScript module (torch.jit.save)");
    c->says_source = "the TorchScript module";
    snprintf(c->where, sizeof c->where, "the attributes of module '%s'", root->s + 10);
    swin_status st = read_module(c, prefix, root, err);
    if (!st) swin_ts_code_read(c, prefix);
    return st;
}

/* A whole module torch.save(model) pickled: the top level, or under one of the keys a state
 * dict sits under (find_state_dict); where says which. */
static const struct pk_value *find_pickled_module(const struct pk_value *root, char *where, size_t cap)
{
    static const char *const keys[] = {"model", "network", "net", "module", "state_dict"};
    if (module_form(root) == PICKLED_MODULE) {
        snprintf(where, cap, "the pickled module '%.80s'", root->s);
        return root;
    }
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const struct pk_value *m = swin_pickle_dict_get(root, keys[i]);
        if (m && module_form(m) == PICKLED_MODULE) {
            snprintf(where, cap, "['%s'], the pickled module '%.80s'", keys[i], m->s);
            return m;
        }
    }
    return NULL;
}

swin_status swin_torch_zip_read(struct swin_ckpt_file *c, swin_error *err)
{
    swin_status st = swin_zip_open(c->path, c->fd, c->size, &c->zip, err);
    if (st) return st;
    const struct swin_zip_entry *pkl = NULL;
    for (int i = 0; i < c->zip.n; i++) {
        const char *nm = c->zip.entries[i].name, *sl = strchr(nm, '/');
        if (sl && !strcmp(sl, "/data.pkl")) {
            if (pkl) return FAIL(SWIN_ERR_FORMAT, "%s: a zip with two data.pkl records ('%s', '%s')", c->path, pkl->name, nm);
            pkl = &c->zip.entries[i];
        }
    }
    if (!pkl) {
        for (int i = 0; i < c->zip.n; i++) { /* torch.export.save's archive: ARCHIVE/data/weights/... */
            const char *nm = c->zip.entries[i].name, *sl = strchr(nm, '/');
            if (sl && !strcmp(sl, "/data/weights/model_weights_config.json")) {
                char prefix[512];
                size_t pn = (size_t)(sl - nm) + 1;
                if (pn >= sizeof prefix) return FAIL(SWIN_ERR_FORMAT, "%s: archive name too long", c->path);
                memcpy(prefix, nm, pn);
                prefix[pn] = 0;
                return swin_pt2_read(c, prefix, &c->zip.entries[i], err);
            }
        }
        for (int i = 0; i < c->zip.n; i++) {
            const char *nm = c->zip.entries[i].name, *sl = strchr(nm, '/');
            if (sl && !strcmp(sl, "/serialized_exported_program.json"))
                return FAIL(SWIN_ERR_MODEL, "%s: a torch.export archive in the older layout (it holds '%s'), which "
                            "swinrun does not read: save it again with torch.export.save of a current PyTorch (the "
                            "PT2 archive format), or save the state dict (torch.save(model.state_dict(), f))", c->path, nm);
            if (sl && !strncmp(sl, "/data/aotinductor/", 18))
                return FAIL(SWIN_ERR_MODEL, "%s: an AOTInductor package (it holds '%s'): compiled code, which swinrun "
                            "does not run; give the torch.export.save archive or the state dict instead", c->path, nm);
        }
        for (int i = 0; i < c->zip.n; i++) {
            const char *nm = c->zip.entries[i].name, *cf = strstr(nm, "configs/metadata.json");
            if (cf && (cf == nm || cf[-1] == '/') && !cf[strlen("configs/metadata.json")])
                return FAIL(SWIN_ERR_MODEL, "%s: a MONAI bundle zipped (it holds '%s'): unzip it and give the bundle's folder "
                            "(the one holding configs/ and models/)", c->path, nm);
        }
        return FAIL(SWIN_ERR_FORMAT, "%s: a zip archive without ARCHIVE/data.pkl: not a file torch.save wrote", c->path);
    }
    char prefix[512], name[600];
    size_t pn = (size_t)(strchr(pkl->name, '/') - pkl->name) + 1;
    if (pn >= sizeof prefix) return FAIL(SWIN_ERR_FORMAT, "%s: archive name too long", c->path);
    memcpy(prefix, pkl->name, pn);
    prefix[pn] = 0;
    snprintf(name, sizeof name, "%sconstants.pkl", prefix);
    bool script = swin_zip_find(&c->zip, name) != NULL;
    for (int i = 0; i < c->zip.n && !script; i++)
        script = !strncmp(c->zip.entries[i].name, prefix, pn) && !strncmp(c->zip.entries[i].name + pn, "code/", 5);
    snprintf(name, sizeof name, "%sbyteorder", prefix);
    const struct swin_zip_entry *bo = swin_zip_find(&c->zip, name);
    if (bo) {
        char b[8] = "";
        if (bo->size > 7 || (st = swin_zip_read(&c->zip, bo, 0, (size_t)bo->size, b, err))) 
            return st ? st : FAIL(SWIN_ERR_FORMAT, "%s: unreadable byteorder record", c->path);
        if (strcmp(b, "little"))
            return FAIL(SWIN_ERR_MODEL, "%s: saved on a big-endian machine (byteorder '%s'); swinrun reads little-endian checkpoints",
                        c->path, b);
    }

    unsigned char *buf = NULL;
    if ((st = read_entry(c, pkl, &buf, err))) return st;
    char what[600];
    snprintf(what, sizeof what, "%s: %s", c->path, pkl->name);
    st = swin_pickle_load(buf, (size_t)pkl->size, what, &c->pk, err);
    free(buf);
    if (st) return st;
    if (script) return read_script(c, prefix, err);
    snprintf(c->format, sizeof c->format, "PyTorch checkpoint (torch.save zip)");
    const struct pk_value *sd = find_state_dict(c->pk.root, c->where, sizeof c->where);
    if (!sd) {
        const struct pk_value *m = find_pickled_module(c->pk.root, c->where, sizeof c->where);
        return m ? read_module(c, prefix, m, err) : no_state_dict(c, c->pk.root, err);
    }

    if (!(c->t = calloc(sd->n / 2 + 1, sizeof *c->t))) return FAIL(SWIN_ERR_NOMEM, "%s: out of host memory", c->path);
    for (size_t i = 0; i + 1 < sd->n && !st; i += 2)
        if (sd->items[i]->kind == PK_STR) st = add_entry(c, prefix, sd->items[i]->s, sd->items[i + 1], err);
    return st;
}
