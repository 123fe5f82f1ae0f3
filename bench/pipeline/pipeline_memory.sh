#!/usr/bin/env bash
# Peak host memory of `swinrun CT OUT` on a 512 x 512 x 300 int16 CT (the synthetic phantom,
# 0.78 x 0.78 x 2.5 mm, LPS) against one float per class per voxel of the resampled volume
# (what a full-volume accumulator, as MONAI's sliding_window_inference keeps, needs for the
# logits alone). Not a CTest test: minutes on a small shared box.
#   bench/pipeline/pipeline_memory.sh MODEL.onnx [WORKDIR] [extra swinrun options, e.g. --overlap 0]
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
model="$1"; work="${2:-/tmp/swinrun_memory}"; shift $(( $# >= 2 ? 2 : 1 ))
py="${SWIN_PYTHON:-$HOME/.cache/swinrun/venv/bin/python}"
swinrun="${SWINRUN:-$repo/build/swinrun}"
mkdir -p "$work"
ct="$work/ct_512x512x300.nii.gz"
[ -f "$ct" ] || "$py" "$repo/tools/export/make_ct_phantom.py" "$ct" --shape 512 512 300 --spacing 0.78 0.78 2.5
/usr/bin/time -v "$swinrun" "$ct" "$work/labels.nii.gz" --model "$model" --json "$work/run.json" -q "$@" \
    2> "$work/time.txt"
"$py" - "$work/run.json" "$work/time.txt" <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1]))
rss_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(sys.argv[2]).read()).group(1))
v = r["volumes"][0]
n = v["grid_dim"][0] * v["grid_dim"][1] * v["grid_dim"][2]
full = n * r["classes"] * 4
MiB = 2 ** 20
print(f"input {v['input_dim']} {v['input_axcodes']} spacing {v['input_spacing']} -> grid {v['grid_dim']} "
      f"({n / 1e6:.1f} M voxels), {v['windows']} windows of {r['roi']}, {r['classes']} classes")
print(f"peak RSS (time -v)            {rss_kb * 1024 / MiB:8.1f} MiB")
print(f"peak RSS (getrusage, --json)  {r['peak_rss_bytes'] / MiB:8.1f} MiB")
print(f"planned: pipeline {r['planned_pipeline_bytes'] / MiB:.1f} MiB + model context {r['context_bytes'] / MiB:.1f} MiB"
      f" = {r['planned_total_bytes'] / MiB:.1f} MiB")
print(f"one float per class per resampled voxel: {full / MiB:8.1f} MiB  (peak RSS is {rss_kb * 1024 / full:.2f} x that)")
print(f"seconds: {v['seconds']}")
PY
