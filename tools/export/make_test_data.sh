#!/usr/bin/env bash
# Build the swinrun test matrix: one folder per case under OUTDIR (default: <repo>/test-data).
#
#   tools/export/make_test_data.sh [--slow] [--only CASE[,CASE...]] [--jobs N] [OUTDIR]
#
# Each case folder holds model.onnx (+ model.onnx.data for dynamo), model.json, input.npy,
# logits.npy (ONNX Runtime CPU reference), case.json (= model.json + run_cube, reference, ...),
# export_check.json (torch eager vs ORT at the export cube, weights digest) and cmdline.txt.
# Incremental: a case is skipped when its files exist and cmdline.txt matches the command line
# it would run now. Cases are built N at a time (--jobs N, default: the number of cores; an
# export is one Python thread for most of its run), each printing lines that start with [CASE];
# the derived cases start when the cases they rewrite are done.
#
# Cache: each finished case folder (and each checkpoint case of make_ckpt_data.py) is kept in
# ${SWINRUN_CACHE:-$HOME/.cache/swinrun}/test-data/KEY/CASE, KEY the sha256 of what decides its
# files: the case's command line (cmdline.txt), the versions of python, torch, monai, onnx,
# onnxruntime, onnxscript, numpy, onnxsim, onnxslim, onnxconverter-common, ml_dtypes and
# safetensors, the contents of the generator scripts it runs and of the shell function that runs
# them. A case missing from OUTDIR is copied from its entry when the cache has it ("[CASE] from
# cache"), built otherwise and then stored: copied into a temporary folder in the cache, renamed
# to KEY/. An entry whose files differ from the listing stored beside it (KEY/files.txt: names
# and sizes) or that fails the up-to-date check is removed and the case rebuilt; an entry no
# run has taken for 30 days is removed. SWINRUN_NO_CACHE=1: no cache, every missing case built.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
slow=0
only=""
outdir=""
jobs_max="$(nproc)"
while [ $# -gt 0 ]; do
    case "$1" in
        --slow) slow=1 ;;
        --only) shift; only="${1:-}" ;;
        --only=*) only="${1#--only=}" ;;
        --jobs) shift; jobs_max="${1:-}" ;;
        --jobs=*) jobs_max="${1#--jobs=}" ;;
        -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
        -*) echo "make_test_data: error: unknown option $1" >&2; exit 2 ;;
        *) [ -z "$outdir" ] || { echo "make_test_data: error: more than one OUTDIR" >&2; exit 2; }; outdir="$1" ;;
    esac
    shift
done
outdir="${outdir:-$repo/test-data}"
if ! [[ "$jobs_max" =~ ^[1-9][0-9]*$ ]]; then
    echo "make_test_data: error: --jobs takes a positive number, not '$jobs_max'" >&2
    exit 2
fi
venv="${SWINRUN_VENV:-$HOME/.cache/swinrun/venv}"
PY="${SWINRUN_PYTHON:-$venv/bin/python}"
if [ ! -x "$PY" ]; then
    echo "make_test_data: error: no python at $PY; run tools/ci/setup_env.sh first (or set SWINRUN_PYTHON)" >&2
    exit 2
fi
mkdir -p "$outdir"
export PYTHONWARNINGS=ignore OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}"

failed=()
total_start=$(date +%s)
status_dir="$(mktemp -d)"
trap 'rm -rf "$status_dir"' EXIT

# spawn FUNCTION ARGS...: FUNCTION ARGS... in the background once fewer than --jobs builds run;
# what failed in it goes to the status folder (a subshell cannot add to failed)
spawn() {
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
    (
        failed=()
        "$@" || failed+=("$1")
        if [ ${#failed[@]} -gt 0 ]; then printf '%s\n' "${failed[@]}" > "$status_dir/$BASHPID.failed"; fi
    ) &
}

# join: waits for every spawned build and adds the ones that failed to failed
join() {
    local f
    wait
    for f in "$status_dir"/*.failed; do
        [ -f "$f" ] || continue
        mapfile -t -O "${#failed[@]}" failed < "$f"
        rm -f "$f"
    done
}

cache="${SWINRUN_CACHE:-$HOME/.cache/swinrun}/test-data"
use_cache=1
[ "${SWINRUN_NO_CACHE:-0}" = 0 ] || use_cache=0
versions=""
if [ $use_cache -eq 1 ]; then
    mkdir -p "$cache"
    # temporary folders of runs that were killed while storing; entries no run took for 30 days
    find "$cache" -mindepth 1 -maxdepth 1 -name '.tmp.*' -mmin +60 -exec rm -rf {} +
    find "$cache" -mindepth 1 -maxdepth 1 -type d -mtime +30 -exec rm -rf {} +
    versions="$("$PY" - <<'PYEOF'
import importlib.metadata as md
import platform
import sys
print("python", sys.version, platform.machine())
for p in ("torch", "monai", "onnx", "onnxruntime", "onnxscript", "numpy", "onnxsim", "onnxslim",
          "onnxconverter-common", "ml_dtypes", "safetensors"):
    try:
        print(p, md.version(p))
    except md.PackageNotFoundError:
        print(p, "none")
PYEOF
)"
fi

# complete DIR CMD: DIR holds every file of a case built by the command line CMD
complete() {
    local f
    [ -f "$1/cmdline.txt" ] && [ "$(cat "$1/cmdline.txt")" = "$2" ] || return 1
    for f in model.onnx model.json input.npy logits.npy case.json; do
        [ -f "$1/$f" ] || return 1
    done
}

# cache_key CMD "FUNCTION..." SCRIPT...: the cache key of a case built by CMD through the shell
# FUNCTIONs and the SCRIPTs of tools/export
cache_key() {
    local cmd="$1" fns="$2" s
    shift 2
    {
        printf '%s\n' "$cmd" "$versions"
        declare -f $fns
        for s in "$@"; do sha256sum < "$here/$s"; done
    } | sha256sum | cut -d' ' -f1
}

# listing DIR: DIR's files and their sizes
listing() {
    (cd "$1" && find . -type f -printf '%P %s\n' | LC_ALL=C sort)
}

# from_cache LABEL DIR KEY [CMD]: DIR copied from the cache entry KEY when the entry is whole (its
# files as listed when it was stored and, given CMD, complete for CMD); an entry that is not is removed
from_cache() {
    local label="$1" dir="$2" entry="$cache/$3" cmd="${4:-}" name
    name="$(basename "$dir")"
    [ $use_cache -eq 1 ] && [ -d "$entry" ] || return 1
    if ! [ -f "$entry/files.txt" ] || [ "$(listing "$entry/$name")" != "$(cat "$entry/files.txt")" ] \
        || { [ -n "$cmd" ] && ! complete "$entry/$name" "$cmd"; }; then
        echo "[$label] cache entry $entry is incomplete: removed, rebuilding"
        rm -rf "$entry"
        return 1
    fi
    rm -rf "$dir" "$dir.tmp"
    mkdir -p "$(dirname "$dir")"
    if ! { cp -a "$entry/$name" "$dir.tmp" && mv "$dir.tmp" "$dir"; }; then
        rm -rf "$dir.tmp"
        echo "[$label] copy from the cache failed, rebuilding" >&2
        return 1
    fi
    touch "$entry"
    echo "[$label] from cache"
}

# to_cache DIR KEY: a copy of the finished case DIR stored as the cache entry KEY, whole or not at all
to_cache() {
    local dir="$1" entry="$cache/$2" tmp name
    [ $use_cache -eq 1 ] || return 0
    name="$(basename "$dir")"
    tmp="$(mktemp -d "$cache/.tmp.XXXXXX")" || return 0
    if cp -a "$dir" "$tmp/$name" && listing "$tmp/$name" > "$tmp/files.txt" && mv -T "$tmp" "$entry" 2> /dev/null; then
        return 0
    fi
    # another run stored the same entry first, or the copy failed
    rm -rf "$tmp"
}

# run_case NAME "D H W (run cube)" EXPORT-ARGS...
run_case() {
    local name="$1" run_cube="$2"; shift 2
    if [ -n "$only" ] && [[ ",$only," != *",$name,"* ]]; then return 0; fi
    local dir="$outdir/$name"
    local ci=1 prev="" a
    for a in "$@"; do [ "$prev" = "--in-channels" ] && ci="$a"; prev="$a"; done
    local cmd="export_swin_unetr.py $* | ort_reference.py --shape 1 $ci $run_cube --seed 0 | tools-v1"
    if complete "$dir" "$cmd"; then
        echo "[$name] up to date, skipped"
        return 0
    fi
    local key
    key="$(cache_key "$cmd" run_case export_swin_unetr.py ort_reference.py)"
    from_cache "$name" "$dir" "$key" "$cmd" && return 0
    echo "[$name] building in $dir"
    rm -rf "$dir"; mkdir -p "$dir"
    local t0 t1 t2 t3 reference="ORT CPUExecutionProvider on model.onnx"
    t0=$(date +%s.%N)
    if ! "$PY" "$here/export_swin_unetr.py" "$@" --check --out "$dir/model.onnx" > "$dir/export.log" 2>&1; then
        tail -n 5 "$dir/export.log" >&2
        echo "[$name] FAILED: export (see $dir/export.log)" >&2; failed+=("$name"); return 0
    fi
    t1=$(date +%s.%N)
    grep -E '^exported ' "$dir/export.log" || true
    if ! "$PY" "$here/ort_reference.py" "$dir/model.onnx" --shape 1 "$ci" $run_cube --seed 0 \
            --save-input "$dir/input.npy" --out "$dir/logits.npy" > "$dir/ort.log" 2>&1; then
        local err
        err="$(grep -o 'ORT failed.*' "$dir/ort.log" | sed 's/^ORT failed on [^:]*: //' | cut -c1-1000)"
        echo "[$name] ORT cannot run model.onnx at $run_cube: $err"
        echo "[$name] re-exporting the same weights statically at $run_cube -> ref_model.onnx"
        local margs=() skip=0
        for a in "$@"; do
            if [ $skip -gt 0 ]; then skip=$((skip-1)); continue; fi
            case "$a" in --size) skip=3 ;; --dynamic) ;; *) margs+=("$a") ;; esac
        done
        if ! "$PY" "$here/export_swin_unetr.py" "${margs[@]}" --size $run_cube --out "$dir/ref/model.onnx" \
                >> "$dir/export.log" 2>&1; then
            echo "[$name] FAILED: static re-export" >&2; failed+=("$name"); return 0
        fi
        mv "$dir/ref/model.onnx" "$dir/ref_model.onnx"
        [ -f "$dir/ref/model.onnx.data" ] && mv "$dir/ref/model.onnx.data" "$dir/ref_model.onnx.data"
        local d1 d2
        d1="$("$PY" -c 'import json,sys;print(json.load(open(sys.argv[1]))["weights_sha256"])' "$dir/export_check.json")"
        d2="$("$PY" -c 'import json,sys;print(json.load(open(sys.argv[1]))["weights_sha256"])' "$dir/ref/export_check.json")"
        if [ "$d1" != "$d2" ]; then
            echo "[$name] FAILED: static re-export has different weights ($d1 vs $d2)" >&2; failed+=("$name"); return 0
        fi
        rm -rf "$dir/ref"
        if ! "$PY" "$here/ort_reference.py" "$dir/ref_model.onnx" --input "$dir/input.npy" \
                --out "$dir/logits.npy" 2>> "$dir/ort.log"; then
            echo "[$name] FAILED: ORT on ref_model.onnx (see $dir/ort.log)" >&2; failed+=("$name"); return 0
        fi
        reference="static re-export at run_cube (ORT fails on the dynamic export: $err)"
    fi
    t2=$(date +%s.%N)
    "$PY" - "$dir" "$run_cube" "$reference" "$t0" "$t1" "$t2" <<'PYEOF'
import json, os, sys
d, cube, ref, t0, t1, t2 = sys.argv[1:]
cfg = json.load(open(os.path.join(d, "model.json")))
chk = json.load(open(os.path.join(d, "export_check.json")))
cfg["run_cube"] = [int(v) for v in cube.split()]
cfg["reference"] = ref
cfg["export_seconds"] = round(float(t1) - float(t0), 1)
cfg["reference_seconds"] = round(float(t2) - float(t1), 1)
cfg["torch_vs_ort_max_abs_diff"] = chk.get("torch_vs_ort", {}).get("max_abs_diff")
cfg["weights_sha256"] = chk["weights_sha256"]
cfg["files"] = {f: os.path.getsize(os.path.join(d, f)) for f in sorted(os.listdir(d))
                if f.endswith((".onnx", ".data", ".npy"))}
with open(os.path.join(d, "case.json"), "w") as fh:
    json.dump(cfg, fh, indent=1)
    fh.write("\n")
PYEOF
    printf '%s' "$cmd" > "$dir/cmdline.txt"
    to_cache "$dir" "$key"
    local sz
    sz="$(du -sh "$dir" | cut -f1)"
    printf '[%s] done: export+check %.1fs, reference %.1fs, %s on disk\n' "$name" \
        "$(awk "BEGIN{print $t1 - $t0}")" "$(awk "BEGIN{print $t2 - $t1}")" "$sz"
}

# derive_case NAME BASE KIND: BASE's model rewritten by tools/export/transform_onnx.py KIND, with its
# own ONNX Runtime reference at BASE's run cube (same input seed)
derive_case() {
    local name="$1" base="$2" kind="$3"
    if [ -n "$only" ] && [[ ",$only," != *",$name,"* ]]; then return 0; fi
    local dir="$outdir/$name" bdir="$outdir/$base"
    if [ ! -f "$bdir/case.json" ]; then
        echo "[$name] FAILED: base case $base is missing" >&2; failed+=("$name"); return 0
    fi
    local cube ci
    cube="$("$PY" -c 'import json,sys;print(*json.load(open(sys.argv[1]))["run_cube"])' "$bdir/case.json")"
    ci="$("$PY" -c 'import json,sys;print(json.load(open(sys.argv[1]))["in_channels"])' "$bdir/case.json")"
    local cmd="transform_onnx.py $kind ($(cat "$bdir/cmdline.txt")) | ort_reference.py --shape 1 $ci $cube --seed 0 | tools-v1"
    if complete "$dir" "$cmd"; then
        echo "[$name] up to date, skipped"
        return 0
    fi
    # the base case's command line is in CMD; its files depend on run_case and the exporter too
    local key
    key="$(cache_key "$cmd" "run_case derive_case" export_swin_unetr.py ort_reference.py transform_onnx.py)"
    from_cache "$name" "$dir" "$key" "$cmd" && return 0
    echo "[$name] building in $dir"
    rm -rf "$dir"; mkdir -p "$dir"
    if ! "$PY" "$here/transform_onnx.py" "$kind" "$bdir/model.onnx" "$dir/model.onnx" > "$dir/export.log" 2>&1; then
        tail -n 3 "$dir/export.log" >&2
        echo "[$name] FAILED: transform $kind" >&2; failed+=("$name"); return 0
    fi
    if ! "$PY" "$here/ort_reference.py" "$dir/model.onnx" --shape 1 "$ci" $cube --seed 0 \
            --save-input "$dir/input.npy" --out "$dir/logits.npy" > "$dir/ort.log" 2>&1; then
        tail -n 3 "$dir/ort.log" >&2
        echo "[$name] FAILED: ORT reference" >&2; failed+=("$name"); return 0
    fi
    "$PY" - "$bdir/case.json" "$dir" "$kind" <<'PYEOF'
import json, os, sys
src, d, kind = sys.argv[1:]
cfg = json.load(open(src))
cfg["derived"] = kind
cfg["reference"] = "ORT CPUExecutionProvider on model.onnx"
cfg["files"] = {f: os.path.getsize(os.path.join(d, f)) for f in sorted(os.listdir(d))
                if f.endswith((".onnx", ".data", ".npy"))}
for k in ("export_seconds", "reference_seconds", "torch_vs_ort_max_abs_diff"):
    cfg.pop(k, None)
with open(os.path.join(d, "case.json"), "w") as fh:
    json.dump(cfg, fh, indent=1)
    fh.write("\n")
PYEOF
    cp "$bdir/model.json" "$dir/model.json"
    printf '%s' "$cmd" > "$dir/cmdline.txt"
    to_cache "$dir" "$key"
    echo "[$name] done: $(tail -n 1 "$dir/export.log")"
}

# trained weights as PyTorch and safetensors write them, with MONAI's own logits (tools/export/make_ckpt_data.py)
# ckpt_cases NAME...: make_ckpt_data.py's cases NAME in OUTDIR/ckpt; a case is skipped when its
# logits.npy exists (make_ckpt_data.py's own check), taken from the cache when it has it; one
# make_ckpt_data.py run builds the others, each then stored
ckpt_cases() {
    local n build=()
    local -A keys=()
    for n in "$@"; do
        [ ! -f "$outdir/ckpt/$n/logits.npy" ] || continue
        keys[$n]="$(cache_key "make_ckpt_data.py $n" ckpt_cases make_ckpt_data.py export_swin_unetr.py)"
        from_cache "ckpt/$n" "$outdir/ckpt/$n" "${keys[$n]}" || build+=("$n")
    done
    [ ${#build[@]} -gt 0 ] || return 0
    "$PY" "$here/make_ckpt_data.py" "$outdir/ckpt" "${build[@]}" || return 1
    for n in "${build[@]}"; do to_cache "$outdir/ckpt/$n" "${keys[$n]}"; done
}
# ckpt_all: every checkpoint case of this run (--slow adds f48)
ckpt_all() {
    local ckpt_default
    read -ra ckpt_default <<< "$("$PY" "$here/make_ckpt_data.py" --list)"
    ckpt_cases "${ckpt_default[@]}" || failed+=(ckpt)
    [ $slow -eq 0 ] || ckpt_cases f48 || failed+=(ckpt_f48)
}

TS="--exporter torchscript"
# the longest builds first
if [ $slow -eq 1 ]; then
    spawn run_case f48_c96_ts      "96 96 96" --feature-size 48 --size 96 96 96 $TS --opset 17
    spawn run_case f48_c96_default "96 96 96" --feature-size 48 --size 96 96 96
fi
if [ -z "$only" ] || [[ ",$only," == *,ckpt,* ]]; then
    spawn ckpt_all
fi
spawn run_case f12_c32_ts          "32 32 32" --feature-size 12 --size 32 32 32 $TS --opset 17
spawn run_case f12_c64_dynamo      "64 64 64" --feature-size 12 --size 64 64 64 --exporter dynamo --opset 18
spawn run_case f24_c64_v2_ts       "64 64 64" --feature-size 24 --size 64 64 64 --use-v2 $TS --opset 17
spawn run_case f12_64x32x96_ts     "64 32 96" --feature-size 12 --size 64 32 96 $TS --opset 17
spawn run_case f12_c32_nonorm_ts   "32 32 32" --feature-size 12 --size 32 32 32 --no-normalize $TS --opset 17
spawn run_case f12_c32_mergingv2_ts "32 32 32" --feature-size 12 --size 32 32 32 --downsample mergingv2 $TS --opset 17
spawn run_case f12_c32_pre15_ts    "32 32 32" --feature-size 12 --size 32 32 32 --merge-order pre15 $TS --opset 17
spawn run_case f12_c32_misc_ts     "32 32 32" --feature-size 12 --size 32 32 32 --depths 1,3,2,1 --heads 2,4,6,12 \
                                        --window 5 --no-qkv-bias --patch-norm --instnorm-affine $TS --opset 17
spawn run_case f12_dyn_ts          "64 64 64" --feature-size 12 --size 32 32 32 --dynamic $TS --opset 17
# every opset the two exporters emit; f12_c32_default is what torch.onnx.export(model, x, path) gives today
spawn run_case f12_c32_default     "32 32 32" --feature-size 12 --size 32 32 32
for o in 16 18 19 20; do spawn run_case f12_c32_ts$o "32 32 32" --feature-size 12 --size 32 32 32 $TS --opset $o; done
for o in 19 21 22 23; do spawn run_case f12_c32_dynamo$o "32 32 32" --feature-size 12 --size 32 32 32 --exporter dynamo --opset $o; done
# MONAI 1.6's use_flash_attention: decomposed by TorchScript, one Attention node at opset 23
spawn run_case f12_c32_flash_ts    "32 32 32" --feature-size 12 --size 32 32 32 --flash-attention $TS --opset 17
spawn run_case f12_c32_flash_dynamo23 "32 32 32" --feature-size 12 --size 32 32 32 --flash-attention --exporter dynamo --opset 23
# a small window (4 x 5 x 4, not a cube): dynamo constant-folds each small table[index] lookup to
# (n*n, heads) and leaves its view to (1, heads, n, n), no table or index left to tell the window;
# flash attention adds the bias to the mask before attention, and the sum is folded too where both
# are small (stage 3: one head, 2 windows)
spawn run_case f12_w454_flash_dynamo21 "64 32 32" --feature-size 12 --size 64 32 32 --window 4,5,4 --heads 3,1,1,12 \
                                        --flash-attention --exporter dynamo --opset 21
# norm_name='batch': both exporters fold each batch norm into its conv
spawn run_case f12_c32_batch_ts    "32 32 32" --feature-size 12 --size 32 32 32 --batch-norm $TS --opset 17
spawn run_case f12_c32_batch_default "32 32 32" --feature-size 12 --size 32 32 32 --batch-norm
# the other constructor arguments at once: channels, depths, mlp_ratio, a non-cubic window, checkpointing
spawn run_case f24_c64_cfg_ts      "64 64 64" --feature-size 24 --in-channels 4 --out-channels 3 --depths 2,2,6,2 \
                                        --mlp-ratio 2 --window 7,5,6 --use-checkpoint $TS --opset 18
# head dims 16 and 32 (the half mode's tensor-core attention, window_attention_wmma.cuh):
# f=48 with MONAI's default heads (head dim 16 in every stage), and f=24 with heads 3,3,3,6
# (head dims 8, 16, 32, 32) and window 3, so that the head-dim-32 stages have shifted, padded windows
spawn run_case f48_c32_hd16_ts     "32 32 32" --feature-size 48 --size 32 32 32 $TS --opset 17
spawn run_case f24_c32_hd32_ts     "32 32 32" --feature-size 24 --size 32 32 32 --heads 3,3,3,6 --window 3 $TS --opset 17
# one output channel: a sigmoid model (labels where its sigmoid >= 0.5)
spawn run_case f12_c32_sigmoid_ts  "32 32 32" --feature-size 12 --size 32 32 32 --out-channels 1 $TS --opset 17

join
# what users' post-processing tools make of an export (tools/export/transform_onnx.py)
for base in f12_c32_ts f12_c32_default; do
    spawn derive_case "${base}_onnxsim" "$base" onnxsim
    spawn derive_case "${base}_onnxslim" "$base" onnxslim
    spawn derive_case "${base}_ortbasic" "$base" ort-basic
done
spawn derive_case f12_c32_ts_fp16w       f12_c32_ts fp16-weights
spawn derive_case f12_c32_default_bf16w  f12_c32_default bf16-weights
spawn derive_case f12_c32_default_fp16g  f12_c32_default fp16-graph
spawn derive_case f12_c32_default_fardata f12_c32_default far-data
# every bias and mask folded into the constant mask of opset 23's Attention
spawn derive_case f12_c32_flash_dynamo23_onnxsim f12_c32_flash_dynamo23 onnxsim
# a folded bias + mask stored as float16 (bias - 100 rounded there)
spawn derive_case f12_w454_flash_dynamo21_fp16w f12_w454_flash_dynamo21 fp16-weights
join

echo "make_test_data: $(( $(date +%s) - total_start ))s total, output in $outdir"
if [ ${#failed[@]} -gt 0 ]; then
    echo "make_test_data: FAILED cases: ${failed[*]}" >&2
    exit 1
fi
