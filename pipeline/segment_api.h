/* The segmentation API (pipeline/segment_api.c); a program includes swinrun.h, which includes this. */
#ifndef SWIN_PIPELINE_SEGMENT_API_H
#define SWIN_PIPELINE_SEGMENT_API_H

#include <stdint.h>

#include "../core/segment_params.h"
#include "../core/segment_report.h"
#include "../core/status.h"
#include "../runtime/api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Segmentation: a CT volume in, a label map on the same grid out ----------------------
 *
 *     swin_segment_params sp = swin_segment_default_params();   // RAS, 1.5x1.5x2 mm, [-175, 250] HU
 *     uint16_t *labels = malloc(nx * ny * nz * sizeof *labels);
 *     swin_volume v = {.voxels = hu, .type = SWIN_VOXELS_I16, .dim = {nx, ny, nz}, .affine = {...}};
 *     swin_segment(ctx, &v, &sp, labels, NULL, &report, &err);
 *
 * The pipeline is MONAI's usual inference recipe, reproduced to the voxel: Orientation to RAS,
 * Spacing to spacing_mm (trilinear), ScaleIntensityRange of the intensity range to [0, 1]
 * (clipped), sliding_window_inference with the context's cube as roi_size, and the result
 * brought back onto the input grid as Invertd does: by default argmax, then the labels by
 * nearest neighbour; with params->invert SWIN_INVERT_LINEAR the softmax probabilities by
 * trilinear interpolation, then argmax (streamed: a few planes of probabilities at a time).
 * A MONAI bundle's recipe: swin_model_segment_params. Host memory is planned
 * up front (report .pipeline_bytes): the sliding windows stream, holding one slab of logits. */

typedef enum swin_voxel_type { SWIN_VOXELS_F32 = 0, SWIN_VOXELS_I16 = 1 } swin_voxel_type;

/* A 3D scalar volume in memory, in NIfTI order: voxel (i, j, k) at i + nx * (j + ny * k). */
typedef struct swin_volume {
    const void *voxels;         /* nx * ny * nz values of `type`: intensities (HU for CT) */
    swin_voxel_type type;
    long long dim[3];           /* nx, ny, nz */
    double affine[4][4];        /* voxel (i, j, k, 1) -> world RAS+ mm (NIfTI's sform), row-major */
} swin_volume;


/* Segments a volume in memory with ctx's model (in_channels 1; several: swin_segment_channels).
 * labels: nx * ny * nz values on the input grid (the argmax class; a model with one output
 * channel: 1 where its sigmoid is >= 0.5, else 0; a multi-label run, SWIN_ACTIVATION_SIGMOID:
 * bit c set where channel c's sigmoid is >= 0.5). probabilities: NULL, or out_channels * nx *
 * ny * nz floats, class c's volume at c * nx * ny * nz (softmax, or the sigmoids, on the
 * input grid). The statistics in report are over the volume's intensities. report may be NULL. */
SWIN_API swin_status swin_segment(swin_context_t *ctx, const swin_volume *volume, const swin_segment_params *params,
                                  uint16_t *labels, float *probabilities, swin_segment_report *report,
                                  swin_error *err);

/* swin_segment for a model of several input channels (e.g. MRI sequences): channels[0..n-1],
 * in the order the model was trained with, each its own voxel type, all on one grid (the same
 * dim and affine, to 1e-3 mm); nchannels must be the model's in_channels. Each channel is
 * resampled and normalised on its own; the statistics are over channels[0]'s intensities. */
SWIN_API swin_status swin_segment_channels(swin_context_t *ctx, const swin_volume *channels, int nchannels,
                                           const swin_segment_params *params, uint16_t *labels,
                                           float *probabilities, swin_segment_report *report, swin_error *err);

/* A volume file in, the label map (uint8, uint16 beyond 256 classes) out on the input's grid
 * with its geometry: NIfTI-1/2 (.nii, .nii.gz) to NIfTI, MetaImage (.mha, .mhd) to .mha, NRRD
 * (.nrrd, .nhdr) to .nrrd, or a DICOM series (a folder, a DICOMDIR, a file) to a DICOM SEG
 * (.dcm) or NIfTI. Every output appears, complete, only when the run
 * succeeds (written under a temporary name and renamed); a failure or a cancel leaves none. */
SWIN_API swin_status swin_segment_file(swin_context_t *ctx, const char *input_path, const char *output_path,
                                       const swin_segment_params *params, swin_segment_report *report,
                                       swin_error *err);

/* swin_segment_file on several files making one input, read by the format of inputs[0]: the
 * channels of one volume of a multi-channel model (NIfTI files on one grid, in the model's
 * order; a 4D file's volumes count as as many channels), or a DICOM series' files. */
SWIN_API swin_status swin_segment_files(swin_context_t *ctx, const char *const *inputs, int ninputs,
                                        const char *output_path, const swin_segment_params *params,
                                        swin_segment_report *report, swin_error *err);

/* swin_segment_file in two calls, for a batch: prepare reads and preprocesses input_path
 * (and checks output_path) without running the model, so that it may run on another thread
 * while ctx segments the previous volume; swin_segment_file_prepared runs the cubes and
 * writes the outputs with the same params (their progress callback and output paths may
 * differ: the output path is prepare's) and frees `prepared` whatever happens. Between the
 * two, the prepared volume holds its preprocessed grid and what the statistics need (report
 * .pipeline_bytes counts both). report: prepare's fills read and preprocess; the second call
 * starts from them. On failure *prepared is NULL. swin_segment_prepared_free drops one that
 * will not be run (NULL: nothing). */
typedef struct swin_segment_prepared swin_segment_prepared;
SWIN_API swin_status swin_segment_file_prepare(swin_context_t *ctx, const char *input_path, const char *output_path,
                                               const swin_segment_params *params, swin_segment_prepared **prepared,
                                               swin_segment_report *report, swin_error *err);
SWIN_API swin_status swin_segment_file_prepared(swin_context_t *ctx, swin_segment_prepared *prepared,
                                                const swin_segment_params *params, swin_segment_report *report,
                                                swin_error *err);
SWIN_API void swin_segment_prepared_free(swin_segment_prepared *prepared);

/* The device (or host) bytes a segmentation of a volume of dim voxels (nx, ny, nz) of voxel_mm
 * millimetres (NULL: the volume is already the grid the cubes slide over) would use on the
 * context cp describes, before anything is allocated: swin_model_plan's, and on a backend
 * that blends the cubes on its device (CUDA, params->blend_on not HOST) the ring of the grid
 * params resamples the volume to (plan .grid and .ring_bytes, counted in .total_bytes), for
 * the file form's labels and the probability planes params asks for (probabilities_path,
 * SWIN_INVERT_LINEAR). cp->mem_limit refuses what does not fit, naming a smaller cube, fp16
 * or blending on the host when one fits. */
SWIN_API swin_status swin_segment_plan(const swin_model_t *model, const swin_context_params *cp,
                                       const swin_segment_params *params, const long long dim[3],
                                       const double voxel_mm[3], swin_plan_info *out, swin_error *err);

/* ---- DICOM: a CT series in, DICOM SEG / RT Structure Set / NIfTI out --------------------
 *
 * inputs: folders (read recursively, or through the DICOMDIR they hold), DICOMDIR files and
 * DICOM files (CT Image Storage, Enhanced CT, Legacy Converted Enhanced CT; uncompressed,
 * deflate, RLE, JPEG baseline / extended / lossless, JPEG-LS, JPEG 2000, HTJ2K). Of several
 * series, params->dicom_series picks one, else the default (report .dicom_series_reason says
 * which and why); localizers and non-image objects are skipped (.dicom_skipped). The slices are ordered by ImagePositionPatient along the slice
 * normal (a gantry-tilted stack on its sheared grid: report .dicom_tilt_deg; an uneven one, e.g.
 * a missing slice, on a regular grid: .dicom_planes_filled); a series with mixed geometry,
 * duplicate positions, a gap of more than 3 missing slices, positions off one line, or (for a
 * SEG or RT Structure Set) a SOPInstanceUID blank in the dataset and the
 * file meta is refused (SWIN_ERR_FORMAT, one line that says where); blank study, series or frame of reference UIDs get new ones (report .dicom_notice). The volume goes
 * through swin_segment; the labels on the CT's grid are written to output_path: .nii /
 * .nii.gz a NIfTI label map, .dcm a DICOM SEG (and params->rtstruct_path an RT Structure
 * Set). Without any label other than 0 no DICOM output is written (report .dicom_written
 * false; SWIN_OK). Outputs appear together, whole, or not at all. swin_segment_file calls
 * this for a folder or a DICOM file. Builds without DCMTK return SWIN_ERR_ARG. */
SWIN_API swin_status swin_segment_dicom(swin_context_t *ctx, const char *const *inputs, int ninputs,
                                        const char *output_path, const swin_segment_params *params,
                                        swin_segment_report *report, swin_error *err);

#ifdef __cplusplus
}
#endif

#endif
