/* swinrun: the command-line tool on top of the library. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "apps/cli/cli.h"
#include "apps/node/serve.h"
#include "formats/format.h"
#include "pipeline/swinrun.h"

/* swinrun_emu (SWINRUN_EMULATED_CUDA) is the same CLI with the CUDA backend built against
 * the CUDA emulator; it says so in --help and --version. */
#ifdef SWINRUN_EMULATED_CUDA
#define BUILD_NOTE " (CUDA backend emulated on the CPU)"
#define BUILD_HELP                                                                                     \
    "This is swinrun_emu, a test build: the CUDA backend is emulated on the CPU (tests/cuemu), so\n"    \
    "--backend cuda runs the CUDA kernels here, slowly; forward also checks that the emulated\n"       \
    "device's high-water mark equals the planned total bytes.\n"                                      \
    "\n"
#else
#define BUILD_NOTE ""
#define BUILD_HELP ""
#endif

static void usage(FILE *o)
{
    fprintf(o,
            "swinrun " SWINRUN_VERSION ": run a MONAI Swin UNETR ONNX export in a fixed, known memory footprint\n"
            "\n" BUILD_HELP
            "Usage:\n"
            "  swinrun CT.nii.gz OUT.nii.gz [--model M.onnx] [--preview P.png] [...]\n"
            "      segment a CT: the label map on the CT's own grid (also CT.mha OUT.mha, CT.nrrd OUT.nrrd)\n"
            "  swinrun segment [options] --out-dir DIR CT1.nii.gz CT2.nii.gz ...\n"
            "      many CTs, the model loaded once\n"
            "  swinrun CT_DIR/ OUT.dcm [--rtstruct RT.dcm] [--model M.onnx]\n"
            "      a DICOM CT series in, a DICOM SEG (and RT Structure Set) out; OUT.nii.gz works too\n"
            "  swinrun dicom-ls STUDY_DIR [--json FILE]\n"
            "      the series of a DICOM study (folder or DICOMDIR) and the one a run reads; --series picks\n"
            "  swinrun info MODEL.onnx [--json FILE]\n"
            "      the configuration read from the graph, parameter count, weight bytes, export cube\n"
            "  swinrun plan MODEL.onnx [--cube D H W] [--backend B] [--precision P] [--mem-limit SIZE]\n"
            "      exact bytes a run will use, before anything is allocated\n"
            "  swinrun forward MODEL.onnx IN.npy OUT.npy [--backend B] [--precision P] [--runs N]\n"
            "      one cube through the model, .npy in and out\n"
            "  swinrun serve CONFIG.json [--check | --status]\n"
            "      a DICOM node: CT studies in by C-STORE, SEG and RT Structure Set out to the PACS\n"
            "  swinrun fetch [NAME] [--version V] [--dest DIR]\n"
            "      download MONAI's model-zoo bundle (default " CLI_DEFAULT_BUNDLE "), checked, where\n"
            "      segment looks for its default model\n"
            "  Wherever a model is taken, the trained weights work too: a PyTorch checkpoint (.pt, .pth,\n"
            "  .ckpt: a state dict, a training checkpoint or torch.save(model)), a TorchScript module\n"
            "  (torch.jit.save: model.ts), a torch.export archive (torch.export.save: model.pt2) or a\n"
            "  .safetensors file (what a state dict cannot tell: --merge-order, --no-normalize,\n"
            "  --norm-groups, --cube; a traced module's code and an exported graph tell them)\n"
            "\n"
            "Every verb takes the same option grammar; swinrun VERB --help lists the options of VERB.\n"
            "Three things are called \"window\" in this field; swinrun names them apart: the attention\n"
            "window (the model's, fixed), the cube (--cube: the sliding patch one forward pass runs on)\n"
            "and the intensity range (--intensity-range: the HU window mapped to [0, 1]).\n"
            "  --version         the version\n"
            "\n"
            "Exit status: 0 success, 1 runtime failure, 2 bad arguments, unreadable input or unwritable\n"
            "output files (a full disk included).\n");
}

/* A first argument that is no verb but an input of a format swinrun reads (a NIfTI path, a
 * folder, a DICOM file) means segment. */
static int looks_like_input(const char *s)
{
    return swin_format_claiming(s) != NULL;
}

static int run(enum cli_verb verb, int argc, char **argv, int first)
{
    struct cli_args a;
    int rc = cli_parse(verb, argc, argv, first, &a);
    if (!rc && a.help) cli_help(verb, stdout);
    else if (!rc) {
        switch (verb) {
        case CLI_INFO: rc = cli_info(&a); break;
        case CLI_PLAN: rc = cli_plan(&a); break;
        case CLI_FORWARD: rc = cli_forward(&a); break;
        case CLI_DICOM_LS: rc = cli_dicom_ls(&a); break;
        case CLI_FETCH: rc = cli_fetch(&a); break;
        default: rc = cli_segment(&a); break;
        }
    }
    free(a.pos);
    return rc;
}

int main(int argc, char **argv)
{
    swin_set_vocabulary(SWIN_VOCAB_CLI);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("swinrun %s%s\n", SWINRUN_VERSION, BUILD_NOTE);
        return 0;
    }
    if (looks_like_input(argv[1])) return run(CLI_SEGMENT, argc, argv, 1);
    for (int v = 0; v < CLI_VERBS; v++)
        if (!strcmp(argv[1], cli_verb_name((enum cli_verb)v))) return run((enum cli_verb)v, argc, argv, 2);
    if (!strcmp(argv[1], "serve")) return node_serve_main(argc - 1, argv + 1);
    /* a path as users mistype it: more arguments follow, or it reads like a file name */
    struct stat sb;
    if ((argc > 2 || strpbrk(argv[1], "/.")) && stat(argv[1], &sb) != 0) {
        fprintf(stderr, "swinrun: %s: no such file or folder%s (try swinrun --help)\n", argv[1],
                strpbrk(argv[1], "/.") ? "" : ", and no command of that name");
        return 2;
    }
    fprintf(stderr, "swinrun: unknown command '%s' (try swinrun --help)\n", argv[1]);
    return 2;
}
