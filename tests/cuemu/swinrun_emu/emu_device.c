/* swinrun_emu only: the CUDA backend runs on the emulator (tests/cuemu), which counts every
 * byte of device memory. A CUDA context allocates its weights, its fixed scratch and the
 * planned arena, and a segmentation blended on the device one ring per volume, and nothing
 * else, so after a run the emulated device's high-water mark must equal the plan's total and
 * the largest ring: a kernel wrapper that allocates behind the plan's back, or a plan that
 * under-counts, shows up here. */
#include <stdio.h>

#include "tests/cuemu/cuemu_api.h"
#include "apps/cli/cli.h"

swin_status cli_emu_check_device_bytes(const swin_plan_info *p, size_t ring_bytes, swin_error *err)
{
    size_t high = cuemu_mem_high_water();
    if (high != p->total_bytes + ring_bytes)
        return swin_error_set(err, SWIN_ERR_BACKEND,
                              "the emulated device's high-water mark is %zu bytes, but the plan says %zu "
                              "(weights %zu + arena %zu + scratch %zu + ring %zu)",
                              high, p->total_bytes + ring_bytes, p->weight_bytes, p->arena_bytes, p->context_bytes,
                              ring_bytes);
    fprintf(stderr, "swinrun: emulated device high-water %zu bytes = planned total (weights + arena + scratch%s)\n",
            high, ring_bytes ? " + ring" : "");
    return SWIN_OK;
}
