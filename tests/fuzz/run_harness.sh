#!/usr/bin/env bash
# Runs one libFuzzer harness for a while on its seed corpus and prints one summary line.
#   run_harness.sh HARNESS SECONDS SEEDS WORK [CORPUS_DIR...]
# HARNESS  a fuzz_* binary (tests/fuzz/harness); which seeds it takes follows from its name
# SEEDS    the folder tools/ci/fuzz_seeds.py made (onnx/ and its onnx_data/, nifti/, nifti_gz/, npy/, dicom/,
#          ckpt/, pickle/, bundle/, bundle_yaml/, large_files/, node_config/)
# WORK     keeps what the run found: corpus/ (inputs with new coverage, kept between runs),
#          findings/ (crash-*, leak-*, timeout-*, oom-*; earlier runs' stay, only this run's
#          count), log.txt (libFuzzer's output)
# CORPUS_DIR  more inputs to start from (e.g. tests/fuzz/regressions), read only
# Exits non-zero when libFuzzer reported anything or left a finding. Extra libFuzzer flags
# can come in $SWIN_FUZZ_FLAGS.
set -u
harness="$1" seconds="$2" seeds="$3" work="$4"; shift 4
name="$(basename "$harness")"
case "$name" in
    fuzz_onnx|fuzz_wire) kind=onnx  max_len=1048576 ;;
    fuzz_nifti)          kind=nifti max_len=16384 ;;
    fuzz_nifti_gz)       kind=nifti_gz max_len=16384 ;;
    fuzz_mha)            kind=mha   max_len=16384 ;;
    fuzz_nrrd)           kind=nrrd  max_len=16384 ;;
    fuzz_npy)            kind=npy   max_len=4096 ;;
    fuzz_ckpt)           kind=ckpt  max_len=65536 ;;
    fuzz_pickle)         kind=pickle max_len=65536 ;;
    fuzz_bundle)         kind=bundle max_len=16384 ;;
    fuzz_bundle_yaml)    kind=bundle_yaml max_len=16384 ;;
    fuzz_large_files)    kind=large_files max_len=65536 ;;
    fuzz_triton)         kind=triton max_len=65536 ;;  # apps/triton/fuzz, its seeds committed there
    fuzz_dicom)          kind=dicom max_len=16384 ;;
    fuzz_node_store)     kind=dicom max_len=16384 ;;  # the same files, as C-STORE data sets
    fuzz_node_config)    kind=node_config max_len=16384 ;;
    *) echo "run_harness.sh: unknown harness $name" >&2; exit 2 ;;
esac
[ -d "$seeds/$kind" ] || { echo "run_harness.sh: no seeds in $seeds/$kind (run tools/ci/fuzz_seeds.py)" >&2; exit 2; }
mkdir -p "$work/corpus" "$work/findings" || exit 2
log="$work/log.txt"
started="$work/.started"
touch "$started"
export SWIN_FUZZ_ONNX_DATA="$seeds/onnx_data"
[ "$kind" != dicom ] || export LSAN_OPTIONS="suppressions=$(dirname "$0")/lsan_dcmtk.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
start=$(date +%s)
# shellcheck disable=SC2086
"$harness" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="$max_len" \
    -print_final_stats=1 -artifact_prefix="$work/findings/" ${SWIN_FUZZ_FLAGS:-} \
    "$work/corpus" "$seeds/$kind" "$@" > "$log" 2>&1
rc=$?
elapsed=$(( $(date +%s) - start ))
final_stat() { sed -n "s/^stat::$1: *//p" "$log" | tail -1; }
cov="$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1)"
findings=$(find "$work/findings" -type f -newer "$started" | wc -l)
printf '%s: %ss, %s executions, %s exec/s, %s, corpus %s, findings %s, exit %s\n' "$name" "$elapsed" \
    "$(final_stat number_of_executed_units)" "$(final_stat average_exec_per_sec)" "${cov:-cov: ? ft: ?}" \
    "$(ls "$work/corpus" | wc -l)" "$findings" "$rc"
if [ "$rc" -ne 0 ] || [ "$findings" -ne 0 ]; then
    echo "$name: libFuzzer reported a problem; the end of $log:"
    tail -40 "$log"
    exit 1
fi
