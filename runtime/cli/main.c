/* swinrun: the command-line tool on top of the library. */
#include <stdio.h>
#include <string.h>

#include "runtime/cli/cli.h"
#include "runtime/swinrun.h"

/* swinrun_emu (SWINRUN_EMULATED_CUDA) is the same CLI with the CUDA backend built against
 * the CUDA emulator; it says so in --help and --version. */
#ifdef SWINRUN_EMULATED_CUDA
#define BUILD_NOTE " (CUDA backend emulated on the CPU)"
#define BUILD_HELP                                                                                     \
    "This is swinrun_emu, a test build: the CUDA backend is emulated on the CPU (kernels/emu), so\n"    \
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
            "      segment a CT: the label map on the CT's own grid (details: swinrun segment --help)\n"
            "  swinrun segment [options] --out-dir DIR CT1.nii.gz CT2.nii.gz ...\n"
            "      many CTs, the model loaded once\n"
            "  swinrun info MODEL.onnx [--json]\n"
            "      the configuration read from the graph, parameter count, weight bytes, export cube\n"
            "  swinrun plan MODEL.onnx [--cube D H W] [--backend B] [--precision P] [--mem-limit SIZE] [--json]\n"
            "      exact bytes a run will use (weights, activation arena, its lower bound), before\n"
            "      anything is allocated\n"
            "  swinrun forward MODEL.onnx IN.npy OUT.npy [--backend B] [--precision P] [--runs N] [--json]\n"
            "      one window: IN.npy float32 (1, Ci, D, H, W) -> OUT.npy float32 logits (1, Co, D, H, W);\n"
            "      D, H, W are any multiples of 32, not only the export cube. --runs N times N runs of\n"
            "      the same window; --json prints the plan and the time of every run\n"
            "\n"
            "Options:\n"
            "  --cube D H W      plan: window size (default: the model's export cube; forward takes the\n"
            "                    size of IN.npy)\n"
            "  --threads N       CPU threads (default: every core)\n"
            "  --backend B       cpu (default) | cuda | auto (CUDA when a GPU opens, else CPU). plan needs no\n"
            "                    GPU: --backend cuda prints the device bytes. forward with cuda and no usable\n"
            "                    GPU says so and runs on the CPU\n"
            "  --device N        CUDA device index (default 0)\n"
            "  --precision P     fp32 (default) | fp16 | bf16\n"
            "                    fp16, CUDA: weights and activations stored as float16, tensor-core GEMMs\n"
            "                    with float32 accumulation; half the device bytes, logits within about 1e-2\n"
            "                    of float32. Without a GPU the CPU fallback runs float32\n"
            "                    bf16, CPU: GEMM and conv weights stored as bfloat16 (about half the weight\n"
            "                    bytes), their inputs rounded to bfloat16, float32 accumulation; norms,\n"
            "                    softmax, GELU, residual stream and logits float32\n"
            "  --half            the same as --precision fp16\n"
            "  --mem-limit SIZE  refuse a plan whose total exceeds SIZE (e.g. 2G, 512M, bytes), before\n"
            "                    allocating anything, naming a window (or fp16) that fits\n"
            "  --runs N          forward: run the window N times and report each time (default 1)\n"
            "  --json            machine-readable output on stdout (info, plan, forward)\n"
            "  -h, --help        this text\n"
            "  --version         the version\n"
            "\n"
            "Exit status: 0 success, 1 runtime failure, 2 bad arguments, unreadable input or unwritable\n"
            "output files (a full disk included).\n");
}

/* A first argument that is no verb but a NIfTI path means segment. */
static int looks_like_nifti(const char *s)
{
    size_t n = strlen(s);
    return (n > 4 && !strcmp(s + n - 4, ".nii")) || (n > 7 && !strcmp(s + n - 7, ".nii.gz"));
}

int main(int argc, char **argv)
{
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
    if (!strcmp(argv[1], "segment")) return cli_segment(argc - 1, argv + 1);
    if (looks_like_nifti(argv[1])) return cli_segment(argc, argv);
    struct cli_args a;
    if (cli_parse(argc - 1, argv + 1, &a)) return 2;
    if (a.help) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "info")) return cli_info(&a);
    if (!strcmp(argv[1], "plan")) return cli_plan(&a);
    if (!strcmp(argv[1], "forward")) return cli_forward(&a);
    fprintf(stderr, "swinrun: unknown command '%s' (try swinrun --help)\n", argv[1]);
    return 2;
}
