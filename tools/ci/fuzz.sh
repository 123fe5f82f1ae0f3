#!/usr/bin/env bash
# Long coverage-guided fuzzing runs of every harness (tests/fuzz/README.md).
#   tools/ci/fuzz.sh [--time SECONDS] [--parallel N] [--out DIR] [HARNESS...]
#   --time      how long each harness runs (default 1200: 20 minutes)
#   --parallel  how many harnesses run at once (default 1; each uses one core)
#   --out       where each harness keeps corpus/, findings/ and log.txt (default build-fuzz/fuzz/long);
#               a corpus left by an earlier run is where the next one starts
#   HARNESS     a harness tests/fuzz/harness/CMakeLists.txt defines, e.g. fuzz_onnx (default: every one
#               it defines in this build, the DICOM reader's and the node's when CMake found DCMTK)
# Configures and builds build-fuzz/ (clang, -DSWIN_FUZZ=ON; only the harnesses and what they
# link), makes the seed corpora from test-data/ (tools/ci/fuzz_seeds.py; $SWIN_TEST_DATA and
# $SWIN_PYTHON override where the models and the venv are), runs the harnesses at nice 10
# with tests/fuzz/run_harness.sh (-timeout=10 -rss_limit_mb=2048, -max_len per format) on
# their seeds and tests/fuzz/regressions, and prints per harness its duration, executions,
# exec/s, coverage (cov/ft), corpus size and findings. Exit 1 when any harness found something.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo"
seconds=1200 parallel=1 out="$repo/build-fuzz/fuzz/long"
harnesses=()
while [ $# -gt 0 ]; do
    case "$1" in
        --time) seconds="$2"; shift 2 ;;
        --parallel) parallel="$2"; shift 2 ;;
        --out) out="$(realpath -m "$2")"; shift 2 ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        fuzz_*) harnesses+=("$1"); shift ;;
        *) echo "fuzz.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
test_data="${SWIN_TEST_DATA:-$repo/test-data}"
py="${SWIN_PYTHON:-$HOME/.cache/swinrun/venv/bin/python}"

cmake -S . -B build-fuzz -DSWIN_FUZZ=ON -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DSWIN_PYTHON="$py" \
    -DSWIN_TEST_DATA="$test_data" > build-fuzz-configure.log || { cat build-fuzz-configure.log; exit 1; }
[ ${#harnesses[@]} -gt 0 ] || mapfile -t harnesses < build-fuzz/fuzz_harnesses.txt
cmake --build build-fuzz -j "$(nproc)" --target "${harnesses[@]}"
seeds="$repo/build-fuzz/fuzz/seeds"
"$py" tools/ci/fuzz_seeds.py "$test_data" "$seeds"

mkdir -p "$out"
echo "fuzzing ${harnesses[*]} for ${seconds}s each, $parallel at a time; logs in $out"
for h in "${harnesses[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
    nice -n 10 tests/fuzz/run_harness.sh "build-fuzz/tests/fuzz/harness/$h" "$seconds" "$seeds" "$out/$h" \
        tests/fuzz/regressions > "$out/$h.summary" 2>&1 &
done
wait || true
status=0
for h in "${harnesses[@]}"; do
    head -1 "$out/$h.summary"
    grep -q ', findings 0, exit 0$' "$out/$h.summary" || status=1
done
[ "$status" -eq 0 ] || echo "fuzz.sh: findings above; each harness's log.txt and findings/ are in $out"
exit "$status"
