/* swin_segment_plan (pipeline/segment_api.h): a segmentation's device bytes before it runs,
 * the ring of the volume's grid included. */
#include "pipeline/segment_api.h"

#include "formats/affine.h"
#include "formats/format.h"
#include "runtime/context.h"

swin_status swin_segment_plan(const swin_model_t *model, const swin_context_params *cp, const swin_segment_params *sp,
                              const long long dim[3], const double voxel_mm[3], swin_plan_info *out, swin_error *err)
{
    if (!model || !cp || !sp || !dim || !out)
        return swin_error_set(err, SWIN_ERR_ARG, "a model, its parameters, a volume size and a plan are required");
    if (!(sp->overlap >= 0 && sp->overlap <= SWIN_OVERLAP_MAX))
        return swin_error_set(err, SWIN_ERR_ARG, "overlap %g: it must be 0..%g", sp->overlap, SWIN_OVERLAP_MAX);
    struct swin_ring_request rq = {0};
    for (int k = 0; k < 3; k++) {
        if (dim[k] < 1 || dim[k] > SWIN_VOLUME_MAX_DIM)
            return swin_error_set(err, SWIN_ERR_SHAPE, "volume size %lld x %lld x %lld: each side must be 1..%d",
                                  dim[0], dim[1], dim[2], SWIN_VOLUME_MAX_DIM);
        rq.grid[k] = dim[k];
    }
    if (voxel_mm) {
        swin_mat4 affine = swin_mat4_identity();
        for (int k = 0; k < 3; k++) {
            if (!(voxel_mm[k] >= SWIN_SPACING_MIN_MM && voxel_mm[k] <= SWIN_SPACING_MAX_MM))
                return swin_error_set(err, SWIN_ERR_ARG, "voxel size %g mm: each must be %g..%g mm", voxel_mm[k],
                                      SWIN_SPACING_MIN_MM, SWIN_SPACING_MAX_MM);
            affine.m[k][k] = voxel_mm[k];
        }
        struct swin_grid g;
        char msg[256];
        if (!swin_resample_grid_plan(affine, rq.grid, sp->reorient, sp->resample ? sp->spacing_mm : NULL,
                                     SWIN_VOLUME_MAX_VOXELS, &g, msg, sizeof msg))
            return swin_error_set(err, SWIN_ERR_SHAPE, "volume %lld x %lld x %lld: %s", dim[0], dim[1], dim[2], msg);
        for (int k = 0; k < 3; k++) rq.grid[k] = g.dim[k];
    }
    swin_model_info mi;
    swin_model_get_info(model, &mi);
    rq.label_bytes = mi.out_channels <= 256 ? 1 : 2; /* the file form's */
    rq.probs = sp->probabilities_path || sp->invert == SWIN_INVERT_LINEAR;
    rq.overlap = sp->overlap;
    if (sp->blend_on != SWIN_BLEND_ON_HOST) return swin_model_plan_ring(model, cp, &rq, out, err);
    swin_status st = swin_model_plan(model, cp, out, err);
    for (int k = 0; !st && k < 3; k++) out->grid[k] = rq.grid[k];
    return st;
}
