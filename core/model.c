#include "core/model.h"

#include <stdlib.h>

#include "core/big_alloc.h"

const swin_merge_order swin_merge_order_v15 = {
    {0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 0}, {1, 0, 1}, {0, 1, 1}, {1, 1, 1}};
/* MONAI 0.9-1.4: positions 2/5 and 3/6 repeat offsets; (1,1,0) and (0,1,1) are never used. */
const swin_merge_order swin_merge_order_pre15 = {
    {0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 0, 1}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}};
const swin_merge_order swin_merge_order_v2 = {
    {0, 0, 0}, {0, 0, 1}, {0, 1, 0}, {0, 1, 1}, {1, 0, 0}, {1, 0, 1}, {1, 1, 0}, {1, 1, 1}};

const char *swin_merge_kind_name(enum swin_merge_kind k)
{
    switch (k) {
    case SWIN_MERGE_V15: return "merging (MONAI >= 1.5 order)";
    case SWIN_MERGE_PRE15: return "merging (MONAI < 1.5 order, duplicated offsets)";
    case SWIN_MERGE_V2: return "mergingv2";
    case SWIN_MERGE_OTHER: return "custom sub-grid order";
    }
    return "unknown";
}

void swin_model_release(struct swin_model *m)
{
    if (!m) return;
    swin_big_free(m->flat);
    free(m->recipe);
    m->flat = NULL;
    m->recipe = NULL;
    m->flat_bytes = 0;
}
