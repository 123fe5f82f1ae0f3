#!/bin/sh
# Compiler launcher of the nvcc build (CUDA_COMPILER_LAUNCHER): runs the compile command,
# keeps its stderr (the -Xptxas -v resource report: registers, spills, shared memory per
# kernel and target) in <object>.ptxas.log, and passes everything but the report lines on
# to the build output, so errors and warnings still show.
obj=
prev=
for a in "$@"; do
  [ "$prev" = "-o" ] && obj=$a
  prev=$a
done
[ -n "$obj" ] || exec "$@"
"$@" 2>"$obj.ptxas.log"
rc=$?
grep -Ev '^ptxas info|^    [0-9]+ bytes stack frame' "$obj.ptxas.log" >&2
exit $rc
