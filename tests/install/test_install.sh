#!/usr/bin/env bash
# cmake --install into a temporary prefix, then build a small C program against the
# installed tree three ways (find_package with the shared and the static library,
# pkg-config with the shared one), run each on a model, and check that the shared library
# exports exactly the functions the public headers mark SWIN_API, all prefixed swin_, and that
# <swinrun/swinrun.h> compiles with the include directory above include/swinrun/ too.
#   test_install.sh BUILD_DIR SOURCE_DIR MODEL.onnx WORK_DIR
set -eu
build="$1" src="$2" model="$3" work="$4"
rm -rf "$work" && mkdir -p "$work"
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
lib=$(ls "$prefix"/lib*/libswinrun.so.*.*.* | head -1)
libdir=$(dirname "$lib")
for f in "$prefix/include/swinrun/swinrun.h" "$libdir/libswinrun.a" "$libdir/cmake/swinrun/swinrunConfig.cmake" \
         "$libdir/pkgconfig/swinrun.pc"; do
    [ -f "$f" ] || { echo "FAIL: not installed: $f"; exit 1; }
done

# exports == the SWIN_API declarations of the installed headers
nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRW]$/ {sub(/@.*/, "", $3); print $3}' | sort > "$work/exports.txt"
grep -rhoE 'SWIN_API [^(]*[ *]swin_[a-z0-9_]+\(' "$prefix/include/swinrun" | grep -oE 'swin_[a-z0-9_]+\($' |
    tr -d '(' | sort -u > "$work/api.txt"
if grep -v '^swin_' "$work/exports.txt"; then echo "FAIL: exports without the swin_ prefix (above)"; exit 1; fi
if ! diff "$work/api.txt" "$work/exports.txt"; then
    echo "FAIL: the exports differ from the SWIN_API functions (< API only, > exported only)"; exit 1
fi
echo "ok   $(wc -l < "$work/exports.txt") exports, all swin_, exactly the SWIN_API functions"

# find_package: shared and static
cmake -S "$src/tests/install/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_BUILD_RPATH="$libdir" > "$work/consumer.log"
cmake --build "$work/consumer" >> "$work/consumer.log"
"$work/consumer/consumer_shared" "$model"
if ldd "$work/consumer/consumer_static" | grep -q libswinrun; then echo "FAIL: consumer_static links libswinrun.so"; exit 1; fi
"$work/consumer/consumer_static" "$model"
echo "ok   find_package(swinrun): shared and static consumers run"

# the headers find each other whichever of the two include directories a program names
printf '#include <swinrun/swinrun.h>\nint main(void) { return swin_context_default_params().backend != SWIN_BACKEND_AUTO; }\n' |
    cc -std=c11 -Wall -Werror -x c - -I"$prefix/include" -fsyntax-only
echo "ok   <swinrun/swinrun.h> with -I PREFIX/include compiles"

# pkg-config
export PKG_CONFIG_PATH="$libdir/pkgconfig"
cc -std=c11 "$src/tests/install/consumer/main.c" $(pkg-config --cflags swinrun) $(pkg-config --libs swinrun) \
    -Wl,-rpath,"$libdir" -o "$work/consumer_pc"
"$work/consumer_pc" "$model"
echo "ok   pkg-config swinrun: the consumer runs"
echo PASS
