#!/usr/bin/env bash
# Sets everything up on a fresh Debian 12 machine and runs the main job on the default
# model: MONAI's BTCV Swin UNETR configuration (feature size 48, 1 input channel, 14 organ
# classes, 96^3 export cube) with random weights (no weights can be downloaded here), on a
# CT-like 96^3 input; shows what the model is, the exact memory it will use, runs it, and
# checks the logits against ONNX Runtime on the same file and input.
# Usage: tools/demo.sh [WORKDIR]   (default: demo/ in the repository, git-ignored)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${1:-$repo/demo}"
cd "$repo"
mkdir -p "$work"

step() { printf '\n== %s\n' "$*"; }

step "environment"
tools/setup_env.sh
py="$(tools/setup_env.sh --print-python)"

step "build"
cmake -S . -B build -DSWIN_PYTHON="$py" > build-configure.log || { cat build-configure.log; exit 1; }
cmake --build build -j "$(nproc)" --target swinrun

model="$work/swin_unetr_btcv_f48.onnx"
if [ ! -f "$model" ]; then
    step "export the default model (MONAI SwinUNETR f=48, 96^3, random weights, seed 0)"
    "$py" tools/export_swin_unetr.py --feature-size 48 --in-channels 1 --out-channels 14 \
        --size 96 96 96 --exporter torchscript --seed 0 --out "$model"
fi

step "ONNX Runtime reference on a CT-like input"
"$py" tools/ort_reference.py "$model" --shape 1 1 96 96 96 --seed 0 \
    --save-input "$work/input.npy" --out "$work/logits_ort.npy"

step "swinrun info"
build/swinrun info "$model"
step "swinrun plan (exact bytes, before anything is allocated)"
build/swinrun plan "$model"
step "swinrun forward"
/usr/bin/time -f "peak RSS %M KiB, %e s wall" build/swinrun forward "$model" "$work/input.npy" "$work/logits_swinrun.npy"
step "agreement with ONNX Runtime"
"$py" tools/check_logits.py "$work/logits_swinrun.npy" "$work/logits_ort.npy"
