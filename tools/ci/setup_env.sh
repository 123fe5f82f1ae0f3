#!/usr/bin/env bash
# swinrun build/test environment, idempotent.
#
#   tools/ci/setup_env.sh                 install missing apt packages, create/update the venv
#   tools/ci/setup_env.sh --print-python  only print the venv's python path (exit 1 if it is not set up)
#   tools/ci/setup_env.sh --no-apt        skip the apt step
#
# venv: ${SWINRUN_VENV:-$HOME/.cache/swinrun/venv}. Python packages are pinned (PINS below) and
# their dependencies constrained by tools/requirements-lock.txt. pip is skipped when the stamp
# file in the venv says this exact pinned set is already installed.
# The last line of stdout is the venv python path.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${SWINRUN_VENV:-$HOME/.cache/swinrun/venv}"
py="$venv/bin/python"
stamp="$venv/.swinrun-setup-stamp"

APT_PKGS="libcurl4-openssl-dev libssl-dev ca-certificates libprotobuf-c-dev protobuf-c-compiler libonnx-dev libnifti2-dev libdeflate-dev libopenblas-dev libonnx-testdata cmake build-essential python3-venv clang libclang-rt-14-dev libdcmtk-dev dcmtk dicom3tools libopenjp2-7-dev openjph-tools orthanc orthanc-dicomweb openssl ccache"
# orthanc: the PACS of the DICOM node's tests (tests/node), run by them as `Orthanc config.json`
# on loopback ports; the package's own service is not used; orthanc-dicomweb: its DICOMweb
# plugin, the STOW-RS server of node_stowrs
# openssl: the certificates of the node's TLS test (tests/node, node_tls), made at test time
# ccache: tools/test.sh's compiler cache (~/.cache/swinrun/ccache), shared by fresh clones
# pynetdicom: an SCU that knows the HTJ2K syntaxes, the sender of the node's HTJ2K test (node_htj2k)
# SimpleITK: ITK's MetaIO, the independent reader and writer of the MetaImage tests (tests/formats/metaimage)
# PyYAML: what MONAI's ConfigParser reads YAML bundle configs with, the reference of core/yaml.c's tests
# nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm: the CUDA binary utilities of bench/sass/sass_census.py
PINS="torch==2.15.0 monai==1.6.1 onnx==1.23.2 onnxruntime==1.32.0 openvino==2026.4.1 onnxscript==0.7.2 numpy==2.4.6 nibabel==5.4.2 einops==0.8.2 matplotlib==3.10.9 onnxsim==0.8.1 onnxslim==0.1.98 onnxconverter-common==1.16.0 nvidia-cuda-cuobjdump==13.2.86 nvidia-cuda-nvdisasm==13.2.86 pydicom==3.0.2 pynetdicom==3.0.4 highdicom==0.28.2 dcmqi==1.5.7 safetensors==0.8.0 pylibjpeg==2.1.0 pylibjpeg-openjpeg==2.6.0 pytest==9.2.0 SimpleITK==2.5.7 PyYAML==6.0.4"
LOCK="$here/requirements-lock.txt"

do_apt=1
for arg in "$@"; do
    case "$arg" in
        --print-python)
            if [ -x "$py" ]; then echo "$py"; exit 0; fi
            echo "setup_env: error: no venv at $venv; run tools/ci/setup_env.sh" >&2; exit 1 ;;
        --no-apt) do_apt=0 ;;
        -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
        *) echo "setup_env: error: unknown argument '$arg'" >&2; exit 2 ;;
    esac
done

log() { echo "setup_env: $*" >&2; }

# ---- apt ----------------------------------------------------------------------------------
# apt-get update and install only when a package is missing; through sudo when not root
if [ $do_apt -eq 1 ]; then
    missing=()
    for p in $APT_PKGS; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$p")
        fi
    done
    if [ ${#missing[@]} -gt 0 ]; then
        SUDO=""
        if [ "$(id -u)" -ne 0 ]; then
            command -v sudo >/dev/null || { log "error: need root or sudo to install: ${missing[*]}"; exit 1; }
            SUDO="sudo"
        fi
        log "installing apt packages: ${missing[*]}"
        $SUDO apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
    else
        log "apt packages present"
    fi
fi

# ---- venv ---------------------------------------------------------------------------------
want="$( { echo "$PINS"; cat "$LOCK"; } | sha256sum | cut -d' ' -f1)"
if [ -x "$py" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] \
    && "$py" -c "import torch, monai, onnx, onnxruntime, onnxscript, numpy, safetensors, nibabel, einops, onnxsim, onnxslim, onnxconverter_common, pydicom, highdicom, openvino, yaml" 2>/dev/null; then
    log "venv $venv up to date"
else
    if [ ! -x "$py" ]; then
        PYTHON3="${PYTHON3:-python3}"
        command -v "$PYTHON3" >/dev/null || { log "error: python3 not found"; exit 1; }
        log "creating venv $venv with $("$PYTHON3" --version 2>&1)"
        mkdir -p "$(dirname "$venv")"
        "$PYTHON3" -m venv "$venv" >&2
    fi
    log "installing pinned packages (torch is a large download on a fresh machine)"
    # the lock file is only a constraint set: packages not needed on this platform are ignored
    grep -v '^#' "$LOCK" > "$venv/.swinrun-constraints.txt"
    "$py" -m pip install -q -c "$venv/.swinrun-constraints.txt" $PINS >&2
    "$py" -c "import torch, monai, onnx, onnxruntime, onnxscript, numpy, safetensors, nibabel, einops; \
print('setup_env: torch', torch.__version__, 'monai', monai.__version__, 'onnx', onnx.__version__, \
'onnxruntime', onnxruntime.__version__)" >&2
    echo "$want" > "$stamp"
fi
echo "$py"
