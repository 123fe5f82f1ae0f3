#!/usr/bin/env bash
# Half mode on an input far outside the training range (values ~3e4): float16 activations
# overflow, and swinrun must say so (exit 1, one line naming --half) and write no logits;
# the same input in float32 must give finite logits.
#   half_overflow.sh SWINRUN_EMU PYTHON CASE_DIR WORK_DIR
set -euo pipefail
swinrun="$1" py="$2" case_dir="$3" work="$4"
mkdir -p "$work"
in="$work/overflow_input.npy" out="$work/overflow_half.npy" ref="$work/overflow_f32.npy"
rm -f "$out" "$ref"
"$py" -c "import numpy as np, sys; np.save(sys.argv[1], (np.random.default_rng(0).standard_normal((1, 1, 32, 32, 32)) * 3e4).astype(np.float32))" "$in"
rc=0
"$swinrun" forward "$case_dir/model.onnx" "$in" "$out" --backend cuda --half 2> "$work/overflow.err" || rc=$?
cat "$work/overflow.err"
[ "$rc" -eq 1 ] || { echo "FAIL: exit $rc, want 1"; exit 1; }
grep -q "not finite.*run with --precision fp32" "$work/overflow.err" || { echo "FAIL: message does not say it"; exit 1; }
[ ! -e "$out" ] || { echo "FAIL: $out was written"; exit 1; }
"$swinrun" forward "$case_dir/model.onnx" "$in" "$ref" --backend cpu
"$py" -c "import numpy as np, sys; y = np.load(sys.argv[1]); assert np.isfinite(y).all(), 'float32 logits not finite'" "$ref"
echo "PASS: half overflow reported, float32 finite"
