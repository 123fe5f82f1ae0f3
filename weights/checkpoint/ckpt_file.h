/* A weights file as a state dict: a PyTorch checkpoint (the zip torch.save writes,
 * torch_zip.c), a TorchScript module (the zip torch.jit.save writes: the module's parameters
 * and buffers, torch_zip.c), a torch.export archive (.pt2, pt2.c) or a .safetensors file
 * (safetensors.c), told apart by content. Either way the
 * result is the state dict's entries with their keys (a DataParallel `module.` or a
 * Lightning `model.`/`net.` prefix stripped), each a tensor record pointing at its storage
 * in the file, checked to lie inside it; payloads are read later, straight from the file. */
#ifndef SWIN_WEIGHTS_CKPT_FILE_H
#define SWIN_WEIGHTS_CKPT_FILE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/json.h"
#include "core/model.h"
#include "weights/onnx/onnx_file.h"
#include "weights/checkpoint/pickle.h"
#include "weights/checkpoint/zip_reader.h"

struct swin_ckpt_tensor {
    const char *key;              /* with the prefix stripped */
    const char *placeholder;      /* not a tensor: the global the pickle named instead ("" for plain values) */
    enum pk_dtype dtype;
    int ndim;
    int64_t size[PK_MAX_RANK], stride[PK_MAX_RANK];
    uint64_t numel;
    int64_t offset;               /* elements into the storage */
    uint64_t storage_off;         /* the storage's first byte in the file */
    uint64_t storage_numel;       /* elements the storage holds (inside the file) */
};

struct swin_ckpt_file {
    const char *path;
    int fd;
    uint64_t size;
    char format[96];              /* "PyTorch checkpoint (torch.save zip)", "TorchScript module (...)" or "safetensors" */
    char where[128];              /* where the state dict sat and which prefix was stripped */
    struct swin_ckpt_tensor *t;
    int n;
    /* What a module's classes and attributes tell (torch_zip.c), -1 where the file does not say:
     * SwinUNETR.normalize, and whether its patch merging is PatchMergingV2 (1) or PatchMerging (0:
     * MONAI >= 1.5 or < 1.5, which the class name cannot tell apart); says_group_norm: 1 when a
     * submodule is a GroupNorm (norm_name='group', whose state dict keys are affine instance
     * norm's), 0 when none is and some is an InstanceNorm3d or BatchNorm3d; says_norm_groups: the
     * pickled GroupNorms' num_groups (0: not kept, as in a TorchScript module whose code does not
     * say it; -1: they differ). */
    int says_normalize, says_merging_v2, says_group_norm, says_norm_groups;
    const char *says_source;      /* what said them: "the pickled module", "the exported graph", "the TorchScript module" */
    bool says_order;              /* the graph or code gave its patch merging's sub-grid order (pt2.c, ts_code.c) */
    swin_merge_order order;
    int says_cube[3];             /* the graph's static input or the traced input (D, H, W); 0 where not said */
    /* owned */
    struct swin_zip zip;
    struct swin_pickle pk;
    json_node *json;
    char *module_keys;            /* the keys of a state dict walked from a module (torch_zip.c) */
};

enum swin_weights_kind {
    SWIN_WEIGHTS_ONNX,          /* anything not recognised below: the ONNX loader judges it */
    SWIN_WEIGHTS_TORCH_ZIP,     /* starts with a zip local header */
    SWIN_WEIGHTS_TORCH_LEGACY,  /* a bare pickle or a tar: torch.save before PyTorch 1.6 */
    SWIN_WEIGHTS_SAFETENSORS,   /* an 8-byte header length that fits the file, then '{' */
};

/* What the first bytes of the file at path say it is (unreadable: ONNX, whose loader reports it). */
enum swin_weights_kind swin_weights_kind_of(const char *path);

/* Opens a PyTorch checkpoint or a safetensors file. On error everything is freed, c zeroed. */
swin_status swin_ckpt_open(const char *path, struct swin_ckpt_file *c, swin_error *err);
void swin_ckpt_close(struct swin_ckpt_file *c);

/* The entry of key (prefix stripped), NULL when absent. */
const struct swin_ckpt_tensor *swin_ckpt_find(const struct swin_ckpt_file *c, const char *key);

/* A tensor of a floating-point dtype as the layout code reads it (weights/onnx/layout.h): a
 * contiguous one points at its bytes in the file; a strided one is gathered into *buf (the
 * caller frees it; it is never larger than the storage). f is the file as the layout code
 * sees it (swin_ckpt_as_onnx_file). */
swin_status swin_ckpt_tensor_view(const struct swin_ckpt_file *c, const struct swin_ckpt_tensor *t, struct swin_onnx_tensor *out,
                                  void **buf, swin_error *err);
/* All elements of an integer tensor as int64 (t->numel values). */
swin_status swin_ckpt_read_i64(const struct swin_ckpt_file *c, const struct swin_ckpt_tensor *t, int64_t *dst, swin_error *err);
/* Its float elements as float32 (t->numel values). */
swin_status swin_ckpt_read_f32(const struct swin_ckpt_file *c, const struct swin_ckpt_tensor *t, float *dst, swin_error *err);

/* The file as weights/onnx/layout.c reads payloads from it: files[0] = the checkpoint. */
void swin_ckpt_as_onnx_file(const struct swin_ckpt_file *c, struct swin_onnx_file *f, struct swin_onnx_side_file *side);

/* Used by torch_zip.c and safetensors.c: fill c->t, c->n, c->format, c->where. */
swin_status swin_torch_zip_read(struct swin_ckpt_file *c, swin_error *err);
swin_status swin_safetensors_read(struct swin_ckpt_file *c, swin_error *err);
/* torch_zip.c found ARCHIVE/data/weights/model_weights_config.json (config): a torch.export
 * archive (pt2.c); prefix is "ARCHIVE/", c->zip open. */
/* A TorchScript archive's ARCHIVE/code/ and ARCHIVE/traced_inputs.pkl (prefix "ARCHIVE/"):
 * fills the says_* its module's pickled attributes left open, and says_cube (ts_code.c);
 * what it cannot read says nothing. */
void swin_ts_code_read(struct swin_ckpt_file *c, const char *prefix);
swin_status swin_pt2_read(struct swin_ckpt_file *c, const char *prefix, const struct swin_zip_entry *config,
                          swin_error *err);

#endif
