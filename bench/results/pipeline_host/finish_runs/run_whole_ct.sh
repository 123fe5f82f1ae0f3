#!/bin/bash
# whole CT (ct60: 400 x 400 x 160, 64 cubes at overlap 0.5, f=48 model, CPU float32): 50bf2b4
# (swinrun_head) and f24aa47 (swinrun_final), alternating; per-phase times in wct_*.json
for r in 1 2; do
    for v in head final; do
        /work/s51/swinrun_$v /work/bench43/ct60.nii.gz /tmp/wct_$v.nii.gz --threads 2 \
            --model /work/main/test-data/f48_c96_default/model.onnx --overlap 0.5 --json wct_${v}_$r.json -q
    done
done
