/* The one option grammar of every swinrun verb: a table of options (name, alias, values,
 * the verbs that take it, a validator that stores it, a help line). Parsing, the error
 * messages and each verb's --help are generated from it, so they cannot disagree. Limits
 * come from the public headers (runtime/api.h, core/segment_params.h), which the library enforces
 * as well. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio/atomic_file.h"
#include "formats/format.h"
#include "apps/cli/cli.h"

#define V_INFO (1u << CLI_INFO)
#define V_PLAN (1u << CLI_PLAN)
#define V_FORWARD (1u << CLI_FORWARD)
#define V_SEGMENT (1u << CLI_SEGMENT)
#define V_CONTEXT (V_PLAN | V_FORWARD | V_SEGMENT)
#define V_ALL (V_INFO | V_CONTEXT)
#define V_LS (1u << CLI_DICOM_LS)
#define V_FETCH (1u << CLI_FETCH)

/* Stores the values v[0..arity) into a; returns NULL, or what the option takes. */
typedef const char *(*cli_store_fn)(struct cli_args *a, char **v);

struct cli_option {
    const char *name, *alias; /* alias: NULL, or a spelling kept for compatibility */
    int arity;                /* values after the option */
    const char *metavar;
    unsigned verbs;           /* V_* mask */
    cli_store_fn store;
    const char *help;         /* may span lines with '\n' */
};

/* ---- value parsers: one integer and one number syntax for every option ---- */

static bool number(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return end != s && !*end && !errno && isfinite(*v);
}

static bool integer(const char *s, long lo, long hi, int *v)
{
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (end == s || *end || errno || x < lo || x > hi) return false;
    *v = (int)x;
    return true;
}

int cli_parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !(v > 0) || !isfinite(v)) return -1;
    double mul = 1;
    switch (*end) {
    case 'k': case 'K': mul = 1024.0; end++; break;
    case 'm': case 'M': mul = 1024.0 * 1024; end++; break;
    case 'g': case 'G': mul = 1024.0 * 1024 * 1024; end++; break;
    case 't': case 'T': mul = 1024.0 * 1024 * 1024 * 1024; end++; break;
    default: break;
    }
    if (!strcmp(end, "iB") || !strcmp(end, "B") || (*end == 'i' && end[1] == 0)) end += strlen(end);
    if (*end) return -1;
    *out = (size_t)(v * mul);
    return 0;
}

/* ---- validators ---- */

#define STR(x) #x
#define XSTR(x) STR(x)

static const char *st_help(struct cli_args *a, char **v) { a->help = true; return NULL; }
static const char *st_json(struct cli_args *a, char **v) { a->json = v[0]; return NULL; }
static const char *st_model(struct cli_args *a, char **v) { a->model = v[0]; return NULL; }
static const char *st_out_dir(struct cli_args *a, char **v) { a->out_dir = v[0]; return NULL; }
static const char *st_probs(struct cli_args *a, char **v) { a->probs = v[0]; return NULL; }
static const char *st_preview(struct cli_args *a, char **v) { a->preview = v[0]; return NULL; }
static const char *st_with_probs(struct cli_args *a, char **v) { a->with_probs = true; return NULL; }
static const char *st_with_preview(struct cli_args *a, char **v) { a->with_preview = true; return NULL; }
static const char *st_no_prefetch(struct cli_args *a, char **v) { a->no_prefetch = true; return NULL; }
static const char *st_classes(struct cli_args *a, char **v) { a->classes = v[0]; return NULL; }
static const char *st_series(struct cli_args *a, char **v) { a->seg.dicom_series = v[0]; return NULL; }
static const char *st_rtstruct(struct cli_args *a, char **v) { a->seg.rtstruct_path = v[0]; return NULL; }
static const char *st_seg_type(struct cli_args *a, char **v)
{
    if (!strcmp(v[0], "binary")) a->seg.seg_type = SWIN_SEG_BINARY;
    else if (!strcmp(v[0], "labelmap")) a->seg.seg_type = SWIN_SEG_LABELMAP;
    else return "binary or labelmap";
    return NULL;
}
static const char *st_fetch_version(struct cli_args *a, char **v) { a->fetch_version = v[0]; return NULL; }
static const char *st_fetch_dest(struct cli_args *a, char **v) { a->fetch_dest = v[0]; return NULL; }
static const char *st_fetch_from(struct cli_args *a, char **v) { a->fetch_from = v[0]; return NULL; }
static const char *st_fetch_timeout(struct cli_args *a, char **v)
{
    return integer(v[0], 1, 3600, &a->fetch_timeout) ? NULL : "seconds, an integer 1..3600";
}
static const char *st_quiet(struct cli_args *a, char **v) { a->quiet = true; return NULL; }
static const char *st_half(struct cli_args *a, char **v) { a->ctx.precision = SWIN_PRECISION_FP16; return NULL; }
static const char *st_no_normalize(struct cli_args *a, char **v) { a->load.no_normalize = true; return NULL; }
static const char *st_norm_groups(struct cli_args *a, char **v)
{
    return integer(v[0], 1, 4096, &a->load.norm_groups) ? NULL : "an integer 1..4096";
}

static const char *st_merge_order(struct cli_args *a, char **v)
{
    if (!strcmp(v[0], "v15")) a->load.merge_order = SWIN_MERGE_ORDER_V15;
    else if (!strcmp(v[0], "pre15")) a->load.merge_order = SWIN_MERGE_ORDER_PRE15;
    else if (!strcmp(v[0], "v2")) a->load.merge_order = SWIN_MERGE_ORDER_V2;
    else return "v15, pre15 or v2";
    return NULL;
}
static const char *st_no_resample(struct cli_args *a, char **v) { a->seg.resample = false; return NULL; }
static const char *st_no_reorient(struct cli_args *a, char **v) { a->seg.reorient = false; return NULL; }
static const char *st_no_clip(struct cli_args *a, char **v) { a->seg.intensity_clip = false; return NULL; }

static const char *st_threads(struct cli_args *a, char **v)
{
    return integer(v[0], 0, SWIN_THREADS_MAX, &a->ctx.threads) ? NULL
                                                                 : "an integer 0.." XSTR(SWIN_THREADS_MAX) " (0 = every core)";
}

static const char *st_device(struct cli_args *a, char **v)
{
    return integer(v[0], 0, SWIN_DEVICE_MAX, &a->ctx.device) ? NULL : "a CUDA device index 0.." XSTR(SWIN_DEVICE_MAX);
}

static const char *st_mem_limit(struct cli_args *a, char **v)
{
    return cli_parse_size(v[0], &a->ctx.mem_limit) ? "a size such as 2G, 512M or a byte count" : NULL;
}

static const char *st_backend(struct cli_args *a, char **v)
{
    if (!strcmp(v[0], "cpu")) a->ctx.backend = SWIN_BACKEND_CPU;
    else if (!strcmp(v[0], "cuda")) a->ctx.backend = SWIN_BACKEND_CUDA;
    else if (!strcmp(v[0], "auto")) a->ctx.backend = SWIN_BACKEND_AUTO;
    else return "cpu, cuda or auto";
    return NULL;
}

static const char *st_precision(struct cli_args *a, char **v)
{
    const swin_precision all[] = {SWIN_PRECISION_FP32, SWIN_PRECISION_FP16, SWIN_PRECISION_BF16};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        if (!strcmp(v[0], swin_precision_name(all[i]))) {
            a->ctx.precision = all[i];
            return NULL;
        }
    return "fp32, fp16 (CUDA) or bf16 (CPU)";
}

static const char *st_isa(struct cli_args *a, char **v)
{
    static const struct {
        const char *name;
        swin_cpu_isa isa;
    } levels[] = {{"auto", SWIN_CPU_ISA_AUTO},     {"baseline", SWIN_CPU_ISA_BASELINE},
                  {"avx2", SWIN_CPU_ISA_AVX2},     {"avx512", SWIN_CPU_ISA_AVX512},
                  {"avx512bf16", SWIN_CPU_ISA_AVX512_BF16}};
    for (size_t i = 0; i < sizeof levels / sizeof *levels; i++)
        if (!strcmp(v[0], levels[i].name)) {
            a->ctx.cpu_isa = levels[i].isa;
            return NULL;
        }
    return "auto, baseline, avx2, avx512 or avx512bf16";
}

static const char *st_cube(struct cli_args *a, char **v)
{
    for (int k = 0; k < 3; k++)
        if (!integer(v[k], SWIN_CUBE_MIN, SWIN_CUBE_MAX, &a->ctx.cube[k]) || a->ctx.cube[k] % SWIN_CUBE_MULTIPLE)
            return "D H W, each a multiple of " XSTR(SWIN_CUBE_MULTIPLE) " in " XSTR(SWIN_CUBE_MIN) ".." XSTR(SWIN_CUBE_MAX);
    return NULL;
}

static const char *st_runs(struct cli_args *a, char **v)
{
    return integer(v[0], 1, 100000, &a->runs) ? NULL : "an integer 1..100000";
}

static const char *st_spacing(struct cli_args *a, char **v)
{
    for (int k = 0; k < 3; k++) {
        double *s = &a->seg.spacing_mm[k];
        if (!number(v[k], s) || !(*s >= SWIN_SPACING_MIN_MM && *s <= SWIN_SPACING_MAX_MM))
            return "three spacings in mm, each " XSTR(SWIN_SPACING_MIN_MM) ".." XSTR(SWIN_SPACING_MAX_MM);
    }
    return NULL;
}

static const char *st_range(struct cli_args *a, char **v)
{
    double lo, hi;
    if (!number(v[0], &lo) || !number(v[1], &hi) || !(hi > lo)) return "two numbers LO HI with LO < HI";
    a->seg.intensity_clip = true;
    a->seg.intensity_range[0] = (float)lo;
    a->seg.intensity_range[1] = (float)hi;
    return NULL;
}

static const char *st_intensity_norm(struct cli_args *a, char **v)
{
    if (!strcmp(v[0], "range")) a->seg.normalize = SWIN_NORM_RANGE;
    else if (!strcmp(v[0], "zscore")) a->seg.normalize = SWIN_NORM_ZSCORE;
    else if (!strcmp(v[0], "zscore-nonzero")) a->seg.normalize = SWIN_NORM_ZSCORE_NONZERO;
    else return "range, zscore or zscore-nonzero";
    return NULL;
}

static const char *st_multi_label(struct cli_args *a, char **v)
{
    (void)v;
    a->seg.activation = SWIN_ACTIVATION_SIGMOID;
    return NULL;
}

static const char *st_overlap(struct cli_args *a, char **v)
{
    double *o = &a->seg.overlap;
    return number(v[0], o) && *o >= 0 && *o <= SWIN_OVERLAP_MAX ? NULL : "a number 0.." XSTR(SWIN_OVERLAP_MAX);
}

static const char *st_blend(struct cli_args *a, char **v)
{
    if (!strcmp(v[0], "constant")) a->seg.blend = SWIN_BLEND_CONSTANT;
    else if (!strcmp(v[0], "gaussian")) a->seg.blend = SWIN_BLEND_GAUSSIAN;
    else return "constant or gaussian";
    return NULL;
}

static const char *st_invert(struct cli_args *a, char **v)
{
    if (!strcmp(v[0], "nearest")) a->seg.invert = SWIN_INVERT_NEAREST;
    else if (!strcmp(v[0], "linear")) a->seg.invert = SWIN_INVERT_LINEAR;
    else return "nearest or linear";
    return NULL;
}

static const char *st_blend_on(struct cli_args *a, char **v)
{
    if (!strcmp(v[0], "auto")) a->seg.blend_on = SWIN_BLEND_ON_AUTO;
    else if (!strcmp(v[0], "host")) a->seg.blend_on = SWIN_BLEND_ON_HOST;
    else if (!strcmp(v[0], "device")) a->seg.blend_on = SWIN_BLEND_ON_DEVICE;
    else return "auto, host or device";
    return NULL;
}

static const char *st_volume(struct cli_args *a, char **v)
{
    for (int k = 0; k < 3; k++) {
        int n;
        if (!integer(v[k], 1, SWIN_VOLUME_MAX_DIM, &n)) return "NX NY NZ, each 1.." XSTR(SWIN_VOLUME_MAX_DIM);
        a->volume[k] = n;
    }
    return NULL;
}

static const char *st_voxel_size(struct cli_args *a, char **v)
{
    for (int k = 0; k < 3; k++)
        if (!number(v[k], &a->voxel_mm[k]) ||
            !(a->voxel_mm[k] >= SWIN_SPACING_MIN_MM && a->voxel_mm[k] <= SWIN_SPACING_MAX_MM))
            return "three sizes in mm, each " XSTR(SWIN_SPACING_MIN_MM) ".." XSTR(SWIN_SPACING_MAX_MM);
    return NULL;
}

static const char *st_sigma(struct cli_args *a, char **v)
{
    double *s = &a->seg.sigma_scale;
    return number(v[0], s) && *s > 0 && *s <= 10 ? NULL : "a number in (0, 10]";
}

/* ---- the table ---- */

static const struct cli_option options[] = {
    {"--model", NULL, 1, "FILE", V_SEGMENT, st_model,
     "the Swin UNETR ONNX export, checkpoint or MONAI bundle folder; default\n"
     "$SWINRUN_MODEL, else the bundle swinrun fetch installs,\n"
     "$XDG_DATA_HOME/swinrun/bundles/" CLI_DEFAULT_BUNDLE "/, else\n"
     "$XDG_DATA_HOME/swinrun/model.onnx (XDG_DATA_HOME defaults to ~/.local/share)"},
    {"--backend", NULL, 1, "B", V_CONTEXT, st_backend,
     "auto (default): CUDA when a GPU is usable, else the CPU | cpu | cuda\n"
     "(fails when no GPU is usable). The choice and why are printed and in --json;\n"
     "plan needs no GPU: with cuda it gives the device bytes"},
    {"--threads", NULL, 1, "N", V_CONTEXT, st_threads, "CPU threads, for the forward pass and the work around it (default 0: every core)"},
    {"--device", NULL, 1, "N", V_CONTEXT, st_device, "CUDA device index (default 0)"},
    {"--precision", NULL, 1, "P", V_CONTEXT, st_precision,
     "fp32 (default) | fp16: CUDA weights and activations stored as float16\n"
     "(tensor-core GEMMs, float32 accumulation), half the device bytes, logits within\n"
     "about 1e-2 of fp32; auto choosing the CPU runs fp32 | bf16: CPU GEMM and conv\n"
     "weights stored as bfloat16 (about half the weight bytes), their inputs rounded\n"
     "to bfloat16, float32 accumulation; norms, softmax, GELU, residual stream and\n"
     "logits float32; auto runs it on the CPU"},
    {"--half", NULL, 0, NULL, V_CONTEXT, st_half, "the same as --precision fp16"},
    {"--isa", NULL, 1, "LEVEL", V_CONTEXT, st_isa,
     "the CPU backend's highest instruction-set level: auto (default: the best the\n"
     "CPU has, capped by $SWINRUN_CPU_ISA when set) | baseline | avx2 | avx512 |\n"
     "avx512bf16; a level the CPU lacks runs the best one below it (printed and in\n"
     "--json as cpu_isa)"},
    {"--mem-limit", NULL, 1, "SIZE", V_CONTEXT, st_mem_limit,
     "refuse a plan (weights + activations + scratch) above SIZE (2G, 512M,\n"
     "bytes) before allocating anything, naming a cube (or fp16) that fits"},
    {"--cube", NULL, 3, "D H W", V_PLAN | V_SEGMENT, st_cube,
     "the cube (sliding patch) one forward pass runs on: multiples of " XSTR(SWIN_CUBE_MULTIPLE) "\n"
     "in " XSTR(SWIN_CUBE_MIN) ".." XSTR(SWIN_CUBE_MAX) " (default: the export cube; required for a dynamic export)"},
    {"--runs", NULL, 1, "N", V_FORWARD, st_runs, "run the window N times and report each time (default 1)"},
    {"--spacing", NULL, 3, "X Y Z", V_PLAN | V_SEGMENT, st_spacing, "target spacing in mm along R, A, S (default 1.5 1.5 2.0)"},
    {"--no-resample", NULL, 0, NULL, V_PLAN | V_SEGMENT, st_no_resample, "keep the voxel grid (orientation and range still apply)"},
    {"--no-reorient", NULL, 0, NULL, V_PLAN | V_SEGMENT, st_no_reorient, "keep the axis order and directions of the file"},
    {"--intensity-range", NULL, 2, "LO HI", V_SEGMENT, st_range,
     "the intensity (HU) range mapped to [0, 1], clipped (default -175 250)"},
    {"--no-intensity-clip", NULL, 0, NULL, V_SEGMENT, st_no_clip, "feed the intensities unchanged"},
    {"--intensity-norm", NULL, 1, "M", V_SEGMENT, st_intensity_norm,
     "range (default): --intensity-range as above | zscore: each channel minus\n"
     "its mean, over its standard deviation | zscore-nonzero: the same over each\n"
     "channel's nonzero voxels, zeros kept (MONAI NormalizeIntensity nonzero=True,\n"
     "channel_wise=True: the BraTS recipe)"},
    {"--multi-label", NULL, 0, NULL, V_SEGMENT, st_multi_label,
     "each output channel its own sigmoid >= 0.5 (MONAI Activations(sigmoid) +\n"
     "AsDiscrete(threshold=0.5) on several channels: overlapping regions, as\n"
     "BraTS' tumour core, whole tumour, enhancing tumour): OUT is a 4D uint8 NIfTI\n"
     "of one 0/1 mask per channel, --probabilities the sigmoids (NIfTI input);\n"
     "from DICOM a SEG of one segment per channel and RTSTRUCT ROIs that may\n"
     "overlap (a bundle saying so sets it)"},
    {"--overlap", NULL, 1, "F", V_PLAN | V_SEGMENT, st_overlap,
     "overlap of neighbouring cubes, 0.." XSTR(SWIN_OVERLAP_MAX) " (default 0.5)"},
    {"--blend", NULL, 1, "M", V_SEGMENT, st_blend, "constant (default) | gaussian: how overlapping cubes are averaged"},
    {"--sigma-scale", NULL, 1, "F", V_SEGMENT, st_sigma, "gaussian blending: sigma = F * cube side (default 0.125)"},
    {"--invert", NULL, 1, "M", V_PLAN | V_SEGMENT, st_invert,
     "the labels' way back to the input grid: nearest (default): argmax on the\n"
     "resampled grid, labels sampled by nearest neighbour | linear: softmax\n"
     "probabilities interpolated trilinearly onto the input grid, argmax there\n"
     "(MONAI Invertd nearest_interp=False, as the BTCV bundle); holds the label map\n"
     "of the input grid and a few resampled planes of probabilities"},
    {"--blend-on", NULL, 1, "W", V_PLAN | V_SEGMENT, st_blend_on,
     "where the cubes' logits are blended into labels: auto (default): on the CUDA\n"
     "device when its ring of open planes fits (--mem-limit, the device), else on the\n"
     "host, saying why | host: every cube's logits come back | device: on the device\n"
     "or fail. The labels are the same; the CPU backend blends on the host"},
    {"--volume", NULL, 3, "NX NY NZ", V_PLAN, st_volume,
     "plan the segmentation of a volume of this many voxels: its grid (after the\n"
     "recipe's resampling, with --voxel-size) and the device ring its cubes are\n"
     "blended in, counted in the total and in --mem-limit's refusal"},
    {"--voxel-size", NULL, 3, "DX DY DZ", V_PLAN, st_voxel_size,
     "--volume's voxel size in mm (default: the volume is already the grid the cubes\n"
     "slide over)"},
    {"--probabilities", NULL, 1, "FILE", V_SEGMENT, st_probs,
     "also write softmax class probabilities, float32 4D (x, y, z, class) on\n"
     "the input grid (a one-channel model: its sigmoid, 3D); one float per class\n"
     "per resampled voxel in memory"},
    {"--preview", NULL, 1, "FILE.png", V_SEGMENT, st_preview,
     "three orthogonal mid slices (RAS grid, radiological view) with the labels"},
    {"--rtstruct", NULL, 1, "RT.dcm", V_SEGMENT, st_rtstruct,
     "DICOM series input: also an RT Structure Set, one ROI per organ found,\n"
     "contours on every CT slice along the voxel edges"},
    {"--series", NULL, 1, "UID|NUMBER", V_SEGMENT | V_LS, st_series,
     "DICOM study (a folder of several series, a DICOMDIR): the series to read,\n"
     "by SeriesInstanceUID or SeriesNumber (default: the only CT series, else the\n"
     "axial CT series with the most slices; a tie is refused with the list)"},
    {"--seg-type", NULL, 1, "T", V_SEGMENT, st_seg_type,
     "binary (default) | labelmap: the DICOM SEG's form; labelmap is DICOM 2024c's\n"
     "Label Map Segmentation, one frame per slice (newer readers only)"},
    {"--classes", NULL, 1, "FILE", V_SEGMENT, st_classes,
     "what the labels mean in a SEG / RTSTRUCT (default: the 13 BTCV organs for a model\n"
     "with 14 output channels, else \"Label N\"), one tab-separated line per label:\n"
     "LABEL NAME CODE SCHEME MEANING R,G,B\n"
     "[MODIFIER_CODE MODIFIER_MEANING], e.g. 1 Spleen 78961009 SCT Spleen 157,108,162"},
    {"--out-dir", NULL, 1, "DIR", V_SEGMENT, st_out_dir,
     "batch form: DIR/<name>_seg.nii.gz per input (.mha for MetaImage, .nrrd for\n"
     "NRRD), the model loaded once"},
    {"--with-probabilities", NULL, 0, NULL, V_PLAN | V_SEGMENT, st_with_probs,
     "batch: DIR/<name>_probabilities.nii.gz too; plan --volume: probabilities asked for"},
    {"--with-preview", NULL, 0, NULL, V_SEGMENT, st_with_preview, "batch: DIR/<name>_preview.png too"},
    {"--no-prefetch", NULL, 0, NULL, V_SEGMENT, st_no_prefetch,
     "batch with CUDA: hold one volume at a time (by default the next is read and\n"
     "preprocessed while this one's cubes run, holding both)"},
    {"--quiet", "-q", 0, NULL, V_SEGMENT, st_quiet, "no progress bar (there is none when stderr is not a terminal)"},
    {"--merge-order", NULL, 1, "O", V_ALL, st_merge_order,
     "patch-merging order the weights were trained with: v15 ('merging', MONAI >= 1.5; a checkpoint's default), "
     "pre15 ('merging', MONAI < 1.5), v2 ('mergingv2'); an ONNX file's own order otherwise"},
    {"--no-normalize", NULL, 0, NULL, V_ALL, st_no_normalize,
     "a checkpoint of a model built with normalize=False (an ONNX file says so itself)"},
    {"--norm-groups", NULL, 1, "G", V_ALL, st_norm_groups,
     "a checkpoint of a model built with norm_name=('group', {'num_groups': G}) (its keys are\n"
     "affine instance norm's); an ONNX file, a bundle or a pickled module says so itself"},
    {"--json", NULL, 1, "FILE", V_ALL | V_LS, st_json,
     "a machine-readable report to FILE ('-' = stdout), written whole or not\n"
     "at all"},
    {"--version", NULL, 1, "V", V_FETCH, st_fetch_version,
     "the bundle version (default: the newest one pinned, " CLI_DEFAULT_BUNDLE " 0.5.6)"},
    {"--dest", NULL, 1, "DIR", V_FETCH, st_fetch_dest,
     "the bundle folder to install (default $XDG_DATA_HOME/swinrun/bundles/NAME,\n"
     "where segment looks for its default model)"},
    {"--from", NULL, 1, "URL", V_FETCH, st_fetch_from,
     "another source laid out like the model-zoo repository: URL/models/NAME/...\n"
     "(also $SWINRUN_ZOO_URL; default: github.com/Project-MONAI/model-zoo at the\n"
     "version's pinned commit); http:// is allowed only here"},
    {"--timeout", NULL, 1, "S", V_FETCH, st_fetch_timeout,
     "give up connecting after S seconds, or a transfer stalled for S seconds (default 30)"},
    {"--help", "-h", 0, NULL, V_ALL | V_LS | V_FETCH, st_help, "this text"},
};

static const char *const verb_names[CLI_VERBS] = {"info", "plan", "forward", "segment", "dicom-ls", "fetch"};

const char *cli_verb_name(enum cli_verb v) { return verb_names[v]; }

static const struct cli_option *find(const char *s)
{
    for (size_t i = 0; i < sizeof options / sizeof *options; i++)
        if (!strcmp(s, options[i].name) || (options[i].alias && !strcmp(s, options[i].alias))) return &options[i];
    return NULL;
}

int cli_parse(enum cli_verb verb, int argc, char **argv, int first, struct cli_args *a)
{
    const char *vn = verb_names[verb];
    *a = (struct cli_args){.verb = verb, .ctx = swin_context_default_params(), .seg = swin_segment_default_params(),
                           .runs = 1, .argv = argv, .argc = argc, .first = first,
                           .fetch_timeout = 30};
    if (!(a->pos = calloc((size_t)argc + 1, sizeof *a->pos))) {
        fprintf(stderr, "swinrun: out of host memory\n");
        return cli_exit_code(SWIN_ERR_NOMEM);
    }
    for (int i = first; i < argc; i++) {
        const char *s = argv[i];
        if (s[0] != '-' || !s[1]) {
            a->pos[a->npos++] = s;
            continue;
        }
        const struct cli_option *o = find(s);
        if (!o || !(o->verbs & (1u << verb))) {
            fprintf(stderr, "swinrun %s: %s option '%s' (try swinrun %s --help)\n", vn,
                    o ? "this command takes no" : "unknown", s, vn);
            return 2;
        }
        if (argc - 1 - i < o->arity) {
            fprintf(stderr, "swinrun %s: option %s needs a value: %s (try swinrun %s --help)\n", vn, o->name,
                    o->metavar, vn);
            return 2;
        }
        const char *why = o->store(a, argv + i + 1);
        if (why) {
            fprintf(stderr, "swinrun %s: %s takes %s, not '", vn, o->name, why);
            for (int k = 0; k < o->arity; k++) fprintf(stderr, "%s%s", k ? " " : "", argv[i + 1 + k]);
            fprintf(stderr, "'\n");
            return 2;
        }
        i += o->arity;
    }
    return 0;
}

void cli_seg_over(struct cli_args *a, const swin_segment_params *base)
{
    a->seg = *base;
    for (int i = a->first; i < a->argc; i++) {
        const struct cli_option *o = a->argv[i][0] == '-' && a->argv[i][1] ? find(a->argv[i]) : NULL;
        if (!o) continue;
        o->store(a, a->argv + i + 1); /* cli_parse accepted every value once */
        i += o->arity;
    }
}

static const char *const usage[CLI_VERBS] = {
    "swinrun info MODEL.onnx [options]\n"
    "    the configuration read from the graph, parameter count, weight bytes, export cube\n",
    "swinrun plan MODEL.onnx [options]\n"
    "    exact bytes a run will use (weights, activation arena, its lower bound, backend scratch)\n"
    "    before anything is allocated, and the backend it would run on and why; with --volume,\n"
    "    a segmentation of that volume, the device ring of its cubes included\n",
    "swinrun forward MODEL.onnx IN.npy OUT.npy [options]\n"
    "    one cube: IN.npy float32 (1, Ci, D, H, W) -> OUT.npy float32 logits (1, Co, D, H, W);\n"
    "    D, H, W are any multiples of 32, not only the export cube\n",
    "swinrun CT.nii.gz OUT.nii.gz [options]            (the same as swinrun segment ...)\n"
    "swinrun segment [options] CT.nii.gz OUT.nii.gz\n"
    "swinrun segment [options] --out-dir DIR CT1.nii.gz CT2.nii ...\n"
    "swinrun CT_DIR/ OUT.dcm [--rtstruct RT.dcm] [options]\n"
    "swinrun segment [options] CT_FILE1.dcm CT_FILE2.dcm ... OUT.dcm|OUT.nii.gz\n"
    "    the label map (uint8, uint16 beyond 256 classes) on the CT's own grid with its affine,\n"
    "    qform/sform and codes. Reads NIfTI-1/2 (.nii, .nii.gz, or a NIfTI-1 .hdr/.img pair; any\n"
    "    integer or float datatype; ANALYZE 7.5 refused: it does not say which side is left)\n"
    "    MetaImage (.mha, or .mhd and its voxel file; any scalar type, zlib-compressed or not)\n"
    "    and NRRD (.nrrd, or .nhdr and its data file; raw or gzip): from those OUT (and\n"
    "    --probabilities) is a .mha / .nrrd on the CT's grid.\n"
    "    MONAI's recipe: orientation to RAS, trilinear resampling to the spacing, the intensity\n"
    "    range to [0, 1] clipped, sliding cubes, argmax (a model with one output channel:\n"
    "    sigmoid >= 0.5, labels 0 and 1; --multi-label: a sigmoid mask per channel, a 4D file),\n"
    "    labels back to the input grid (nearest).\n"
    "    A model of several input channels (e.g. MRI sequences) takes one NIfTI file of as\n"
    "    many volumes (4D), or one file per channel on one grid, in the model's order:\n"
    "    swinrun segment T1.nii.gz T1CE.nii.gz T2.nii.gz FLAIR.nii.gz OUT.nii.gz; each channel\n"
    "    is resampled and normalised on its own (--intensity-norm zscore-nonzero for BraTS).\n"
    "    Batch: a failed volume is reported and skipped, the exit status is then 1. Outputs are\n"
    "    written to temporary files, renamed when complete; SIGINT/SIGTERM remove them.\n"
    "    DICOM: a CT series (a folder or its files; uncompressed, deflate, RLE, JPEG baseline,\n"
    "    extended and lossless, JPEG-LS, JPEG 2000 lossless and lossy, HTJ2K),\n"
    "    slices ordered by position along the slice normal. OUT.dcm is a DICOM SEG (one segment\n"
    "    per organ found; none found: nothing written, a notice, exit 0), OUT.nii(.gz) the label\n"
    "    map on the series' grid (sheared for a gantry-tilted series; regular across missing\n"
    "    slices, up to 3 in a row, which are interpolated). Several series, mixed geometry,\n"
    "    duplicate slices and wider gaps are refused (exit 2, nothing written). --out-dir takes\n"
    "    series folders.\n"
    "    A study (a folder of several series, read recursively, or a DICOMDIR): --series picks\n"
    "    one, else the only CT series or the axial CT series with the most slices is read, and a\n"
    "    line says which and why; localizers and non-image objects (dose reports, secondary\n"
    "    captures, presentation states) are skipped with a notice.\n",
    "swinrun dicom-ls DIR|DICOMDIR|FILES... [options]\n"
    "    the series of a DICOM study, one line each: number, modality, SOP class, slices / files,\n"
    "    orientation, slice thickness, ImageType, description, UID; '*' marks the one a run\n"
    "    reads, and why (or why none). Folders are read recursively, or through their DICOMDIR.\n",
    "swinrun fetch [NAME] [options]\n"
    "    downloads a MONAI model-zoo bundle (default NAME " CLI_DEFAULT_BUNDLE "): configs/,\n"
    "    large_files.yml, LICENSE and docs/ from the model-zoo repository at the version's pinned\n"
    "    commit, then each file large_files.yml lists (models/model.pt) from its URL, checked\n"
    "    against its hash. Everything is gathered in DEST.partial/ and renamed to DEST only when\n"
    "    complete and checked: a failure or Ctrl-C installs nothing. An interrupted download\n"
    "    stays in DEST.partial/parts/ and the next run resumes it (HTTP Range). HTTPS with\n"
    "    certificate checks, redirects followed. docs/fetch.md says more.\n",
};

void cli_help(enum cli_verb verb, FILE *f)
{
    fprintf(f, "Usage:\n%s\nOptions:\n", usage[verb]);
    for (size_t i = 0; i < sizeof options / sizeof *options; i++) {
        const struct cli_option *o = &options[i];
        if (!(o->verbs & (1u << verb))) continue;
        char head[64];
        snprintf(head, sizeof head, "%s%s%s%s%s", o->alias ? o->alias : "", o->alias ? ", " : "", o->name,
                 o->metavar ? " " : "", o->metavar ? o->metavar : "");
        fprintf(f, "  %-24s", head);
        for (const char *h = o->help; *h; h++) {
            fputc(*h, f);
            if (*h == '\n') fprintf(f, "  %-24s", "");
        }
        fputc('\n', f);
    }
    if (verb == CLI_FETCH)
        fprintf(f, "\nExit status: 0 installed, 1 a download, check or write failed (nothing installed), 2 bad\n"
                   "arguments.\n");
    else
        fprintf(f, "\nExit status: 0 success, 1 runtime failure, 2 bad arguments, unreadable input or unwritable\n"
                   "output files (a full disk included).\n");
}

int cli_exit_code(swin_status st)
{
    switch (st) {
    case SWIN_OK: return 0;
    case SWIN_ERR_ARG: case SWIN_ERR_IO: case SWIN_ERR_FORMAT: case SWIN_ERR_MODEL: case SWIN_ERR_SHAPE:
        return 2;
    default: return 1;
    }
}

swin_model_t *cli_load_model(const char *path, const swin_model_load_params *p, int *exit_code)
{
    swin_error err = {0};
    swin_model_t *m = NULL;
    swin_status st = swin_model_load_ex(path, p, &m, &err);
    if (st) {
        fprintf(stderr, "swinrun: %s\n", err.msg);
        *exit_code = cli_exit_code(st);
        return NULL;
    }
    return m;
}

const char *cli_backend_name(swin_backend b) { return b == SWIN_BACKEND_CUDA ? "cuda" : "cpu"; }
const char *cli_dtype_name(const swin_plan_info *p) { return swin_precision_storage(p->precision); }

struct cli_json {
    struct swin_atomic_file af; /* unused for stdout */
    bool to_stdout;
};

swin_status cli_json_open(struct cli_json **out, const char *path, FILE **f, swin_error *err)
{
    struct cli_json *j = calloc(1, sizeof *j);
    if (!j) return swin_error_set(err, SWIN_ERR_NOMEM, "out of host memory");
    j->to_stdout = !strcmp(path, "-");
    swin_status st = j->to_stdout ? SWIN_OK : swin_atomic_file_open(&j->af, path, err);
    if (st) {
        free(j);
        return st;
    }
    *f = j->to_stdout ? stdout : j->af.f;
    *out = j;
    return SWIN_OK;
}

swin_status cli_json_commit(struct cli_json *j, swin_error *err)
{
    swin_status st = SWIN_OK;
    if (!j) return st;
    if (j->to_stdout) fflush(stdout);
    else st = swin_atomic_file_commit(&j->af, err);
    free(j);
    return st;
}

void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", (unsigned char)*s);
        else fputc(*s, f);
    }
    fputc('"', f);
}
