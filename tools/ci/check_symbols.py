#!/usr/bin/env python3
"""Checks that every external symbol a static library defines carries the swin_ prefix.

    check_symbols.py LIB.a...            exit 0 when every defined external symbol is swin_*
    check_symbols.py --self-test --cc CC  an archive with one unprefixed function must fail

Looked at: the strong defined symbols that nm -g lists (code, data, bss, read-only). Weak
and COMDAT ones (C++ template instantiations and inline functions that the compiler emits
in every object that uses them, e.g. the emulator's launcher for a kernel) are left out:
the linker merges them instead of colliding. A C++ symbol passes when its outermost name
(namespace, class or function) starts with swin_, e.g. swin_cuda::gemm_launch<...>.
The generated ONNX parser is generated in package swin_onnx (weights/CMakeLists.txt), so its
symbols (swin_onnx__model_proto__unpack, ...) pass like every other.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

PREFIX = "swin_"
# nm types of strong defined symbols (upper case: global). Not 'u': GNU unique objects
# (static data of C++ templates and inline functions, e.g. libstdc++'s to_chars digit table
# instantiated in a C++17 file) are merged by the linker like weak ones and cannot collide.
STRONG = set("TDBRGSCi")


# AddressSanitizer's one-definition-rule indicator beside each instrumented global, named
# after it (__odr_asan.swin_cpu_ops): judged by the global it stands for.
ASAN_ODR = "__odr_asan."


def outer_name(sym):
    """The outermost source name of a symbol: itself for C, the first component for C++."""
    if sym.startswith(ASAN_ODR):
        return outer_name(sym[len(ASAN_ODR):])
    if not sym.startswith("_Z"):
        return sym
    s = sym[2:]
    if s.startswith("GV"):  # guard variable of a local static
        s = s[2:]
    if s.startswith("Z"):  # a local static: named after the function that holds it
        s = s[1:]
    if s[:2] in ("TV", "TI", "TS", "TT"):  # vtable, typeinfo, typeinfo name, VTT
        s = s[2:]
    if s.startswith("N"):
        s = s[1:].lstrip("rVKRO")
    m = re.match(r"(\d+)", s)
    if not m:
        return sym  # std:: abbreviations and operators: reported under their mangled name
    n = int(m.group(1))
    return s[len(m.group(1)):len(m.group(1)) + n]


def unprefixed(lib):
    out = subprocess.run(["nm", "-g", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
    bad = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) != 3 or parts[1] not in STRONG:
            continue
        if not outer_name(parts[2]).startswith(PREFIX):
            bad.append(parts[2])
    return sorted(set(bad))


def check(libs):
    total = 0
    for lib in libs:
        bad = unprefixed(lib)
        for sym in bad:
            print(f"{os.path.basename(lib)}: {sym}")
        total += len(bad)
    if total:
        print(f"{total} external symbol(s) without the {PREFIX} prefix: rename them, or make them static",
              file=sys.stderr)
        return 1
    print(f"symbols ok: {len(libs)} libraries, every defined external symbol is {PREFIX}*")
    return 0


def self_test(cc):
    cases = [
        ("int swin_ok(void) { return 1; }\nstatic int helper(void) { return 2; }\n"
         "int swin_uses(void) { return helper(); }\nint swin_table[4];\n", 0),
        ("int swin_ok(void) { return 1; }\nint plan_init(void) { return 0; }\n", 1),
        ("int swin_ok(void) { return 1; }\nint graph_nodes[4];\n", 1),
    ]
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for i, (src, want) in enumerate(cases):
            c, o, a = (os.path.join(tmp, f"case{i}.{x}") for x in ("c", "o", "a"))
            with open(c, "w") as f:
                f.write(src)
            subprocess.run([cc, "-c", c, "-o", o], check=True)
            subprocess.run(["ar", "rcs", a, o], check=True)
            r = subprocess.run([sys.executable, __file__, a], capture_output=True, text=True)
            print(f"{'ok  ' if r.returncode == want else 'FAIL'} case {i}: exit {r.returncode}, want {want}")
            ok &= r.returncode == want
    for sym, name in [("_ZN9swin_cuda11gemm_launchIfEEvv", "swin_cuda"), ("_Z8cuemu_fnv", "cuemu_fn"),
                      ("_ZNK4cuem3runEv", "cuem"), ("_ZGVZN9swin_cuda1fEvE1x", "swin_cuda"),
                      ("_ZZN5cuemu1fEvE1x", "cuemu"), ("swin_x", "swin_x"),
                      ("__odr_asan.swin_cpu_ops", "swin_cpu_ops"), ("__odr_asan.graph_nodes", "graph_nodes")]:
        got = outer_name(sym)
        print(f"{'ok  ' if got == name else 'FAIL'} outer_name({sym}) = {got}")
        ok &= got == name
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("libs", nargs="*")
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("--cc", default="cc")
    a = ap.parse_args()
    return self_test(a.cc) if a.self_test else check(a.libs)


if __name__ == "__main__":
    sys.exit(main())
