#!/usr/bin/env bash
# Sets everything up on a fresh Debian 12 machine and runs the main job: segment a CT-like
# volume with the default model and write the label map on the CT's own grid, with a
# preview PNG.
#   The model: MONAI's trained BTCV Swin UNETR from the model zoo (swinrun fetch, docs/fetch.md)
#   where the zoo can be reached within a short timeout; otherwise the same configuration
#   (feature size 48, 1 input channel, 14 organ classes, 96^3 export cube) with random
#   weights, whose labels are noise, not anatomy. Give your own model with
#   SWINRUN_MODEL=/path/model.onnx (tools/export/export_swin_unetr.py --checkpoint makes one).
#   The CT is a synthetic abdominal phantom (tools/export/make_ct_phantom.py): int16 HU, LPS,
#   1.2 x 1.2 x 2.5 mm, 240 x 240 x 96 voxels.
# Also checks one window's logits against ONNX Runtime on the same file and input.
# Usage: tools/demo.sh [WORKDIR]   (default: demo/ in the repository, git-ignored)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${1:-$repo/demo}"
cd "$repo"
mkdir -p "$work"

step() { printf '\n== %s\n' "$*"; }

step "environment"
tools/ci/setup_env.sh
py="$(tools/ci/setup_env.sh --print-python)"

step "build"
cmake -S . -B build -DSWIN_PYTHON="$py" > build-configure.log || { cat build-configure.log; exit 1; }
cmake --build build -j "$(nproc)" --target swinrun

onnx="$work/swin_unetr_btcv_f48.onnx"
model="${SWINRUN_MODEL:-}"
if [ -z "$model" ]; then
    step "fetch MONAI's trained model (model zoo, swin_unetr_btcv_segmentation)"
    if build/swinrun fetch --timeout 15; then
        model="${XDG_DATA_HOME:-$HOME/.local/share}/swinrun/bundles/swin_unetr_btcv_segmentation"
    else
        echo "demo: the model zoo could not be reached from here; falling back to a random-weight export"
        echo "demo: of the same configuration: the labels below are noise, not organs"
    fi
fi
if [ -z "$model" ] || [ "$model" = "$onnx" ]; then
    model="$onnx"
    if [ ! -f "$model" ]; then
        step "export the random-weight model (MONAI SwinUNETR f=48, 96^3, seed 0)"
        # the exporter's tracer warnings go to a log, shown only when the export fails
        "$py" tools/export/export_swin_unetr.py --feature-size 48 --in-channels 1 --out-channels 14 \
            --size 96 96 96 --exporter torchscript --seed 0 --out "$model" 2> "$work/export.log" ||
            { cat "$work/export.log"; exit 1; }
    fi
fi
[ -f "$work/ct.nii.gz" ] || "$py" tools/export/make_ct_phantom.py "$work/ct.nii.gz"

step "swinrun info"
build/swinrun info "$model"
step "swinrun plan (exact bytes, before anything is allocated)"
build/swinrun plan "$model"
# The same window on a CUDA GPU (planning needs none): all-in device bytes, float32 and half.
for mode in "" --half; do
    build/swinrun plan "$model" --backend cuda $mode | grep -E '^(backend|total)'
done

step "segment the CT (sliding 96^3 windows, overlap 0.5, labels on the CT's grid)"
/usr/bin/time -f "peak RSS %M KiB, %e s wall" \
    build/swinrun "$work/ct.nii.gz" "$work/labels.nii.gz" --model "$model" \
    --preview "$work/preview.png" --json "$work/segment.json"

step "one window against ONNX Runtime (same weights, same input)"
reference="$model"
if [ -d "$model" ]; then
    # a bundle: ONNX Runtime runs its network exported with its weights (tools/export/bundle_to_onnx.py)
    reference="$work/bundle_twin.onnx"
    [ -f "$reference" ] || "$py" tools/export/bundle_to_onnx.py "$model" "$reference" --size 96 96 96 \
        > /dev/null 2> "$work/export.log" || { cat "$work/export.log"; exit 1; }
fi
"$py" tools/export/ort_reference.py "$reference" --shape 1 1 96 96 96 --seed 0 \
    --save-input "$work/input.npy" --out "$work/logits_ort.npy" > /dev/null
build/swinrun forward "$model" "$work/input.npy" "$work/logits_swinrun.npy"
"$py" tools/export/check_logits.py "$work/logits_swinrun.npy" "$work/logits_ort.npy"

step "outputs"
echo "label map  $work/labels.nii.gz (uint8, the CT's affine: overlay it on $work/ct.nii.gz)"
echo "preview    $work/preview.png"
echo "timings    $work/segment.json"
