#!/bin/bash
# one alternating round, whole CT (64 cubes at overlap 0.5) on the CPU: the baseline
# (d012b71), the last round's head (71b51ce) and this build; per-phase times in run_*.json
cd /work/b45/wct
run() { /usr/bin/time -v -o time_$1.txt $2 /work/bench43/ct60.nii.gz out_$1.nii.gz --model /work/main/test-data/f48_c96_default/model.onnx --overlap 0.5 --json run_$1.json -q; }
run base /work/base/build-cpu/swinrun; run round2 /work/ref/build-cpu/swinrun; run main /work/main/build-cpu/swinrun
