#!/usr/bin/env bash
# The check of the CUDA backend on a real GPU, made for a short lease: commands of at most
# 10 minutes on a machine that reaches no package registry, warm for seconds between calls.
# docs/gpu_check.md is the runbook (the exact calls and what to do with the report).
#
# Here (registries reachable, no GPU needed):
#   tools/gpu/gpu_check.sh prepare   fill the git-ignored .gpu_carry/ with what the GPU image lacks:
#                                the .deb files of the build's C libraries (protobuf-c and protoc-c,
#                                NIfTI, libdeflate, OpenBLAS, zlib's headers), the MONAI wheel, the f12_c32_ts
#                                case with its ONNX Runtime CPU logits, and MANIFEST (sha256);
#                                prints the size of tree + carry (a call carries at most 64 MiB)
#   tools/gpu/gpu_check.sh size      prints the size of tree + carry against the 56 MiB budget
#   tools/gpu/gpu_image_sim.sh       runs the steps below up to the first that needs a GPU with the
#                                image's gaps simulated (CI runs it)
# On the GPU machine:
#   tools/gpu/gpu_check.sh run [STEP ...] [--budget S] [-DVAR=VALUE ...]
#       runs the steps named (default: every step not yet passed, in the order below) while the
#       budget lasts (default 560 s, inside one 10-minute call): a step starts only with at least
#       60 s left and is killed at its own limit or at the budget's end, whichever comes first.
#       -D arguments (and GPU_CHECK_CMAKE_ARGS) go to CMake's configure.
#   Every step writes "started" into the report before it begins and its result the moment it
#   ends, so a call killed at its limit still returns what finished. The report is rebuilt in
#   $OUT (gpu_check.md, gpu_check.json, machine.txt, logs.tar.gz) from the state folder
#   (${GPU_CHECK_STATE:-<repo>/.gpu_state}), which a warm machine keeps between calls.
#
# Steps, in order of value (limit in seconds):
#   machine    60  what the machine is: os-release, packages, libraries, toolchain, Python
#                  modules, the card; machine.txt in $OUT at once
#   env       120  fill the gaps: unpack the carried .debs the system lacks into a private
#                  prefix, the MONAI wheel if Python has no MONAI; find nvcc, the card's compute
#                  capability and cuDNN (not carried: 850 MB)
#   build     480  CMake (Ninja when present, every core), one target (swin_gpu_check), SASS
#                  for the card present only
#   tests     300  ctest -L gpu in float32 and in half (CT_DTYPE=f16) with errors attributed
#                  to their op (SWIN_CUDA_SYNC_CHECK=1); a skipped test is a failure
#   agree     120  swinrun forward on the carried f12_c32_ts case, CUDA float32 and half and
#                  the CPU backend, against ONNX Runtime CPU (run there, else the carried logits)
#   export    300  the f=48 96^3 model exported there (MONAI, random weights, seed 0) and its
#                  ONNX Runtime CPU logits
#   agree48   300  swinrun on that model, CUDA float32 and half and the CPU backend, against
#                  those logits (half criterion for half)
#   forward   180  bench_cuda_forward_gpu: the whole f=48 96^3 window timed with CUDA events,
#                  device memory (cudaMemGetInfo, context included) against the plan
#   wholect   300  a 512 x 512 x 300 CT (tools/export/make_ct_phantom.py) segmented file to file
#                  with the exported model on the device, float32 and half: each phase of the
#                  run's --json report, the device's peak memory (nvidia-smi every 50 ms)
#                  against swinrun plan --volume's total, labels of the two compared
#   peers     300  bench/peers/swinbench.py: PyTorch + MONAI on the same weights (eager float32,
#                  TF32, AMP) beside swinrun float32 and half, each in its own process, in
#                  alternating rounds; ONNX Runtime CPU as the agreement reference
#   bench     420  bench_cuda_ops_gpu: every conv3d shape beside cuDNN's fastest algorithm,
#                  the Swin GEMMs beside cuBLAS, float32 and half
#   memcheck  480  compute-sanitizer on every op test, float32 and half, resuming test by test
#   racecheck 480  the same
#   initcheck 300  the same, only when time remains
#   synccheck 300  the same, only when time remains
set -uo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
carry="${GPU_CARRY:-$repo/.gpu_carry}"
state="${GPU_CHECK_STATE:-$repo/.gpu_state}"
out="${OUT:-$state/out}"
STEPS="machine env build tests agree export agree48 forward wholect peers bench memcheck racecheck initcheck synccheck"
declare -A LIMIT=([machine]=60 [env]=120 [build]=480 [tests]=300 [agree]=120 [export]=300 [agree48]=300
                  [forward]=180 [wholect]=300 [peers]=300 [bench]=420 [memcheck]=480 [racecheck]=480 [initcheck]=300
                  [synccheck]=300)
# The build's C libraries the GPU image may lack, by group: the file whose absence means the
# group is missing, then the Debian packages that supply it (with the libraries they need).
LIB_GROUPS="protobuf nifti zlib deflate openblas"
declare -A PROBE=([protobuf]="/usr/include/protobuf-c/protobuf-c.h" [nifti]="/usr/include/nifti/nifti2_io.h"
                  [zlib]="/usr/include/zlib.h" [deflate]="/usr/include/libdeflate.h"
                  [openblas]="/usr/include/x86_64-linux-gnu/cblas.h")
declare -A DEBS=([protobuf]="protobuf-c-compiler libprotoc32 libprotobuf32 libprotobuf-c-dev libprotobuf-c1"
                 [nifti]="libnifti2-dev libniftiio-dev libznz-dev libnifti2-2 libznz3"
                 [zlib]="zlib1g-dev zlib1g"
                 [deflate]="libdeflate-dev libdeflate0"
                 [openblas]="libopenblas-pthread-dev libopenblas0-pthread libgfortran5 libquadmath0")
CASE=f12_c32_ts
CASE_FILES="model.onnx input.npy logits.npy cmdline.txt"
MONAI_WHEEL="monai==1.6.1"
NIBABEL_WHEEL="nibabel==5.4.2"  # the wholect step's phantom writer
# The large model of export/agree48/peers: MONAI's BTCV configuration at its export cube.
BIG_ARGS="${GPU_CHECK_BIG_ARGS:---feature-size 48 --out-channels 14 --size 96 96 96}"
TRANSFER_LIMIT=$((56 * 1024 * 1024))

log() { echo "gpu_check: $*" >&2; }
die() { log "error: $*"; exit 1; }
have() { command -v "$1" >/dev/null 2>&1; }
json_str() { printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g; s/\t/ /g' | tr '\n' ' ')"; }
result() { printf '%s\n' "$2" > "$state/$1.json"; }

# ---- here: the carry folder ------------------------------------------------------------------
all_debs() { local g; for g in $LIB_GROUPS; do echo ${DEBS[$g]}; done; }

prepare() {
    local data="${SWIN_TEST_DATA:-$repo/test-data}" py f
    [ -d "$data/$CASE" ] || die "no test case $data/$CASE (tools/export/make_test_data.sh, or set SWIN_TEST_DATA)"
    py="$("$repo/tools/ci/setup_env.sh" --print-python)" || die "no venv (tools/ci/setup_env.sh)"
    rm -rf "$carry.new" && mkdir -p "$carry.new/debs" "$carry.new/case" "$carry.new/wheels"
    # shellcheck disable=SC2046
    if ! (cd "$carry.new/debs" && apt-get download $(all_debs) >&2); then
        log "apt-get download failed: updating the package lists once"
        apt-get update -qq >&2 || die "apt-get update failed"
        # shellcheck disable=SC2046
        (cd "$carry.new/debs" && apt-get download $(all_debs) >&2) || die "apt-get download failed"
    fi
    for f in $CASE_FILES; do cp "$data/$CASE/$f" "$carry.new/case/" || die "missing $data/$CASE/$f"; done
    "$py" -m pip download -q --no-deps --only-binary=:all: -d "$carry.new/wheels" "$MONAI_WHEEL" >&2 \
        || die "pip download $MONAI_WHEEL failed"
    "$py" -m pip download -q --no-deps --only-binary=:all: -d "$carry.new/wheels" "$NIBABEL_WHEEL" >&2 \
        || die "pip download $NIBABEL_WHEEL failed"
    (cd "$carry.new" && find . -type f ! -name MANIFEST | sort | xargs sha256sum > MANIFEST)
    rm -rf "$carry" && mv "$carry.new" "$carry"
    transfer_size || die "tree + carry over $((TRANSFER_LIMIT / 1048576)) MiB: carry less"
}

# What a device call sends: the files git tracks or would add, and the carry.
transfer_size() {
    local tree bytes
    tree=$(cd "$repo" && git ls-files -z --cached --others --exclude-standard | xargs -0 -r du -cb 2>/dev/null \
           | awk '$2 == "total" {s += $1} END {print s + 0}')
    bytes=$(du -sb "$carry" 2>/dev/null | cut -f1)
    log "transfer: tree $((tree / 1048576)) MiB + carry $(( ${bytes:-0} / 1048576 )) MiB = \
$(( (tree + ${bytes:-0}) / 1048576 )) MiB (limit $((TRANSFER_LIMIT / 1048576)) MiB)"
    [ $((tree + ${bytes:-0})) -le $TRANSFER_LIMIT ]
}

verify_carry() {
    [ -f "$carry/MANIFEST" ] || { log "no $carry/MANIFEST: run 'tools/gpu/gpu_check.sh prepare' where registries are reachable"; return 1; }
    (cd "$carry" && sha256sum --quiet -c MANIFEST >&2) || { log "$carry does not match its MANIFEST"; return 1; }
}

# ---- the steps -------------------------------------------------------------------------------
group_present() {
    case "$1" in
        protobuf) [ -e "${PROBE[protobuf]}" ] && have protoc-c ;;
        # Debian's OpenBLAS puts cblas.h under openblas-pthread/ (or openblas/)
        openblas) [ -e "${PROBE[openblas]}" ] || ls /usr/include/x86_64-linux-gnu/openblas*/cblas.h >/dev/null 2>&1 ;;
        *) [ -e "${PROBE[$1]}" ] ;;
    esac
}

step_machine() {
    local m="$state/machine.txt" mod
    {
        echo "# date: $(date -u +%FT%TZ)"
        echo "# os-release"; cat /etc/os-release 2>/dev/null
        echo "# uname"; uname -a
        echo "# cpus: $(nproc), memory: $(awk '/MemTotal/ {print $2, $3}' /proc/meminfo)"
        echo "# GPU"; nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total,memory.used,clocks.sm,clocks.max.sm \
            --format=csv 2>&1 || echo "no nvidia-smi"
        echo "# tools"
        for t in nvcc cmake ninja make cc gcc g++ c++ clang python3 compute-sanitizer ncu nsys cuobjdump dpkg-deb ar; do
            printf '%s: %s\n' "$t" "$(command -v $t || echo missing)"
        done
        have nvcc && nvcc --version | tail -2
        have cmake && cmake --version | head -1
        have gcc && gcc --version | head -1
        echo "# python modules"
        if have python3; then
            python3 --version
            for mod in numpy torch onnx onnxruntime onnxscript monai einops nibabel; do
                python3 -c "import $mod; print('$mod', getattr($mod, '__version__', '?'))" 2>/dev/null || echo "$mod missing"
            done
            python3 -c "import torch; print('torch cuda', torch.version.cuda, torch.cuda.is_available())" 2>&1 | tail -1
        fi
        echo "# the build's libraries"
        for mod in $LIB_GROUPS; do printf '%s (%s): %s\n' "$mod" "${PROBE[$mod]}" "$(group_present "$mod" && echo present || echo missing)"; done
        echo "/usr/include/onnx/onnx.proto: $([ -e /usr/include/onnx/onnx.proto ] && echo present || echo missing)"
    } > "$m" 2>&1
    have dpkg && dpkg -l > "$state/machine_dpkg.txt" 2>&1
    ldconfig -p > "$state/machine_ldconfig.txt" 2>&1
    cp "$m" "$out/machine.txt"
    result machine "{\"gpu\": $(json_str "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"), \
\"os\": $(json_str "$(. /etc/os-release 2>/dev/null; echo "${PRETTY_NAME:-?}")"), \"cpus\": $(nproc), \
\"python\": $(json_str "$(python3 --version 2>&1)"), \"nvcc\": $(json_str "$(nvcc --version 2>/dev/null | tail -1)")}"
    cat "$m" >&2
}

step_env() {
    local prefix="$state/prefix" need="" cmake_args="" g p deb
    verify_carry || return 1
    rm -rf "$prefix" && mkdir -p "$prefix"
    for g in $LIB_GROUPS; do group_present "$g" || need="$need ${DEBS[$g]}"; done
    for p in $need; do
        deb=$(ls "$carry/debs/${p}_"*.deb 2>/dev/null | head -1)
        [ -n "$deb" ] || { log "the system lacks $p and $carry has no .deb for it"; return 1; }
        if have dpkg-deb; then dpkg-deb -x "$deb" "$prefix"
        else (cd "$prefix" && ar p "$deb" data.tar.xz | tar xJ); fi || { log "cannot unpack $deb"; return 1; }
    done
    local pre="$prefix/usr" mt="$prefix/usr/lib/x86_64-linux-gnu"
    case " $need " in *" libprotobuf-c-dev "*)
        cmake_args="$cmake_args -DSWIN_PROTOC_C=$pre/bin/protoc-c -DSWIN_PROTOBUF_C_INCLUDE=$pre/include"
        cmake_args="$cmake_args -DSWIN_PROTOBUF_C_LIB=$mt/libprotobuf-c.so" ;; esac
    case " $need " in *" libnifti2-dev "*)
        cmake_args="$cmake_args -DNIFTI_INCLUDE_DIR=$pre/include/nifti -DNIFTI2_LIBRARY=$mt/libnifti2.so"
        cmake_args="$cmake_args -DZNZ_LIBRARY=$mt/libznz.so" ;; esac
    case " $need " in *" zlib1g-dev "*)
        # the pipeline links -lz by name and includes <zlib.h> through the NIfTI headers
        cmake_args="$cmake_args -DCMAKE_C_FLAGS=-I$pre/include -DCMAKE_CXX_FLAGS=-I$pre/include"
        cmake_args="$cmake_args -DCMAKE_EXE_LINKER_FLAGS=-L$mt -DCMAKE_SHARED_LINKER_FLAGS=-L$mt" ;; esac
    case " $need " in *" libdeflate-dev "*)
        cmake_args="$cmake_args -DLIBDEFLATE_INCLUDE_DIR=$pre/include -DLIBDEFLATE_LIBRARY=$mt/libdeflate.so" ;; esac
    case " $need " in *" libopenblas-pthread-dev "*)
        cmake_args="$cmake_args -DSWIN_CBLAS_INCLUDE=$pre/include/x86_64-linux-gnu/openblas-pthread"
        cmake_args="$cmake_args -DSWIN_OPENBLAS_LIB=$mt/openblas-pthread/libopenblas.so" ;; esac
    local pypath="" monai_src="the image's own"
    if have python3 && ! python3 -c "import monai" 2>/dev/null; then
        local whl
        whl=$(ls "$carry/wheels/"monai-*.whl 2>/dev/null | head -1)
        [ -n "$whl" ] || { log "Python has no MONAI and $carry carries no wheel"; return 1; }
        python3 -m pip install -q --no-index --no-deps --no-compile --target "$state/py" "$whl" >&2 \
            || { log "cannot install $whl"; return 1; }
        pypath="$state/py" monai_src="the carried wheel $(basename "$whl")"
    fi
    if have python3 && ! python3 -c "import nibabel" 2>/dev/null; then
        local nwhl
        nwhl=$(ls "$carry/wheels/"nibabel-*.whl 2>/dev/null | head -1)
        # only the wholect step needs it: without it that step fails, the others run
        if [ -n "$nwhl" ] && python3 -m pip install -q --no-index --no-deps --no-compile --target "$state/py" "$nwhl" >&2
        then pypath="$state/py"; else log "no nibabel: the wholect step cannot write its CT"; fi
    fi
    local nvcc="" d
    for d in "${CUDA_HOME:-}" /usr/local/cuda /usr/local/cuda-*; do
        [ -n "$d" ] && [ -x "$d/bin/nvcc" ] && { nvcc="$d/bin/nvcc"; break; }
    done
    [ -z "$nvcc" ] && have nvcc && nvcc="$(command -v nvcc)"
    [ -n "$nvcc" ] || { log "no nvcc (CUDA toolkit) on this machine"; return 1; }
    local cc="" gpu=""
    if have nvidia-smi && nvidia-smi -L >/dev/null 2>&1; then
        gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
        cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '.')
    fi
    local cudnn libdir=""
    cudnn=$(find_cudnn "$(dirname "$(dirname "$nvcc")")")
    [ -n "$cudnn" ] && cmake_args="$cmake_args -DCUDNN_ROOT=$cudnn" \
        && libdir=$(dirname "$(ls "$cudnn"/lib*/libcudnn.so* "$cudnn"/lib/x86_64-linux-gnu/libcudnn.so* 2>/dev/null | head -1)")
    {
        echo "export PATH=\"$pre/bin:$(dirname "$nvcc"):\$PATH\""
        echo "export LD_LIBRARY_PATH=\"$mt:$mt/openblas-pthread${libdir:+:$libdir}:\${LD_LIBRARY_PATH:-}\""
        [ -n "$pypath" ] && echo "export PYTHONPATH=\"$pypath:\${PYTHONPATH:-}\""
        echo "NVCC=\"$nvcc\""
        echo "GPU_CC=\"$cc\""
        echo "CMAKE_ARGS=\"$cmake_args\""
    } > "$state/env.sh"
    # shellcheck disable=SC1091
    . "$state/env.sh"
    have cmake || { log "no cmake on this machine (pip's or the system's)"; return 1; }
    have protoc-c && protoc-c --version >/dev/null 2>&1 || { log "protoc-c does not run here"; return 1; }
    for p in cc c++; do have $p || { log "no $p on this machine"; return 1; }; done
    result env "{\"unpacked\": $(json_str "$(echo $need)"), \"monai\": $(json_str "$monai_src"), \
\"nvcc\": $(json_str "$("$nvcc" --version | tail -1)"), \"cmake\": $(json_str "$(cmake --version | head -1)"), \
\"generator\": $(json_str "$(have ninja && echo Ninja || echo 'Unix Makefiles')"), \"gpu\": $(json_str "$gpu"), \"cc\": $(json_str "$cc"), \
\"cudnn\": $(json_str "${cudnn:-not found: no cuDNN column in bench}")}"
    log "env: unpacked [$(echo $need)], nvcc $nvcc, GPU '${gpu:-none}' cc ${cc:-?}, cuDNN ${cudnn:-not found}"
}

# A directory with include/cudnn.h and lib*/libcudnn.so* (the argument: the CUDA toolkit).
find_cudnn() {
    local d py
    for d in "${CUDNN_ROOT:-}" "$1" /usr/local/cudnn; do
        [ -n "$d" ] || continue
        if [ -f "$d/include/cudnn.h" ] && ls "$d"/lib*/libcudnn.so* >/dev/null 2>&1; then echo "$d"; return; fi
    done
    if [ -f /usr/include/cudnn.h ] && ls /usr/lib/x86_64-linux-gnu/libcudnn.so* >/dev/null 2>&1; then echo /usr; return; fi
    for py in python3 python; do
        have $py || continue
        d=$($py -c "import nvidia.cudnn as m; print(list(m.__path__)[0])" 2>/dev/null) || continue
        [ -f "$d/include/cudnn.h" ] && { echo "$d"; return; }
    done
}

load_env() {
    [ -f "$state/env.sh" ] || { log "the env step has not run on this machine (state $state)"; return 1; }
    # shellcheck disable=SC1091
    . "$state/env.sh"
}

step_build() {
    load_env || return 1
    local arch="${GPU_CHECK_ARCH:-${GPU_CC:+${GPU_CC}-real}}" gen=()
    [ -n "$arch" ] || { log "no GPU detected: give GPU_CHECK_ARCH (e.g. 90-real)"; return 1; }
    have ninja && gen=(-G Ninja)
    # A build tree made by another generator or for another card is started over.
    if [ -f "$state/build/CMakeCache.txt" ] && ! grep -q "^SWIN_CUDA_ARCHS:STRING=$arch$" "$state/build/CMakeCache.txt"; then
        rm -rf "$state/build"
    fi
    # shellcheck disable=SC2086
    cmake -S "$repo" -B "$state/build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER="$NVCC" \
        -DSWIN_CUDA_ARCHS="$arch" -DSWIN_PYTHON="$(command -v python3 || echo python3)" \
        $CMAKE_ARGS ${GPU_CHECK_CMAKE_ARGS:-} "${CMAKE_EXTRA[@]}" >&2 || return 1
    grep -q '^SWIN_CUDNN_LIB:FILEPATH=.*cudnn' "$state/build/CMakeCache.txt" \
        || log "no cuDNN: bench_cuda_ops_gpu has the cuBLAS reference only"
    local t0=$SECONDS
    cmake --build "$state/build" -j"$(nproc)" --target swin_gpu_check >&2 || return 1
    result build "{\"arch\": \"$arch\", \"generator\": $(json_str "${gen[*]:-make}"), \"seconds\": $((SECONDS - t0))}"
}

step_tests() {  # the cuda_gpu_* tests in float32, then in half mode (CT_DTYPE=f16)
    load_env || return 1
    local mode rc ok=0 notrun entries=""
    for mode in f32 f16; do
        (cd "$state/build" && CT_DTYPE=$mode SWIN_CUDA_SYNC_CHECK=1 ctest -L gpu --output-on-failure --timeout 240 \
            -O "$state/tests_$mode.ctest.log" >&2)
        rc=$?
        notrun=$(grep -c "Not Run\|Skipped" "$state/tests_$mode.ctest.log")
        { [ $rc -eq 0 ] && [ "$notrun" -eq 0 ]; } || ok=1
        entries="$entries${entries:+, }\"$mode\": {\"ctest_rc\": $rc, \"not_run_or_skipped\": $notrun, \"summary\": \
$(json_str "$(grep -E 'tests passed|tests failed' "$state/tests_$mode.ctest.log")")}"
    done
    result tests "{$entries}"
    return $ok
}

# swinrun forward on MODEL/INPUT with the backend and precision given, then check_logits
# against REF (half criterion for fp16); NAME labels the files. Prints a JSON member.
forward_and_check() {
    local name="$1" model="$2" input="$3" ref="$4" backend="$5" prec="$6" crit=() rc
    [ "$prec" = fp16 ] && crit=(--atol-rel 1e-2 --min-label-agreement 0.995)
    "$state/build/swinrun" forward "$model" "$input" "$state/$name.npy" --backend "$backend" --precision "$prec" \
        --json "$state/$name.run.json" > "$state/$name.txt" 2>&1 \
        && grep -q "\"backend\": \"$backend\"" "$state/$name.run.json" \
        && python3 "$repo/tools/export/check_logits.py" "$state/$name.npy" "$ref" "${crit[@]}" >> "$state/$name.txt" 2>&1
    rc=$?
    printf '"%s": {"rc": %d, "check": %s}' "$name" $rc "$(json_str "$(tail -2 "$state/$name.txt")")"
    return $rc
}

step_agree() {
    load_env || return 1
    local c="$carry/case" ref="$carry/case/logits.npy" src ok=0 r entries=""
    src="ONNX Runtime CPU logits carried with the case"
    if python3 -c "import onnxruntime" 2>/dev/null \
        && python3 "$repo/tools/export/ort_reference.py" "$c/model.onnx" --input "$c/input.npy" --out "$state/f12_ort.npy" >&2; then
        ref="$state/f12_ort.npy" src="ONNX Runtime CPU on this machine"
    fi
    for r in "cuda fp32" "cuda fp16" "cpu fp32"; do
        set -- $r
        entries="$entries${entries:+, }$(forward_and_check "f12_$1_$2" "$c/model.onnx" "$c/input.npy" "$ref" "$1" "$2")" || ok=1
    done
    result agree "{\"reference\": $(json_str "$src"), $entries}"
    return $ok
}

step_export() {
    load_env || return 1
    local d="$state/big"
    rm -rf "$d" && mkdir -p "$d"
    # torch's default (dynamo) exporter, else its TorchScript one
    # shellcheck disable=SC2086
    python3 "$repo/tools/export/export_swin_unetr.py" $BIG_ARGS --seed 0 --out "$d/model.onnx" >&2 \
        || python3 "$repo/tools/export/export_swin_unetr.py" $BIG_ARGS --seed 0 --exporter torchscript --out "$d/model.onnx" >&2 \
        || return 1
    local shape
    shape=$(python3 -c "import json, sys; c = json.load(open(sys.argv[1])); print(1, c['in_channels'], *c['cube'])" \
            "$d/model.json") || return 1
    # shellcheck disable=SC2086
    python3 "$repo/tools/export/ort_reference.py" "$d/model.onnx" --shape $shape --seed 0 --save-input "$d/input.npy" \
        --out "$d/ort.npy" >&2 || return 1
    result export "{\"args\": $(json_str "$BIG_ARGS"), \"model_bytes\": $(stat -c %s "$d/model.onnx"), \
\"config\": $(cat "$d/model.json" 2>/dev/null || echo null)}"
}

step_agree48() {
    load_env || return 1
    local d="$state/big" ok=0 r entries=""
    [ -f "$d/ort.npy" ] || { log "run the export step first"; return 1; }
    for r in "cuda fp32" "cuda fp16" "cpu fp32"; do
        set -- $r
        entries="$entries${entries:+, }$(forward_and_check "big_$1_$2" "$d/model.onnx" "$d/input.npy" "$d/ort.npy" "$1" "$2")" || ok=1
    done
    result agree48 "{\"model\": $(json_str "$BIG_ARGS"), $entries}"
    return $ok
}

step_forward() {
    load_env || return 1
    local b="$state/build/tests/kernels/cuda/bench_cuda_forward_gpu" base f32 f16
    base=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1)
    f32=$("$b" --f 48 --cube 96 --runs 10) || return 1
    f16=$("$b" --f 48 --cube 96 --runs 10 --half) || return 1
    result forward "{\"nvidia_smi_used_before_mib\": ${base:-null}, \"f32\": $f32, \"f16\": $f16}"
}

step_wholect() {
    load_env || return 1
    local d="$state/big" ct="$state/ct512.nii.gz" exe="$state/build/swinrun" mode entries="" rc=0 base sampler
    [ -f "$d/model.onnx" ] || { log "run the export step first"; return 1; }
    if [ ! -f "$ct" ]; then
        python3 "$repo/tools/export/make_ct_phantom.py" "$ct.tmp.nii.gz" --shape 512 512 300 --spacing 0.78 0.78 2.5 >&2 \
            && mv "$ct.tmp.nii.gz" "$ct" || return 1
    fi
    for mode in fp32 fp16; do
        "$exe" plan "$d/model.onnx" --backend cuda --precision $mode --volume 512 512 300 --voxel-size 0.78 0.78 2.5 \
            --json "$state/wholect_plan_$mode.json" >&2 || return 1
        base=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1)
        echo "${base:-0}" > "$state/wholect_peak_$mode"
        (while sleep 0.05; do
             m=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1)
             [ "${m:-0}" -gt "$(cat "$state/wholect_peak_$mode")" ] && echo "$m" > "$state/wholect_peak_$mode"
         done) &
        sampler=$!
        "$exe" "$ct" "$state/wholect_$mode.nii.gz" --model "$d/model.onnx" --backend cuda --precision $mode \
            --blend-on device --json "$state/wholect_$mode.json" >&2 || rc=1
        kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
        entries="$entries${entries:+, }\"$mode\": {\"plan\": $(cat "$state/wholect_plan_$mode.json" 2>/dev/null || echo null), \
\"run\": $(cat "$state/wholect_$mode.json" 2>/dev/null || echo null), \"nvidia_smi_used_before_mib\": ${base:-null}, \
\"nvidia_smi_peak_mib\": $(cat "$state/wholect_peak_$mode")}"
    done
    local same
    same=$(python3 -c "import gzip, sys; a, b = (gzip.open(f).read()[352:] for f in sys.argv[1:]); \
print(sum(x == y for x, y in zip(a, b)) / max(len(a), 1))" "$state/wholect_fp32.nii.gz" "$state/wholect_fp16.nii.gz" \
           2>/dev/null || echo null)
    result wholect "{$entries, \"labels_equal_fraction_fp16_vs_fp32\": $same}"
    return $rc
}

step_peers() {  # bench/peers/swinbench.py on the exported model: the GPU peers, each in its own process
    load_env || return 1
    local d="$state/big"
    [ -f "$d/model.onnx" ] || { log "run the export step first"; return 1; }
    python3 "$repo/bench/peers/swinbench.py" --model "$d/model.onnx" --input "$d/input.npy" --build "$state/build" \
        --configs ort-cpu,torch-cuda,torch-cuda-tf32,torch-cuda-amp,swinrun-cuda,swinrun-cuda-fp16 \
        --runs 5 --out-dir "$state/peers" --no-chart > "$state/peers.txt"
    local rc=$?
    result peers "$(cat "$state/peers/results.json" 2>/dev/null || echo null)"
    return $rc
}

step_bench() {
    load_env || return 1
    local b="$state/build/tests/kernels/cuda/bench_cuda_ops_gpu" rc32 rc16
    # Exit 1 also when a conv disagrees with cuDNN: the tables and JSON are written first.
    rm -f "$state/bench_f32.json" "$state/bench_f16.json"
    "$b" --reps 10 --json "$state/bench_f32.json" > "$state/bench_f32.txt"
    rc32=$?
    "$b" --reps 10 --half --json "$state/bench_f16.json" > "$state/bench_f16.txt"
    rc16=$?
    result bench "{\"f32_rc\": $rc32, \"f16_rc\": $rc16, \"f32\": $(cat "$state/bench_f32.json" 2>/dev/null || echo null), \
\"f16\": $(cat "$state/bench_f16.json" 2>/dev/null || echo null)}"
    [ $rc32 -eq 0 ] && [ $rc16 -eq 0 ]
}

sanitize() {  # tool: every op test in float32 and half, resuming test by test
    local tool="$1" t mode ok=0 entries="" cs
    load_env || return 1
    cs=$(command -v compute-sanitizer || echo "$(dirname "$NVCC")/compute-sanitizer")
    [ -x "$cs" ] || { log "no compute-sanitizer on this machine"; return 1; }
    mkdir -p "$state/$tool"
    for t in $(cat "$state/build/tests/kernels/cuda/gpu_op_tests.txt"); do
        for mode in f32 f16; do
            local o="$state/$tool/$t.$mode"
            if [ ! -f "$o.rc" ]; then
                CT_DTYPE=$mode timeout 240 "$cs" --tool "$tool" --error-exitcode 99 \
                    "$state/build/tests/kernels/cuda/test_cuda_gpu_$t" > "$o.log" 2>&1
                echo $? > "$o.rc"
            fi
            [ "$(cat "$o.rc")" = 0 ] || ok=1
            entries="$entries${entries:+, }\"$t $mode\": $(cat "$o.rc")"
        done
    done
    result "$tool" "{$entries}"
    return $ok
}
step_memcheck() { sanitize memcheck; }
step_racecheck() { sanitize racecheck; }
step_initcheck() { sanitize initcheck; }
step_synccheck() { sanitize synccheck; }

# ---- running and reporting -------------------------------------------------------------------
status() { cat "$state/$1.status" 2>/dev/null || echo not-run; }

report() {
    mkdir -p "$out"
    if have python3; then
        python3 "$repo/tools/gpu/gpu_check_report.py" "$state" "$out" "$STEPS" || log "the report failed"
    else
        { echo "# swinrun GPU check (no python3 here: statuses only)"; for s in $STEPS; do echo "- $s: $(status "$s")"; done; } \
            > "$out/gpu_check.md"
    fi
    [ -f "$state/machine.txt" ] && cp "$state/machine.txt" "$out/machine.txt"
    (cd "$state" && tar czf "$out/logs.tar.gz.tmp" --exclude='*.npy' --exclude=build --exclude=prefix --exclude=py \
        --exclude=big --exclude=out . 2>/dev/null && mv "$out/logs.tar.gz.tmp" "$out/logs.tar.gz")
}

run_step() {  # NAME LIMIT: the step in a child process killed at LIMIT seconds
    local s="$1" lim="$2" t0=$SECONDS rc
    rm -f "$state/$s.json"
    echo started > "$state/$s.status"
    echo "$(date -u +%FT%TZ) limit ${lim}s" > "$state/$s.started"
    report
    log "step $s (limit ${lim}s)"
    GPU_CHECK_CHILD=1 timeout -k 10 "$lim" bash "$0" __step "$s" "${CMAKE_EXTRA[@]}" > "$state/$s.log" 2>&1
    rc=$?
    echo $((SECONDS - t0)) > "$state/$s.seconds"
    case $rc in
        0) echo passed > "$state/$s.status" ;;
        124|137) echo timed-out > "$state/$s.status" ;;
        *) echo failed > "$state/$s.status" ;;
    esac
    log "step $s: $(status "$s") in $((SECONDS - t0)) s"
    [ $rc -eq 0 ] || tail -20 "$state/$s.log" >&2
    report
    return $rc
}

run() {
    local budget=560 steps=() a s t0=$SECONDS left
    CMAKE_EXTRA=()
    while [ $# -gt 0 ]; do
        case "$1" in
            --budget) budget="$2"; shift ;;
            -D*) CMAKE_EXTRA+=("$1") ;;
            *) case " $STEPS " in *" $1 "*) steps+=("$1") ;; *) die "unknown step '$1' (steps: $STEPS)" ;; esac ;;
        esac
        shift
    done
    mkdir -p "$state" "$out"
    if [ ${#steps[@]} -eq 0 ]; then
        for s in $STEPS; do [ "$(status "$s")" = passed ] || steps+=("$s"); done
    fi
    for s in "${steps[@]}"; do
        left=$((budget - (SECONDS - t0)))
        if [ $left -lt 60 ]; then log "budget spent: $s and the steps after it wait for the next call"; break; fi
        run_step "$s" $(( ${LIMIT[$s]} < left ? ${LIMIT[$s]} : left ))
        # Nothing after env or build can run without them.
        if [ "$(status "$s")" != passed ] && { [ "$s" = env ] || [ "$s" = build ]; }; then break; fi
    done
    report
    log "report: $out/gpu_check.md"
    for s in "${steps[@]}"; do [ "$(status "$s")" = passed ] || return 1; done
}

case "${1:-}" in
    prepare) prepare ;;
    size) transfer_size ;;
    run) shift; run "$@" ;;
    __step)  # internal: one step's body, in the child run_step starts
        [ "${GPU_CHECK_CHILD:-0}" = 1 ] || die "__step is internal: use 'run STEP'"
        declare -F "step_$2" >/dev/null || die "no step $2"
        s="$2"; shift 2; CMAKE_EXTRA=("$@"); "step_$s" ;;
    -h|--help) sed -n '2,/^[^#]/{/^#/p}' "$0" ;;
    *) sed -n '2,/^[^#]/{/^#/p}' "$0" >&2; exit 2 ;;
esac
