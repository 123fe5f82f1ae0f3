#!/usr/bin/env bash
# One end-to-end agreement test: swinrun forward on a test-data case, compared with the
# ONNX Runtime logits of the same ONNX file and input by tools/check_logits.py.
#   forward_case.sh SWINRUN PYTHON CASE_DIR WORK_DIR [FORWARD_OPTION...] [-- CHECK_OPTION...]
# Options after WORK_DIR go to `swinrun forward` (e.g. --backend cuda for swinrun_emu),
# those after `--` to check_logits.py (e.g. the half-precision criterion).
set -euo pipefail
swinrun="$1" py="$2" case_dir="$3" work="$4"
shift 4
fwd=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do fwd+=("$1"); shift; done
[ $# -gt 0 ] && shift   # the "--"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
for f in model.onnx input.npy logits.npy; do
    if [ ! -f "$case_dir/$f" ]; then
        echo "FAIL: $case_dir/$f is missing: run tools/export/make_test_data.sh first" >&2
        exit 1
    fi
done
mkdir -p "$work"
# one output per case and option set (tests of the same case may run in parallel)
tag="$(printf '%s' "${fwd[*]-}" | tr -c 'A-Za-z0-9' '_')"
out="$work/$(basename "$case_dir")${tag:+_$tag}.logits.npy"
rm -f "$out"
/usr/bin/time -f "swinrun forward: %e s wall, peak RSS %M KiB" \
    "$swinrun" forward "$case_dir/model.onnx" "$case_dir/input.npy" "$out" ${fwd[@]+"${fwd[@]}"}
"$py" "$repo/tools/export/check_logits.py" "$out" "$case_dir/logits.npy" "$@"
