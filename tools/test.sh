#!/usr/bin/env bash
# Sets everything up on a fresh Debian 12 machine and runs every test:
#   1. apt packages and the Python venv (tools/ci/setup_env.sh, cached in ~/.cache/swinrun),
#      the Triton venv (tools/ci/setup_triton.sh: tritonserver + tritonclient, cached too);
#   2. the exported test models and their ONNX Runtime references (tools/export/make_test_data.sh,
#      incremental, in test-data/; each case copied from ~/.cache/swinrun/test-data when the cache
#      holds it for the same command line, package versions and generator scripts);
#   3. the build (build/) and CTest: unit, op, loader, emulator and end-to-end tests;
#   4. the CUDA emulator's, unit, fault-injection and load tests again under AddressSanitizer
#      + UBSan with leak detection (build-asan/), and the Triton backend's window, segment and
#      error tests with the instrumented backend;
#   5. tools/gpu/gpu_image_sim.sh: tools/gpu/gpu_check.sh, with what the GPU image lacks hidden, up to
#      its first step that needs a GPU (docs/gpu_check.md);
#   6. the shared-model load test under ThreadSanitizer, two threads per context (build-tsan/:
#      only that test and the library, CPU backend, no nvcc; both settings by hand:
#      ctest -R shared_model_threads in build-tsan, about 3 minutes).
#   7. each libFuzzer harness briefly on its seeds and the fuzz regressions (build-fuzz/,
#      clang; tests/fuzz/README.md).
# Usage: tools/test.sh [--slow] [extra ctest arguments]
#   --slow  also exports the f=48 96^3 model (a few minutes) and runs the tests labelled
#           slow: the f=48 96^3 model's agreement with ONNX Runtime and load-time memory, the
#           wheel in a fresh venv (python_wheel), and the longer twins of main-pass tests, each
#           with what covers its path in the main pass in its CMakeLists.txt:
#           bundle_fidelity_btcv (tests/bundles), the emulated CUDA backend on the non-cubic
#           64x32x96 case in half and on f=48 in half (e2e_emu_half_f12_64x32x96_ts,
#           e2e_emu_half_f48_c32_hd16_ts: tests/e2e), and two of
#           the four sliding-window cases of python_predictor (python_predictor_slow: tests/python),
#           and random model configurations, export routes, tools and checkpoint forms against
#           ONNX Runtime and torch (loader_slow_config_sweep_*: tools/export/config_sweep.py)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
jobs="$(nproc)"
slow=()
skip_slow=(-LE slow)
if [ "${1:-}" = "--slow" ]; then
    slow=(--slow)
    skip_slow=()
    shift
fi

step() { printf '\n== %s\n' "$*"; }

step "environment"
tools/ci/setup_env.sh
py="$(tools/ci/setup_env.sh --print-python)"
tools/ci/setup_triton.sh
triton_py="$(tools/ci/setup_triton.sh --print-python)"

# The compiler cache: objects of earlier runs in ~/.cache/swinrun/ccache, found again from a
# clone at any path (paths under the clone are hashed relative to it; debug info keeps the
# first clone's directory). nvcc's too: kernels/cuda runs it inside its ptxas report launcher,
# and a hit replays the report. Not for the simulated GPU image, which has no ccache.
launcher=()
if command -v ccache > /dev/null; then
    export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/swinrun/ccache}" CCACHE_BASEDIR="$repo" CCACHE_NOHASHDIR=true
    ccache --max-size=8G > /dev/null
    ccache --zero-stats > /dev/null
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
              -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi

step "test models and ONNX Runtime references"
tools/export/make_test_data.sh "${slow[@]}" "$repo/test-data"

step "build"
cmake -S . -B build "${launcher[@]}" -DSWIN_PYTHON="$py" -DSWIN_TEST_DATA="$repo/test-data" \
    -DSWIN_TRITON=ON -DSWIN_TRITON_PYTHON="$triton_py" > build-configure.log \
    || { cat build-configure.log; exit 1; }
cmake --build build -j "$jobs"

step "tests"
(cd build && ctest --output-on-failure -j "$jobs" "${skip_slow[@]}" "$@")
tools/ci/isa_levels.sh build/swinrun "$repo/test-data/f12_c32_ts/model.onnx"

if [ -d tests/cuemu ]; then
    step "CUDA emulator, unit, fault-injection and load tests under AddressSanitizer + UBSan"
    # labels emu and unit. Left to the main pass: windows_rss (it measures the resident set,
    # which ASan's quarantine inflates wherever something allocates per window: OpenBLAS's
    # AVX-512 small-matrix GEMM kernels malloc 3 KiB per call), the half twin of
    # pipeline_device_blend_cli (label slow; the float32 one runs here), the benchmark smokes
    # cuda_bench_* (their kernels run here in cuda_forward*) and the non-cubic whole model
    # e2e_emu_f12_64x32x96_ts (190 s here; its kernels' non-cubic geometries run here in the
    # op tests on awkward shapes).
    asan_tests=(-L "emu|unit" -E '^(windows_rss|pipeline_device_blend_cli_half|cuda_bench_.*|e2e_emu_f12_64x32x96_ts)$')
    # the instrumented Triton backend inside the (uninstrumented) tritonserver
    asan_triton=(-R "triton_(window|segment|errors)")
    # one GPU architecture: the device code is only linked here, never run (no GPU in CI); the
    # main build compiles every architecture
    cmake -S . -B build-asan "${launcher[@]}" -DSWIN_SANITIZE=address,undefined -DSWIN_CUDA_ARCHS=80-real -DSWIN_PYTHON="$py" \
        -DSWIN_TEST_DATA="$repo/test-data" -DSWIN_TRITON=ON -DSWIN_TRITON_PYTHON="$triton_py" \
        > build-asan-configure.log || { cat build-asan-configure.log; exit 1; }
    # only the targets these tests run (tools/ci/test_targets.py)
    asan_targets="$("$py" tools/ci/test_targets.py build-asan "${asan_tests[@]}" -- "${asan_triton[@]}")"
    cmake --build build-asan -j "$jobs" --target $asan_targets
    (cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j "$jobs" "${asan_tests[@]}")
    # libasan preloaded into the server alone; the RSS tests (memory, concurrency) mean nothing
    # under ASan's quarantine
    (cd build-asan && SWIN_TRITON_SERVER_PRELOAD="$(gcc -print-file-name=libasan.so)" ASAN_OPTIONS=detect_leaks=0 \
        UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ctest --output-on-failure "${asan_triton[@]}")
fi

step "the GPU check on a simulated GPU image, up to its first step that needs a GPU"
tools/gpu/gpu_image_sim.sh

step "four contexts on one model in four threads under ThreadSanitizer"
cmake -S . -B build-tsan "${launcher[@]}" -DSWIN_SANITIZE=thread -DCMAKE_CUDA_COMPILER=NOTFOUND -DSWIN_PYTHON="$py" \
    -DSWIN_TEST_DATA="$repo/test-data" > build-tsan-configure.log || { cat build-tsan-configure.log; exit 1; }
cmake --build build-tsan -j "$jobs" --target test_shared_model
TSAN_OPTIONS=halt_on_error=1 build-tsan/tests/load/test_shared_model "$repo/test-data/f12_c32_ts/model.onnx" --threads 2

step "fuzz harnesses: short runs on the seeds and the regressions (clang libFuzzer)"
cmake -S . -B build-fuzz "${launcher[@]}" -DSWIN_FUZZ=ON -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DSWIN_PYTHON="$py" \
    -DSWIN_TEST_DATA="$repo/test-data" > build-fuzz-configure.log || { cat build-fuzz-configure.log; exit 1; }
# fuzz_harnesses: every harness CMake defines (the DICOM ones when it found DCMTK), the ones each
# fuzzshort test runs
cmake --build build-fuzz -j "$jobs" --target fuzz_harnesses
(cd build-fuzz && ctest --output-on-failure -j "$jobs" -L fuzzshort)
if [ ${#launcher[@]} -gt 0 ]; then
    step "compiler cache"
    ccache --show-stats | grep -E 'Hits|Misses|Cache size' || true
fi
