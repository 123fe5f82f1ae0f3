#!/usr/bin/env bash
# An export whose relative-position bias was constant-folded (made by the loader test
# loader_folded_bias from f12_c32_ts): at the export cube it must agree with ONNX Runtime
# on the original file; at a cube whose windows need table rows the folded bias never
# held, swinrun must refuse with one clear line before running.
#   folded_bias.sh SWINRUN PYTHON FOLDED.onnx CASE_DIR WORK
set -euo pipefail
swinrun="$1" py="$2" folded="$3" case_dir="$4" work="$5"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
mkdir -p "$work"
"$swinrun" forward "$folded" "$case_dir/input.npy" "$work/folded.npy"
"$py" "$repo/tools/export/check_logits.py" "$work/folded.npy" "$case_dir/logits.npy"
if "$swinrun" plan "$folded" --cube 64 64 64 2> "$work/err.txt"; then
    echo "FAIL: a 64^3 plan was accepted although the folded bias only covers the 32^3 windows" >&2
    exit 1
fi
grep -q "folded its relative-position bias" "$work/err.txt" || { cat "$work/err.txt"; exit 1; }
echo "ok: refused at 64^3: $(cat "$work/err.txt")"
