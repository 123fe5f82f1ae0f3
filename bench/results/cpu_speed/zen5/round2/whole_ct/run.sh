#!/bin/bash
# one alternating pair: today's build for #41 (d012b71) and this build, whole CT on the CPU
cd /work/b41/wct
run() { /usr/bin/time -v -o time_$1.txt $2 /work/bench43/ct60.nii.gz out_$1.nii.gz --model /work/main/test-data/f48_c96_default/model.onnx --overlap 0.5 --json run_$1.json -q; }
run base /work/base/build-cpu/swinrun; run main /work/main/build-cpu/swinrun
echo DONE
