/* swin_ckpt_load's options: the patch-merging order and normalize, which a state dict cannot
 * tell, replace MONAI's defaults and change nothing else.
 *
 *   test_ckpt_opts model.pt   (a default SwinUNETR's state dict) */
#include <stdio.h>
#include <string.h>

#include "tests/common/check.h"
#include "weights/checkpoint/ckpt_loader.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_ckpt_opts model.pt\n");
        return 2;
    }
    struct swin_model a, b;
    swin_error err = {SWIN_OK, ""};
    bool ok = check_true("default load", swin_ckpt_load(argv[1], NULL, &a, &err) == SWIN_OK);
    ok &= check_true("defaults: MONAI >= 1.5 merging, normalize", ok && a.cfg.merge_kind == SWIN_MERGE_V15 && a.cfg.normalize &&
                     !memcmp(a.cfg.merge_order, swin_merge_order_v15, sizeof(swin_merge_order)));
    struct swin_ckpt_load_opts opts = {.merge = SWIN_MERGE_PRE15, .no_normalize = true};
    ok &= check_true("load with pre15 order, no normalize", swin_ckpt_load(argv[1], &opts, &b, &err) == SWIN_OK);
    if (!ok) {
        fprintf(stderr, "  %s\n", err.msg);
        return test_exit(false);
    }
    ok &= check_true("options used", b.cfg.merge_kind == SWIN_MERGE_PRE15 && !b.cfg.normalize &&
                     !memcmp(b.cfg.merge_order, swin_merge_order_pre15, sizeof(swin_merge_order)));
    ok &= check_true("provenance names them options", strstr(b.source.post, "normalize: option, downsample: option") != NULL);
    b.cfg.merge_kind = a.cfg.merge_kind;
    b.cfg.normalize = a.cfg.normalize;
    memcpy(b.cfg.merge_order, a.cfg.merge_order, sizeof(swin_merge_order));
    ok &= check_true("config otherwise identical", !memcmp(&a.cfg, &b.cfg, sizeof a.cfg));
    ok &= check_true("weights identical", a.flat_bytes == b.flat_bytes && !memcmp(a.flat, b.flat, a.flat_bytes));
    swin_model_release(&a);
    swin_model_release(&b);
    return test_exit(ok);
}
