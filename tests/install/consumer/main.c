/* A product embedding swinrun, built against the installed tree only: loads a model, makes
 * a CPU context and segments a small in-memory volume through the public API.
 *     consumer MODEL.onnx
 * Checks: every label is a class of the model, the report counts the cubes it ran, and the
 * voxels of a bright sphere do not all get the label of the dark background (the labels
 * depend on the intensities). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <swinrun.h>

enum { NX = 24, NY = 20, NZ = 16, N = NX * NY * NZ };

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    swin_error err = {0};
    swin_model_t *model = NULL;
    swin_context_t *ctx = NULL;
    swin_context_params cp = swin_context_default_params();
    cp.backend = SWIN_BACKEND_CPU;
    cp.threads = 1;
    if (swin_model_load(argv[1], &model, &err) || swin_context_create(model, &cp, &ctx, &err)) {
        fprintf(stderr, "consumer: %s (%s)\n", err.msg, swin_status_name(err.status));
        return 1;
    }
    swin_model_info mi;
    swin_model_get_info(model, &mi);
    static float hu[N];
    static uint16_t labels[N];
    for (int k = 0; k < NZ; k++)
        for (int j = 0; j < NY; j++)
            for (int i = 0; i < NX; i++) {
                int di = i - NX / 2, dj = j - NY / 2, dk = k - NZ / 2;
                hu[i + NX * (j + NY * k)] = di * di + dj * dj + dk * dk < 36 ? 300.0f : -900.0f;
            }
    swin_volume v = {.voxels = hu, .type = SWIN_VOXELS_F32, .dim = {NX, NY, NZ},
                     .affine = {{2, 0, 0, 0}, {0, 2, 0, 0}, {0, 0, 2.5, 0}, {0, 0, 0, 1}}};
    swin_segment_params sp = swin_segment_default_params();
    swin_segment_report rep;
    swin_status st = swin_segment(ctx, &v, &sp, labels, NULL, &rep, &err);
    if (st) {
        fprintf(stderr, "consumer: %s\n", err.msg);
        return 1;
    }
    int bad = 0, differ = 0;
    const int centre = NX / 2 + NX * (NY / 2 + NY * (NZ / 2));
    for (int i = 0; i < N; i++) {
        bad += labels[i] >= mi.out_channels;
        differ += labels[i] != labels[0];
    }
    printf("consumer: %d classes, %lld cubes, backend %s, centre label %d, corner label %d, %d voxels differ "
           "from the corner\n",
           mi.out_channels, rep.cubes, rep.plan.backend_reason, labels[centre], labels[0], differ);
    swin_context_free(ctx);
    swin_model_free(model);
    return bad == 0 && rep.cubes > 0 && differ > 0 ? 0 : 1;
}
