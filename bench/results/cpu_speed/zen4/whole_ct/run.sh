#!/bin/bash
# whole CT (64 cubes at overlap 0.5) on the CPU, two alternating rounds: the issue's baseline
# (d012b71), this build in float32 and in bfloat16; per-phase times in run_*.json, peak RSS
# in time_*.txt. The CT: tools/export/make_ct_phantom.py ct60.nii.gz --shape 400 400 160 --spacing 0.9 0.9 3.0
out=$(cd "$(dirname "$0")" && pwd)
cd /work/wct
run() { /usr/bin/time -v -o $out/time_$1_$3.txt $2 ct60.nii.gz out_$1.nii.gz --model /work/main/test-data/f48_c96_default/model.onnx --overlap 0.5 --json $out/run_$1_$3.json -q $4; }
for r in 1 2; do
    run base /work/base/build-cpu/swinrun $r
    run main /work/main/build-cpu/swinrun $r
    run bf16 /work/main/build-cpu/swinrun $r "--precision bf16"
done
