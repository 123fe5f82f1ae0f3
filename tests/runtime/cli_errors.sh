#!/usr/bin/env bash
# The CLI on bad input: each case must exit with the expected code, print exactly one line
# on stderr that names the problem, and leave no output file behind.
#   cli_errors.sh SWINRUN CASE_DIR (a test-data case with model.onnx and input.npy)
set -u
swinrun="$1" case_dir="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fails=0 passes=0

# expect NAME CODE PATTERN OUTFILE -- ARGS...
expect() {
    local name="$1" code="$2" pattern="$3" out="$4"; shift 5
    "$swinrun" "$@" > "$work/stdout" 2> "$work/stderr"
    local rc=$? lines
    lines=$(grep -vc '^swinrun: run ' "$work/stderr")
    if [ "$rc" -ne "$code" ] || [ "$lines" -ne 1 ] || ! grep -q -- "$pattern" "$work/stderr" \
        || { [ -n "$out" ] && ls "$out"* > /dev/null 2>&1; }; then
        echo "FAIL $name: exit $rc (want $code), $lines stderr lines, stderr:"; cat "$work/stderr"
        fails=$((fails + 1))
    else
        echo "ok   $name: $(cat "$work/stderr")"
        passes=$((passes + 1))
    fi
}

: > "$work/empty.onnx"
head -c 100000 "$case_dir/model.onnx" > "$work/trunc.onnx"
head -c 3000 "$case_dir/input.npy" > "$work/trunc.npy"
printf 'not a model' > "$work/text.onnx"
model="$case_dir/model.onnx" in="$case_dir/input.npy"

expect "empty model"        2 "empty file"           "" -- info "$work/empty.onnx"
expect "truncated model"    2 "truncated"            "" -- info "$work/trunc.onnx"
expect "text as model"      2 "text.onnx"            "" -- info "$work/text.onnx"
expect "missing model"      2 "cannot open"          "" -- plan "$work/none.onnx"
expect "bad cube"           2 "multiple of 32"       "" -- plan "$model" --cube 48 32 32
expect "memory limit"       1 "raise --mem-limit"    "" -- plan "$model" --mem-limit 1M
if "$swinrun" plan "$model" --backend cuda 2>&1 | grep -q "has no CUDA backend"; then
    echo "skip limit names --half: this build has no CUDA backend"
else
    expect "limit names --precision fp16" 1 "or --precision fp16 (" "" -- plan "$model" --backend cuda --mem-limit 25M
fi
expect "half on the CPU"    2 "CUDA backend mode"    "" -- plan "$model" --backend cpu --half
expect "fp16 on the CPU"    2 "CUDA backend mode"    "" -- plan "$model" --backend cpu --precision fp16
expect "bf16 on CUDA"       2 "CPU backend mode"     "" -- plan "$model" --precision bf16 --backend cuda
expect "unknown precision"  2 "fp32, fp16 (CUDA) or bf16" "" -- plan "$model" --precision fp8
expect "cube out of range"  2 "32..1024"             "" -- plan "$model" --cube 2048 32 32
expect "option of another verb" 2 "takes no option"  "" -- info "$model" --cube 32 32 32
expect "unknown option"     2 "unknown option"       "" -- plan "$model" --frobnicate
expect "missing value"      2 "needs a value"        "" -- plan "$model" --threads
expect "truncated input"    2 "truncated"            "$work/o1.npy" -- forward "$model" "$work/trunc.npy" "$work/o1.npy"
expect "missing output dir" 2 "no such directory"    "" -- forward "$model" "$in" "$work/nodir/o.npy"
expect "model as input"     2 "not a .npy"           "$work/o2.npy" -- forward "$model" "$model" "$work/o2.npy"
expect "limit before alloc" 1 "raise --mem-limit"    "$work/o3.npy" -- forward "$model" "$in" "$work/o3.npy" --mem-limit 2M
expect "unknown command"    2 "unknown command"      "" -- frobnicate
# paths as users mistype them: the missing input named first, before any model is looked for
expect "missing folder"     2 "missing_folder: no such file or folder, and no command" "" -- missing_folder "$work/o4.nii.gz"
expect "missing path"       2 "nodir/ct: no such file or folder (try" "" -- "$work/nodir/ct" "$work/o5.nii.gz"
expect "missing input file" 2 "none.nii.gz: no such file or folder" "$work/o6.nii.gz" -- "$work/none.nii.gz" "$work/o6.nii.gz"
expect "missing series file" 2 "none.dcm: no such file or folder" "$work/o7.dcm" -- segment "$work/none.dcm" "$work/trunc.npy" "$work/o7.dcm"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
