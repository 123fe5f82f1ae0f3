#!/usr/bin/env bash
# The GPU machine's image, simulated here: runs tools/gpu/gpu_check.sh, with its carry, up to the
# first step that needs a GPU, inside a mount namespace where everything that image lacks is
# hidden, so that a dependency the build machine satisfies by accident fails here as it would
# there. CI runs it (tools/test.sh); it needs root (unshare -m) and the registries (prepare).
#
#   tools/gpu/gpu_image_sim.sh            prepare the carry if needed, then the simulated check
#
# What is hidden (docs/gpu_check.md says what is known of the image and why):
#   - every file of the Debian packages the image does not have: libonnx-dev (onnx.proto),
#     protobuf-c and protoc-c, NIfTI, libdeflate, OpenBLAS and the BLAS/LAPACK alternatives,
#     gfortran's runtime, zlib's headers, DCMTK, Debian's cmake and make. The image has pip's cmake (the
#     simulation installs the same wheel into ~/.cache/swinrun/gpu-sim-cmake) and ninja;
#   - MONAI in the Python that plays the image's python3 (the project's venv: numpy, torch,
#     onnx, onnxruntime as there; it is Python 3.11 where the image has 3.12: a debootstrap
#     root would not give 3.12 either).
# Hiding is an overlay mount over /usr (and over the venv's site-packages) whose upper layer
# holds a whiteout for each hidden file; nothing outside the namespace changes.
#
# Then, in the namespace, as on a cold GPU machine (the card's architecture given as sm_90):
#   run machine env       must pass: env unpacks every carried group and the MONAI wheel;
#   run build, killed     by SIGKILL after a few seconds with its whole process tree, as a
#                         device command at its limit: the report in $OUT must name env as
#                         passed and build as started, not finished;
#   run build             must pass (configure, then every target the GPU steps run);
#   run export            must pass, on a small model (the step needs no GPU);
# and prints the report and the size of tree + carry (at most 56 MiB).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CMAKE_WHEEL="cmake==4.4.5"
HIDE_PKGS="libonnx-dev libonnx1 libonnxifi protobuf-c-compiler libprotoc32 libprotobuf32 libprotobuf-c-dev
  libprotobuf-c1 libnifti2-dev libnifti2-2 libniftiio-dev libniftiio2 libznz-dev libznz3 libnifticdf-dev
  libnifticdf2 libopenblas-dev libopenblas-pthread-dev libopenblas0 libopenblas0-pthread libblas-dev libblas3
  liblapack-dev liblapack3 gfortran gfortran-12 libgfortran-12-dev libgfortran5 libquadmath0 zlib1g-dev
  libdcmtk-dev libdcmtk17 dcmtk cmake cmake-data make libdeflate-dev libdeflate0"
# The alternatives' links that no package lists as its own.
HIDE_GLOBS="/usr/include/x86_64-linux-gnu/cblas.h /usr/include/x86_64-linux-gnu/openblas_config.h
  /usr/lib/x86_64-linux-gnu/libblas.* /usr/lib/x86_64-linux-gnu/liblapack.* /usr/lib/x86_64-linux-gnu/libopenblas*"
KILL_AFTER=25

log() { echo "gpu_image_sim: $*" >&2; }
die() { log "error: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root (unshare -m, mount)"
command -v unshare >/dev/null || die "no unshare (util-linux)"
py="$("$repo/tools/ci/setup_env.sh" --print-python)" || die "no venv: run tools/ci/setup_env.sh"
venv="$(dirname "$(dirname "$py")")"
site="$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"

t0=$SECONDS
if ! (cd "$repo/.gpu_carry" 2>/dev/null && sha256sum --quiet -c MANIFEST >/dev/null 2>&1 && ls wheels/nibabel-*.whl) >/dev/null 2>&1
then
    "$repo/tools/gpu/gpu_check.sh" prepare
fi
cmake_dir="$HOME/.cache/swinrun/gpu-sim-cmake"
if [ ! -x "$cmake_dir/cmake/data/bin/cmake" ]; then
    "$py" -m pip install -q --no-deps --target "$cmake_dir" "$CMAKE_WHEEL" >&2 || die "pip install $CMAKE_WHEEL failed"
fi

sim="$(mktemp -d "${TMPDIR:-/tmp}/swinrun-gpu-sim.XXXXXX")"
trap 'rm -rf "$sim"' EXIT
mkdir -p "$sim/usr_up" "$sim/usr_work" "$sim/site_up" "$sim/site_work" "$sim/state" "$sim/out"

# One whiteout (character device 0/0) in the upper layer for each hidden path under /usr.
whiteout() {  # ROOT UPPER PATH
    local rel="${3#"$1"/}"
    [ "$rel" != "$3" ] || return 0
    mkdir -p "$2/$(dirname "$rel")"
    [ -e "$2/$rel" ] || mknod "$2/$rel" c 0 0
}
hidden=0
# shellcheck disable=SC2086
for f in $( { dpkg -L $HIDE_PKGS 2>/dev/null || true; } | sed 's|^/lib/|/usr/lib/|; s|^/bin/|/usr/bin/|; s|^/sbin/|/usr/sbin/|') \
         $HIDE_GLOBS; do
    [ -e "$f" ] || [ -L "$f" ] || continue
    [ -d "$f" ] && [ ! -L "$f" ] && continue
    whiteout /usr "$sim/usr_up" "$f"
    hidden=$((hidden + 1))
done
for f in "$site"/monai "$site"/monai-*.dist-info "$site"/nibabel "$site"/nibabel-*.dist-info; do
    [ -e "$f" ] && whiteout "$site" "$sim/site_up" "$f"
done
log "hiding $hidden files of the build machine's packages, and MONAI and nibabel from $py"

# The namespace's script: the mounts, then the check as on a cold GPU machine.
cat > "$sim/inside.sh" <<EOF
set -euo pipefail
mount -t overlay overlay -o lowerdir=/usr,upperdir=$sim/usr_up,workdir=$sim/usr_work /usr
mount -t overlay overlay -o lowerdir=$site,upperdir=$sim/site_up,workdir=$sim/site_work $site
export PATH="$cmake_dir/cmake/data/bin:$venv/bin:\$PATH" GPU_CHECK_STATE=$sim/state OUT=$sim/out GPU_CHECK_ARCH=90-real
for t in protoc-c make; do ! command -v \$t >/dev/null || { echo "\$t still visible" >&2; exit 1; }; done
[ ! -e /usr/include/onnx/onnx.proto ] && ! python3 -c "import monai" 2>/dev/null && ! python3 -c "import nibabel" 2>/dev/null \
    || { echo "hiding failed" >&2; exit 1; }
echo "cmake here: \$(command -v cmake) (\$(cmake --version | head -1))" >&2
check=$repo/tools/gpu/gpu_check.sh
\$check run machine env
grep -q '"unpacked": ".*protobuf-c-compiler.*libnifti2-dev.*zlib1g-dev.*libdeflate-dev.*libopenblas-pthread-dev' $sim/state/env.json \
    || { echo "env did not unpack every group: \$(cat $sim/state/env.json)" >&2; exit 1; }
grep -q 'carried wheel' $sim/state/env.json || { echo "env did not install the carried MONAI wheel" >&2; exit 1; }
(. $sim/state/env.sh && python3 -c "import nibabel") || { echo "env did not install the carried nibabel wheel" >&2; exit 1; }
# A device command killed at its limit: SIGKILL to the whole process tree (a PID namespace
# whose init dies with its parent), in the middle of the build.
timeout -s KILL $KILL_AFTER unshare -p -f --kill-child=SIGKILL \$check run build && { echo "the build was not killed" >&2; exit 1; }
grep -q '| env | passed |' $sim/out/gpu_check.md && grep -q '| build | started, not finished' $sim/out/gpu_check.md \\
    || { echo "after the kill the report does not say what finished:" >&2; cat $sim/out/gpu_check.md >&2; exit 1; }
echo "killed build: the report names env passed and build started, not finished" >&2
\$check run build
GPU_CHECK_BIG_ARGS="--feature-size 12 --out-channels 3 --size 32 32 32" \$check run export
EOF
if ! unshare -m --propagation private bash "$sim/inside.sh"; then
    [ -f "$sim/out/gpu_check.md" ] && cat "$sim/out/gpu_check.md" >&2
    for s in machine env build export; do [ -f "$sim/state/$s.log" ] && { log "--- $s.log (end)"; tail -40 "$sim/state/$s.log" >&2; }; done
    die "the simulated GPU image failed (above: its report and logs)"
fi
cat "$sim/out/gpu_check.md"
"$repo/tools/gpu/gpu_check.sh" size || die "tree + carry over the limit"
log "passed in $((SECONDS - t0)) s: every step up to the first that needs a GPU, with the image's gaps hidden"
