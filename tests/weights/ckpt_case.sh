#!/usr/bin/env bash
# One checkpoint of the matrix (tools/export/make_ckpt_data.py): swinrun forward on the weights file
# itself, compared with MONAI's forward on the same weights by tools/export/check_logits.py; where the
# case has its ONNX twin (model.onnx, the same weights exported), also with swinrun's forward on it
# (the exporters fold batch norms, so within the criterion rather than bitwise).
#   ckpt_case.sh SWINRUN PYTHON CASE_DIR WORK_DIR
set -euo pipefail
swinrun="$1" py="$2" case_dir="$3" work="$4"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
model="$(ls "$case_dir"/model.pt "$case_dir"/model.safetensors 2>/dev/null | head -1 || true)"
if [ -z "$model" ] || [ ! -f "$case_dir/logits.npy" ]; then
    echo "FAIL: $case_dir lacks its weights or logits.npy: run tools/export/make_test_data.sh (or tools/export/make_ckpt_data.py) first" >&2
    exit 1
fi
mkdir -p "$work"
out="$work/$(basename "$case_dir").logits.npy"
rm -f "$out"
/usr/bin/time -f "swinrun forward: %e s wall, peak RSS %M KiB" "$swinrun" forward "$model" "$case_dir/input.npy" "$out"
"$py" "$repo/tools/export/check_logits.py" "$out" "$case_dir/logits.npy"
if [ -f "$case_dir/model.onnx" ]; then
    twin="$work/$(basename "$case_dir").onnx_twin.logits.npy"
    rm -f "$twin"
    "$swinrun" forward "$case_dir/model.onnx" "$case_dir/input.npy" "$twin" 2> /dev/null
    echo -n "against the ONNX twin: "
    "$py" "$repo/tools/export/check_logits.py" "$out" "$twin"
fi
