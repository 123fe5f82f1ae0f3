#!/bin/bash
# A whole CT (ct60: 400 x 400 x 160, 64 cubes at overlap 0.5, the f=48 model, CPU float32, two
# threads) through two swinrun builds, alternating, twice; per-phase times in
# DIR/wct_NAME_ROUND.json, the label maps in /tmp/wct_NAME.nii.gz (compare them with cmp).
#   whole_ct_ab.sh DIR NAME_A SWINRUN_A NAME_B SWINRUN_B
set -euo pipefail
dir="$1"
for r in 1 2; do
    for v in "$2=$3" "$4=$5"; do
        name="${v%%=*}" bin="${v#*=}"
        "$bin" /work/bench43/ct60.nii.gz "/tmp/wct_$name.nii.gz" --threads 2 \
            --model /work/main/test-data/f48_c96_default/model.onnx --overlap 0.5 \
            --json "$dir/wct_${name}_$r.json" -q
    done
done
