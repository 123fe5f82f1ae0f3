/* swin_onnx_load_opts: a forced patch-merging order replaces the one read from the graph and
 * changes nothing else.
 *
 *   test_load_opts model.onnx   (a MONAI >= 1.5 'merging' export) */
#include <stdio.h>
#include <string.h>

#include "tests/common/check.h"
#include "weights/onnx/onnx_loader.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_load_opts model.onnx\n");
        return 2;
    }
    struct swin_model a, b;
    swin_error err = {SWIN_OK, ""};
    bool ok = check_true("default load", swin_onnx_load(argv[1], &a, &err) == SWIN_OK);
    ok &= check_true("graph order is MONAI >= 1.5", a.cfg.merge_kind == SWIN_MERGE_V15);
    struct swin_onnx_load_opts opts = {.merge_order = swin_merge_order_pre15};
    ok &= check_true("load with merge_order = pre15", swin_onnx_load_opts(argv[1], &opts, &b, &err) == SWIN_OK);
    if (!ok) {
        fprintf(stderr, "  %s\n", err.msg);
        return test_exit(false);
    }
    ok &= check_true("forced order is used and classified",
                     b.cfg.merge_kind == SWIN_MERGE_PRE15 && !memcmp(b.cfg.merge_order, swin_merge_order_pre15, sizeof(swin_merge_order)));
    b.cfg.merge_kind = a.cfg.merge_kind;
    memcpy(b.cfg.merge_order, a.cfg.merge_order, sizeof(swin_merge_order));
    ok &= check_true("config otherwise identical", !memcmp(&a.cfg, &b.cfg, sizeof a.cfg));
    ok &= check_true("weights identical", a.flat_bytes == b.flat_bytes && !memcmp(a.flat, b.flat, a.flat_bytes));
    swin_model_release(&a);
    swin_model_release(&b);
    return test_exit(ok);
}
