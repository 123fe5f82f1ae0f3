#!/bin/bash
# whole CT (ct60: 400 x 400 x 160, 64 cubes at overlap 0.5, f=48 model, CPU float32), HEAD
# before this change (swinrun_head) and with it (swinrun_new), alternating; per-phase times
# in wct_*.json
for r in 1 2; do
    for v in head new; do
        /work/s51/swinrun_$v /work/bench43/ct60.nii.gz /tmp/wct_$v.nii.gz --threads 2 \
            --model /work/main/test-data/f48_c96_default/model.onnx --overlap 0.5 --json wct_${v}_$r.json -q
    done
done
