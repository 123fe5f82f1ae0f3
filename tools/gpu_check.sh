#!/usr/bin/env bash
# One check of the CUDA backend on a real GPU, prepared on a machine with network access
# and run, in steps that resume, on a GPU machine that may reach no package registry.
#
# Here (network, no GPU needed):
#   tools/gpu_check.sh prepare      fill .gpu_carry/ (git-ignored, < 64 MiB): the .deb files
#                                   the build needs (apt-get download), the f12_c32_ts test
#                                   case with its ONNX Runtime CPU logits, a numpy wheel, and
#                                   MANIFEST (sha256 of every file)
#   tools/gpu_check.sh --dry-run    check .gpu_carry/ against MANIFEST (or, when it is absent,
#                                   list what prepare would carry), then run the GPU-side steps
#                                   up to the first one that needs a GPU: env (unpack, detect
#                                   the toolchain) and build (configure, one CUDA object for
#                                   sm_80, the protobuf-c and NIfTI users), then the report of
#                                   those two; downloads nothing. CTest: tools_gpu_check_dry_run.
# On the GPU machine (copy the tree with .gpu_carry/; each call stays under 10 minutes):
#   tools/gpu_check.sh all          every step below in order, skipping those already done
#   tools/gpu_check.sh step NAME    one step (again, even if done):
#     env       unpack the carried .debs into a private prefix (never /), only for what the
#               system lacks; find nvcc, the GPU (nvidia-smi) and its compute capability, and
#               cuDNN (not carried: 850 MB, over the 64 MiB a call carries): beside the toolkit,
#               in the system, under $CUDNN_ROOT, or Python's nvidia-cudnn wheel (torch's)
#     build     cmake + nvcc for the GPU present only (SWIN_CUDA_ARCHS=<cc>-real): the
#               cuda_gpu_* tests, bench_cuda_ops_gpu, bench_cuda_forward_gpu, swinrun, and the
#               yardstick (cuBLAS, and cuDNN when found: the reference column, cuda_gpu_yardstick)
#     tests     ctest -L gpu (every cuda_gpu_* test), in float32 and again with CT_DTYPE=f16
#               (half mode); a skipped test is a failure here
#     memcheck  compute-sanitizer --tool memcheck on the nine op tests, float32 and half
#     racecheck compute-sanitizer --tool racecheck on the same (both resume test by test:
#               delete <state>/memcheck or <state>/racecheck to start over)
#     bench     bench_cuda_ops_gpu, float32 and half: the heavy ops, every conv3d shape of the
#               f=48 96^3 forward beside cuDNN's fastest algorithm, and the Swin GEMMs beside
#               cuBLAS (CUDA events on the backend's stream; swinrun/cuDNN and swinrun/cuBLAS
#               ratios, swinrun-vs-cuDNN output agreement), plus per-kernel GPU times from
#               nsys when installed
#     forward   bench_cuda_forward_gpu: the whole f=48 96^3 window in float32 and half
#               (random weights), its time (host clock and CUDA events), and device memory by
#               cudaMemGetInfo and
#               nvidia-smi (CUDA context included) against swinrun's plan
#     agree     swinrun forward --backend cuda [--half] on the carried f12_c32_ts case against
#               ONNX Runtime CPU (run there when onnxruntime imports, else the carried
#               logits ORT CPU wrote here) with tools/check_logits.py
#     report    $OUT/gpu_check.md and $OUT/gpu_check.json from every step's results
# State (logs, results, the build, the prefix): ${GPU_CHECK_STATE:-<repo>/.gpu_state}; the
# report goes to ${OUT:-<state>/out}.
set -uo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
carry="${GPU_CARRY:-$repo/.gpu_carry}"
state="${GPU_CHECK_STATE:-$repo/.gpu_state}"
STEPS="env build tests memcheck racecheck bench forward agree report"
GPU_STEPS="tests memcheck racecheck bench forward agree"
# Build dependencies the GPU machine may lack (Debian/Ubuntu names), with the libraries they
# need that a minimal system often does not have. libonnx-dev is not needed: the loader reads
# ONNX through its own protobuf-c schema (weights/).
PROTOBUF_DEBS="protobuf-c-compiler libprotoc32 libprotobuf32 libprotobuf-c-dev libprotobuf-c1"
NIFTI_DEBS="libnifti2-dev libniftiio-dev libznz-dev libnifti2-2 libznz3"
BLAS_DEBS="libopenblas-pthread-dev libopenblas0-pthread libgfortran5"
CMAKE_DEBS="cmake cmake-data libjsoncpp25 librhash0 libuv1 libarchive13"
DEBS="$PROTOBUF_DEBS $NIFTI_DEBS $BLAS_DEBS $CMAKE_DEBS"
CASE=f12_c32_ts
CASE_FILES="model.onnx input.npy logits.npy ort.log cmdline.txt"
WHEELS="numpy==2.4.6"
PYVERS="${GPU_CARRY_PYVERS:-3.11}"
CARRY_LIMIT=$((64 * 1024 * 1024))

log() { echo "gpu_check: $*" >&2; }
die() { log "error: $*"; exit 1; }

# ---- here: prepare and verify the carry folder ---------------------------------------------
prepare() {
    local data="${SWIN_TEST_DATA:-$repo/test-data}" py
    [ -d "$data/$CASE" ] || die "no test case $data/$CASE (tools/make_test_data.sh, or set SWIN_TEST_DATA)"
    rm -rf "$carry" && mkdir -p "$carry/debs" "$carry/case" "$carry/wheels"
    (cd "$carry/debs" && apt-get download $DEBS >&2) || die "apt-get download failed"
    for f in $CASE_FILES; do cp "$data/$CASE/$f" "$carry/case/" || die "missing $data/$CASE/$f"; done
    py="$("$repo/tools/setup_env.sh" --print-python)" || die "no venv (tools/setup_env.sh)"
    for v in $PYVERS; do
        "$py" -m pip download -q --only-binary=:all: --no-deps --python-version "$v" \
            --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 -d "$carry/wheels" $WHEELS >&2 \
            || die "pip download $WHEELS for Python $v failed"
    done
    (cd "$carry" && find . -type f ! -name MANIFEST | sort | xargs sha256sum > MANIFEST)
    local bytes
    bytes=$(du -sb "$carry" | cut -f1)
    [ "$bytes" -le "$CARRY_LIMIT" ] || die "$carry is $bytes B, over the 64 MiB a GPU call carries"
    log "carry ready: $carry, $((bytes / 1048576)) MiB ($(wc -l < "$carry/MANIFEST") files)"
}

verify_carry() {
    local missing=0 p f
    (cd "$carry" && sha256sum --quiet -c MANIFEST >&2) || { log "MANIFEST check failed"; return 1; }
    for p in $DEBS; do
        ls "$carry/debs/${p}_"*.deb >/dev/null 2>&1 || { log "missing deb $p"; missing=1; }
    done
    for f in $CASE_FILES; do [ -f "$carry/case/$f" ] || { log "missing case file $f"; missing=1; }; done
    ls "$carry/wheels/"numpy-*.whl >/dev/null 2>&1 || { log "missing numpy wheel"; missing=1; }
    [ $missing -eq 0 ] && log "carry complete: $(wc -l < "$carry/MANIFEST") files, $(du -sh "$carry" | cut -f1)"
    return $missing
}

list_carry() {
    log "no $carry: checking the script logic only; 'tools/gpu_check.sh prepare' would carry"
    log "  debs: $(echo $DEBS)"
    log "  case: ${SWIN_TEST_DATA:-$repo/test-data}/$CASE/{$(echo $CASE_FILES | tr ' ' ',')}"
    log "  wheels: $WHEELS for Python $PYVERS"
}

# ---- GPU side -------------------------------------------------------------------------------
# Results: $state/<step>.json (one JSON value), logs $state/<step>.log, $state/<step>.done.
result() { printf '%s\n' "$2" > "$state/$1.json"; }
have() { command -v "$1" >/dev/null 2>&1; }
any_file() { local f; for f in "$@"; do [ -f "$f" ] && return 0; done; return 1; }
json_str() { printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g' | tr '\n' ' ')"; }

step_env() {
    local prefix="$state/prefix" need="" cmake_args="" p deb
    mkdir -p "$prefix"
    # What the system has; carried packages fill only the gaps (all of them with
    # GPU_CHECK_USE_CARRY=1, which the dry run sets when the carry folder exists).
    if [ "${GPU_CHECK_USE_CARRY:-0}" = 1 ]; then
        need="$DEBS"
    else
        have cmake || need="$need $CMAKE_DEBS"
        { have protoc-c && [ -f /usr/include/protobuf-c/protobuf-c.h ]; } || need="$need $PROTOBUF_DEBS"
        any_file /usr/include/nifti/nifti2_io.h /usr/include/nifti2_io.h || need="$need $NIFTI_DEBS"
        any_file /usr/include/*/cblas.h /usr/include/*/openblas*/cblas.h /usr/include/cblas.h || need="$need $BLAS_DEBS"
    fi
    for p in $need; do
        deb=$(ls "$carry/debs/${p}_"*.deb 2>/dev/null | head -1)
        [ -n "$deb" ] || { log "the system lacks $p and $carry has no .deb for it"; return 1; }
        if have dpkg-deb; then dpkg-deb -x "$deb" "$prefix"
        else (cd "$prefix" && ar p "$deb" data.tar.xz | tar xJ); fi || { log "cannot unpack $deb"; return 1; }
    done
    local pre="$prefix/usr" mt="$prefix/usr/lib/x86_64-linux-gnu"
    # Debian's cmake 3.25 FindCUDAToolkit fails on CUDA >= 13, which has no nvToolsExt
    # target; the same one-line guard as the build machine's copy.
    local ctk="$pre/share/cmake-3.25/Modules/FindCUDAToolkit.cmake"
    [ -f "$ctk" ] && sed -i 's/^    if(CMAKE_MINIMUM_REQUIRED_VERSION VERSION_GREATER_EQUAL 3.25)$/    if(TARGET CUDA::nvToolsExt AND CMAKE_MINIMUM_REQUIRED_VERSION VERSION_GREATER_EQUAL 3.25)/' "$ctk"
    {
        echo "export PATH=\"$pre/bin:\$PATH\""
        echo "export LD_LIBRARY_PATH=\"$mt:$mt/openblas-pthread:\${LD_LIBRARY_PATH:-}\""
    } > "$state/env.sh"
    # shellcheck disable=SC1091
    . "$state/env.sh"
    case " $need " in *" libprotobuf-c-dev "*)
        cmake_args="$cmake_args -DSWIN_PROTOC_C=$pre/bin/protoc-c -DSWIN_PROTOBUF_C_INCLUDE=$pre/include"
        cmake_args="$cmake_args -DSWIN_PROTOBUF_C_LIB=$mt/libprotobuf-c.so" ;; esac
    case " $need " in *" libnifti2-dev "*)
        cmake_args="$cmake_args -DNIFTI_INCLUDE_DIR=$pre/include/nifti -DNIFTI2_LIBRARY=$mt/libnifti2.so"
        cmake_args="$cmake_args -DZNZ_LIBRARY=$mt/libznz.so" ;; esac
    case " $need " in *" libopenblas-pthread-dev "*)
        cmake_args="$cmake_args -DSWIN_CBLAS_INCLUDE=$pre/include/x86_64-linux-gnu/openblas-pthread"
        cmake_args="$cmake_args -DSWIN_OPENBLAS_LIB=$mt/openblas-pthread/libopenblas.so" ;; esac
    echo "CMAKE_ARGS=\"$cmake_args\"" >> "$state/env.sh"
    for p in cmake protoc-c; do "$p" --version >/dev/null 2>&1 || { log "$p does not run here (carried for another glibc?)"; return 1; }; done
    for p in cc c++ make; do have $p || { log "no $p on this machine (build-essential is not carried)"; return 1; }; done
    local nvcc="" d
    for d in "${CUDA_HOME:-}" /usr/local/cuda /usr/local/cuda-*; do
        [ -n "$d" ] && [ -x "$d/bin/nvcc" ] && { nvcc="$d/bin/nvcc"; break; }
    done
    [ -z "$nvcc" ] && have nvcc && nvcc="$(command -v nvcc)"
    [ -n "$nvcc" ] || { log "no nvcc (CUDA toolkit) on this machine"; return 1; }
    echo "NVCC=\"$nvcc\"" >> "$state/env.sh"
    echo "export PATH=\"$(dirname "$nvcc"):\$PATH\"" >> "$state/env.sh"
    local gpu="" cc="" driver=""
    if have nvidia-smi && nvidia-smi -L >/dev/null 2>&1; then
        gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
        cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '.')
        driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)
    fi
    echo "GPU_CC=\"$cc\"" >> "$state/env.sh"
    local cudnn
    cudnn=$(find_cudnn "$(dirname "$(dirname "$nvcc")")")
    if [ -n "$cudnn" ]; then
        echo "CMAKE_ARGS=\"\$CMAKE_ARGS -DCUDNN_ROOT=$cudnn\"" >> "$state/env.sh"
        local libdir
        libdir=$(ls "$cudnn"/lib*/libcudnn.so* "$cudnn"/lib/x86_64-linux-gnu/libcudnn.so* 2>/dev/null | head -1)
        [ -n "$libdir" ] && echo "export LD_LIBRARY_PATH=\"$(dirname "$libdir"):\$LD_LIBRARY_PATH\"" >> "$state/env.sh"
    fi
    echo "CUDNN_ROOT=\"$cudnn\"" >> "$state/env.sh"
    log "cmake hints:${cmake_args:- none}"
    result env "{\"unpacked\": $(json_str "$(echo $need)"), \"nvcc\": $(json_str "$("$nvcc" --version | tail -1)"), \
\"cmake\": $(json_str "$(cmake --version | head -1)"), \"gpu\": $(json_str "$gpu"), \"cc\": $(json_str "$cc"), \
\"driver\": $(json_str "$driver"), \"cudnn\": $(json_str "${cudnn:-not found: no cuDNN/cuBLAS reference column}")}"
    log "env: unpacked [$(echo $need)], nvcc $nvcc, GPU '${gpu:-none}' cc ${cc:-?}, cuDNN ${cudnn:-not found}"
}

# A directory with include/cudnn.h and lib*/libcudnn.so* (the argument: the CUDA toolkit).
find_cudnn() {
    local d py
    for d in "${CUDNN_ROOT:-}" "$1" /usr/local/cudnn /usr; do
        [ -n "$d" ] || continue
        if [ -f "$d/include/cudnn.h" ] && ls "$d"/lib*/libcudnn.so* >/dev/null 2>&1; then echo "$d"; return; fi
        if [ "$d" = /usr ] && [ -f /usr/include/cudnn.h ] && ls /usr/lib/x86_64-linux-gnu/libcudnn.so* >/dev/null 2>&1; then
            echo /usr; return; fi
    done
    for py in python3 python; do
        have $py || continue
        d=$($py -c "import nvidia.cudnn as m; print(list(m.__path__)[0])" 2>/dev/null) || continue
        [ -f "$d/include/cudnn.h" ] && { echo "$d"; return; }
    done
}

load_env() {
    [ -f "$state/env.sh" ] || { log "run the env step first"; return 1; }
    # shellcheck disable=SC1091
    . "$state/env.sh"
}

GPU_TARGETS="swinrun bench_cuda_ops_gpu bench_cuda_forward_gpu test_cuda_gpu_forward"
OP_TESTS="pack_copy layernorm instnorm_act conv3d conv_transpose2 swin_attention swin_mlp patch_merge errors"

step_build() {
    load_env || return 1
    local arch="${GPU_CHECK_ARCH:-${GPU_CC:+${GPU_CC}-real}}" t targets="$GPU_TARGETS"
    [ -n "$arch" ] || { log "no GPU detected: give GPU_CHECK_ARCH (e.g. 80-real)"; return 1; }
    for t in $OP_TESTS; do targets="$targets test_cuda_gpu_$t"; done
    # shellcheck disable=SC2086
    cmake -S "$repo" -B "$state/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER="$NVCC" \
        -DSWIN_CUDA_ARCHS="$arch" -DSWIN_PYTHON="$(command -v python3 || echo python3)" $CMAKE_ARGS >&2 || return 1
    local yard="swin_yardstick test_cuda_gpu_yardstick"  # the cuBLAS (+ cuDNN when found) reference
    grep -q '^SWIN_CUDNN_LIB:FILEPATH=.*cudnn' "$state/build/CMakeCache.txt" \
        || log "no cuDNN: bench_cuda_ops_gpu has the cuBLAS reference only"
    targets="$targets $yard"
    if [ "${DRY_RUN:-0}" = 1 ]; then
        # The toolchain works (one CUDA object with the real flags) and so do the libraries it
        # found or unpacked: protoc-c and its header (swin_weights), the NIfTI headers
        # (swin_pipeline_objs). The full build is the GPU machine's.
        make -C "$state/build/kernels/cuda" splitk_reduce.cu.o >&2 || return 1
        # shellcheck disable=SC2086
        cmake --build "$state/build" -j2 --target swin_weights swin_pipeline_objs ${yard%% *} >&2 || return 1
        result build "{\"arch\": \"$arch\", \"dry_run\": true}"
        return 0
    fi
    # shellcheck disable=SC2086
    cmake --build "$state/build" -j"$(nproc)" --target $targets >&2 || return 1
    result build "{\"arch\": \"$arch\", \"targets\": $(json_str "$targets")}"
}

step_tests() {  # the cuda_gpu_* tests in float32, then in half mode (CT_DTYPE=f16)
    load_env || return 1
    local mode rc ok=0 skipped entries=""
    for mode in f32 f16; do
        (cd "$state/build" && CT_DTYPE=$mode ctest -L gpu --output-on-failure --timeout 300 \
            -O "$state/tests_$mode.ctest.log" >&2)
        rc=$?
        skipped=$(grep -c "Not Run\|Skipped" "$state/tests_$mode.ctest.log")
        { [ $rc -eq 0 ] && [ "$skipped" -eq 0 ]; } || ok=1
        entries="$entries${entries:+, }\"$mode\": {\"ctest_rc\": $rc, \"skipped\": $skipped, \"summary\": \
$(json_str "$(grep -E 'tests passed|tests failed' "$state/tests_$mode.ctest.log")")}"
    done
    result tests "{$entries}"
    return $ok
}

sanitize() {  # tool: every op test in float32 and half, resuming test by test
    local tool="$1" t mode ok=0 entries=""
    load_env || return 1
    have compute-sanitizer || [ -x "$(dirname "$NVCC")/compute-sanitizer" ] || {
        result "$tool" '{"skipped": "compute-sanitizer not installed"}'; log "no compute-sanitizer: $tool skipped"; return 0; }
    local cs
    cs=$(command -v compute-sanitizer || echo "$(dirname "$NVCC")/compute-sanitizer")
    mkdir -p "$state/$tool"
    for t in $OP_TESTS; do
        for mode in f32 f16; do
            local out="$state/$tool/$t.$mode"
            if [ ! -f "$out.rc" ]; then
                CT_DTYPE=$mode timeout 240 "$cs" --tool "$tool" --error-exitcode 99 \
                    "$state/build/tests/cuda/test_cuda_gpu_$t" > "$out.log" 2>&1
                echo $? > "$out.rc"
            fi
            local rc
            rc=$(cat "$out.rc")
            [ "$rc" = 0 ] || ok=1
            entries="$entries${entries:+, }\"$t $mode\": $rc"
        done
    done
    result "$tool" "{$entries}"
    return $ok
}
step_memcheck() { sanitize memcheck; }
step_racecheck() { sanitize racecheck; }

step_bench() {
    load_env || return 1
    local b="$state/build/tests/cuda/bench_cuda_ops_gpu" rc32 rc16
    # Exit 1 also when a conv disagrees with cuDNN: the tables and JSON are written first.
    rm -f "$state/bench_f32.json" "$state/bench_f16.json"
    "$b" --reps 10 --json "$state/bench_f32.json" > "$state/bench_f32.txt"
    rc32=$?
    "$b" --reps 10 --half --json "$state/bench_f16.json" > "$state/bench_f16.txt"
    rc16=$?
    if have nsys; then  # per-kernel GPU times (CUPTI) of one f=48 96^3 pass in each mode
        nsys profile -f true -o "$state/forward_f32" --stats=true \
            "$state/build/tests/cuda/bench_cuda_forward_gpu" --runs 1 > "$state/nsys_f32.txt" 2>&1 \
            || log "nsys failed (see $state/nsys_f32.txt)"
        nsys profile -f true -o "$state/forward_half" --stats=true \
            "$state/build/tests/cuda/bench_cuda_forward_gpu" --runs 1 --half > "$state/nsys_half.txt" 2>&1 \
            || log "nsys failed (see $state/nsys_half.txt)"
    fi
    result bench "{\"f32_rc\": $rc32, \"f16_rc\": $rc16, \"f32\": $(cat "$state/bench_f32.json" 2>/dev/null || echo null), \
\"f16\": $(cat "$state/bench_f16.json" 2>/dev/null || echo null), \
\"nsys\": $(if have nsys; then echo true; else echo '"nsys not installed: no per-kernel table"'; fi)}"
    [ $rc32 -eq 0 ] && [ $rc16 -eq 0 ]
}

step_forward() {
    load_env || return 1
    local b="$state/build/tests/cuda/bench_cuda_forward_gpu" base f32 f16
    base=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1)
    f32=$("$b" --f 48 --cube 96 --runs 5) || return 1
    f16=$("$b" --f 48 --cube 96 --runs 5 --half) || return 1
    result forward "{\"nvidia_smi_used_before_mib\": ${base:-null}, \"f32\": $f32, \"f16\": $f16}"
}

step_agree() {
    load_env || return 1
    local py="" c="$carry/case" sw="$state/build/swinrun" ref="$carry/case/logits.npy" refsrc rc32 rc16
    rm -f "$state"/agree_f32.txt "$state"/agree_f16.txt "$state"/run_f32.json "$state"/run_f16.json
    for p in python3 python; do have $p && $p -c "import numpy" 2>/dev/null && { py=$(command -v $p); break; }; done
    if [ -z "$py" ] && have python3; then
        local whl
        whl=$(ls "$carry/wheels/"numpy-*"cp$(python3 -c 'import sys; print("%d%d" % sys.version_info[:2])')"*.whl 2>/dev/null | head -1)
        [ -n "$whl" ] && python3 -m pip install -q --no-index --target "$state/py" "$whl" >&2 \
            && export PYTHONPATH="$state/py" && py=$(command -v python3)
    fi
    [ -n "$py" ] || { result agree '{"skipped": "no Python with numpy (and no carried wheel for this Python)"}'; return 1; }
    refsrc="ONNX Runtime CPU logits carried with the case (tools/ort_reference.py where the case was made)"
    if "$py" -c "import onnxruntime" 2>/dev/null; then
        "$py" "$repo/tools/ort_reference.py" "$c/model.onnx" --input "$c/input.npy" --out "$state/ort_logits.npy" >&2 \
            && ref="$state/ort_logits.npy" && refsrc="ONNX Runtime CPU on this machine"
    fi
    # --backend cuda fails when no device opens; the run also counts only if its JSON report
    # says backend cuda.
    "$sw" forward "$c/model.onnx" "$c/input.npy" "$state/cuda_f32.npy" --backend cuda --json "$state/run_f32.json" \
        && grep -q '"backend": "cuda"' "$state/run_f32.json" \
        && "$py" "$repo/tools/check_logits.py" "$state/cuda_f32.npy" "$ref" > "$state/agree_f32.txt" 2>&1
    rc32=$?
    "$sw" forward "$c/model.onnx" "$c/input.npy" "$state/cuda_f16.npy" --backend cuda --half \
        --json "$state/run_f16.json" && grep -q '"backend": "cuda"' "$state/run_f16.json" \
        && "$py" "$repo/tools/check_logits.py" "$state/cuda_f16.npy" "$ref" --atol-rel 1e-2 \
            --min-label-agreement 0.995 > "$state/agree_f16.txt" 2>&1
    rc16=$?
    result agree "{\"reference\": $(json_str "$refsrc"), \"f32_run\": $(json_str "$(cat "$state/run_f32.json")"), \
\"f16_run\": $(json_str "$(cat "$state/run_f16.json")"), \"f32_rc\": $rc32, \"f32\": $(json_str "$(cat "$state/agree_f32.txt" 2>/dev/null)"), \
\"f16_rc\": $rc16, \"f16\": $(json_str "$(cat "$state/agree_f16.txt" 2>/dev/null)")}"
    [ $rc32 -eq 0 ] && [ $rc16 -eq 0 ]
}

step_report() {
    local out="${OUT:-$state/out}" s
    mkdir -p "$out"
    {
        echo "{"
        local first=1
        for s in $STEPS; do
            [ "$s" = report ] && continue
            [ $first -eq 1 ] || echo ","
            first=0
            printf '"%s": {"status": "%s", "result": %s}' "$s" \
                "$(if [ -f "$state/$s.done" ]; then echo passed; elif [ -f "$state/$s.failed" ]; then echo failed; else echo not-run; fi)" \
                "$(cat "$state/$s.json" 2>/dev/null || echo null)"
        done
        echo "}"
    } > "$out/gpu_check.json"
    if have python3; then
        python3 "$repo/tools/gpu_check_report.py" "$state" "$out/gpu_check.json" > "$out/gpu_check.md" || return 1
    else
        echo "No python3 on this machine: the results are in gpu_check.json." > "$out/gpu_check.md"
    fi
    log "report: $out/gpu_check.md, $out/gpu_check.json"
}

run_step() {
    local s="$1"
    declare -F "step_$s" >/dev/null || die "unknown step '$s' (steps: $STEPS)"
    mkdir -p "$state"
    rm -f "$state/$s.done" "$state/$s.failed"
    log "step $s"
    if "step_$s" 2> >(tee "$state/$s.log" >&2); then touch "$state/$s.done"; return 0; fi
    touch "$state/$s.failed"
    log "step $s FAILED (log: $state/$s.log)"
    return 1
}

dry_run() {
    local t0=$SECONDS s
    if [ -d "$carry" ]; then verify_carry || die "the carry folder is incomplete"; else list_carry; fi
    for s in $STEPS; do declare -F "step_$s" >/dev/null || die "step $s has no function"; done
    state="$(mktemp -d "${TMPDIR:-/tmp}/gpu_check_dry.XXXXXX")"
    if [ -d "$carry" ]; then export GPU_CHECK_USE_CARRY=1  # build with every carried package
    else carry="$state/no-carry"; fi                       # env then uses what the system has
    export DRY_RUN=1 GPU_CHECK_ARCH="${GPU_CHECK_ARCH:-80-real}"
    run_step env || die "dry run: env failed"
    run_step build || die "dry run: build failed"
    for s in $STEPS; do
        case " $GPU_STEPS " in *" $s "*)
            log "dry run: stops before '$s', the first step that needs a GPU"; break ;; esac
    done
    # The report from what ran (the GPU steps show as not run): its JSON must parse.
    OUT="$state/out" run_step report || die "dry run: report failed"
    python3 -c "import json, sys; json.load(open(sys.argv[1]))" "$state/out/gpu_check.json" \
        || die "dry run: gpu_check.json does not parse"
    rm -rf "$state"
    log "dry run passed in $((SECONDS - t0)) s"
}

case "${1:-}" in
    prepare) prepare ;;
    --dry-run) dry_run ;;
    step) [ $# -eq 2 ] || die "usage: tools/gpu_check.sh step NAME ($STEPS)"; run_step "$2" ;;
    all)
        rc=0
        for s in $STEPS; do
            [ "$s" = report ] && break
            if [ -f "$state/$s.done" ]; then log "step $s already done"; continue; fi
            run_step "$s" || { rc=1; case "$s" in env|build) break ;; esac; }
        done
        run_step report || rc=1
        exit $rc ;;
    -h|--help) sed -n '2,/^[^#]/{/^#/p}' "$0" ;;
    *) sed -n '2,/^[^#]/{/^#/p}' "$0" >&2; exit 2 ;;
esac
