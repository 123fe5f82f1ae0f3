#!/usr/bin/env bash
# One hostile input: the command must exit with CODE (no signal), print exactly one line on
# stderr containing PATTERN (a second message or a sanitizer report fails it) and leave
# WORKDIR empty (no output file, no temporary file).
#   expect_error.sh CODE PATTERN WORKDIR [--vmem KB] -- COMMAND ARGS...
# --vmem KB limits the address space (not under AddressSanitizer, which reserves terabytes),
# so that an allocation the input does not justify fails the run instead of passing unseen.
set -u
code="$1" pattern="$2" work="$3"; shift 3
vmem=""
if [ "$1" = "--vmem" ]; then vmem="$2"; shift 2; fi
[ "$1" = "--" ] && shift
rm -rf "$work" && mkdir -p "$work" || exit 1
err="$work.stderr"
( [ -z "$vmem" ] || ulimit -v "$vmem"; exec "$@" ) > /dev/null 2> "$err"
rc=$?
lines=$(wc -l < "$err")
left=$(ls -A "$work")
if [ "$rc" -ne "$code" ] || [ "$lines" -ne 1 ] || ! grep -qF -- "$pattern" "$err" || [ -n "$left" ]; then
    echo "FAIL: exit $rc (want $code$([ "$rc" -gt 128 ] && echo ", signal $((rc - 128))")), $lines stderr lines" \
         "(want 1 with '$pattern'), left in $work: ${left:-nothing}; stderr:"
    cat "$err"
    exit 1
fi
echo "ok: exit $rc: $(cat "$err")"
