#!/usr/bin/env bash
# forward_case.sh at one CPU instruction-set level: the CPU backend capped at LEVEL (--isa);
# exits 77 (the test is skipped, and says why) when this CPU lacks LEVEL, so that a run on a
# smaller CPU never passes for one it did not make.
#   isa_case.sh LEVEL SWINRUN PYTHON CASE_DIR WORK_DIR [FORWARD_OPTION...] [-- CHECK_OPTION...]
set -euo pipefail
level="$1" swinrun="$2"
shift 2
got="$("$swinrun" plan "$2/model.onnx" --backend cpu --isa "$level" --json - | tr ',' '\n' |
       sed -n 's/^ *"cpu_isa": "\(.*\)"/\1/p')"
if [ "$got" != "$level" ]; then
    echo "SKIP: this CPU runs $got at most, not $level" >&2
    exit 77
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
py="$1" case_dir="$2" work="$3"
shift 3
fwd=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do fwd+=("$1"); shift; done
exec "$here/forward_case.sh" "$swinrun" "$py" "$case_dir" "$work/$level" --backend cpu --isa "$level" \
    ${fwd[@]+"${fwd[@]}"} "$@"
