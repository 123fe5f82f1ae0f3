#!/usr/bin/env bash
# Which CPU instruction-set levels this machine's tests ran and which they skipped: for each level
# of swin_cpu_isa, the level `swinrun plan --isa LEVEL` runs at here.
#   isa_levels.sh SWINRUN MODEL
set -euo pipefail
swinrun="$1" model="$2"
ran=() skipped=()
for level in avx512bf16 avx512 avx2 baseline; do
    got="$("$swinrun" plan "$model" --backend cpu --isa "$level" --json - | tr ',' '\n' |
           sed -n 's/^ *"cpu_isa": "\(.*\)"/\1/p')"
    if [ "$got" = "$level" ]; then ran+=("$level"); else skipped+=("$level"); fi
done
echo "CPU instruction-set levels tested on this machine: ${ran[*]:-none}; skipped (the CPU lacks them): ${skipped[*]:-none}"
