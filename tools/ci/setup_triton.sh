#!/usr/bin/env bash
# The venv of the Triton backend's tests (apps/triton/): PyPI nvidia-pytriton 0.7.0, which bundles
# tritonserver 2.51.0 (backend API 1.19) and pulls numpy<2, hence a venv of its own, and
# tritonclient[http,grpc]. Cached like the main venv: ~/.cache/swinrun/triton-venv.
#   tools/ci/setup_triton.sh                 create it once (about 1 GB of wheels)
#   tools/ci/setup_triton.sh --print-python  its python
set -euo pipefail
venv="${SWIN_TRITON_VENV:-$HOME/.cache/swinrun/triton-venv}"
if [ "${1:-}" = "--print-python" ]; then
    echo "$venv/bin/python"
    exit 0
fi
stamp="$venv/.swinrun-triton-ok"
pins="nvidia-pytriton==0.7.0 tritonclient[http,grpc]==2.73.0"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$pins" ]; then
    exit 0
fi
python3 -m venv "$venv"
# shellcheck disable=SC2086
"$venv/bin/pip" install --quiet $pins
server="$("$venv/bin/python" -c 'import os, pytriton; print(os.path.join(os.path.dirname(pytriton.__file__), "tritonserver", "bin", "tritonserver"))')"
# it prints its usage (and exits 1) only when its libraries load on this machine
usage="$("$server" --help 2>&1 || true)"
[[ "$usage" == *--model-repository* ]] || { echo "setup_triton.sh: $server does not start" >&2; exit 1; }
echo "$pins" > "$stamp"
