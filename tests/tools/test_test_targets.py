#!/usr/bin/env python3
"""tools/ci/test_targets.py on a small CMake project, configured and not built (as tools/test.sh
runs it on build-asan/): the targets of the tests a label selects, named directly, through a
script's arguments and through ENVIRONMENT; `all` for a test that names the build folder; none
of the targets that only unselected tests run."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "tools", "ci", "test_targets.py")

PROJECT = r"""
cmake_minimum_required(VERSION 3.20)
project(t C)
enable_testing()
foreach(exe direct by_script by_env unused)
  add_executable(${exe} main.c)
endforeach()
add_library(plug SHARED plug.c)
add_test(NAME t_direct COMMAND direct)
add_test(NAME t_script COMMAND sh -c "'$<TARGET_FILE:by_script>' --flag")
add_test(NAME t_env COMMAND sh -c "true")
set_tests_properties(t_env PROPERTIES ENVIRONMENT "PLUG=$<TARGET_FILE:plug>;RUN=$<TARGET_FILE:by_env>")
add_test(NAME t_other COMMAND unused)
add_test(NAME t_tree COMMAND sh -c "ls ${CMAKE_BINARY_DIR}")
set_tests_properties(t_direct t_script t_env PROPERTIES LABELS sel)
set_tests_properties(t_other PROPERTIES LABELS other)
set_tests_properties(t_tree PROPERTIES LABELS tree)
"""


def targets(build, *args):
    out = subprocess.run([sys.executable, SCRIPT, build, *args], check=True,
                         capture_output=True, text=True).stdout
    return set(out.split())


def main():
    with tempfile.TemporaryDirectory() as tmp:
        src, build = os.path.join(tmp, "src"), os.path.join(tmp, "build")
        os.mkdir(src)
        with open(os.path.join(src, "CMakeLists.txt"), "w") as f:
            f.write(PROJECT)
        with open(os.path.join(src, "main.c"), "w") as f:
            f.write("int main(void) { return 0; }\n")
        with open(os.path.join(src, "plug.c"), "w") as f:
            f.write("int plug(void) { return 1; }\n")
        subprocess.run(["cmake", "-S", src, "-B", build], check=True, capture_output=True)
        cases = [
            (("-L", "sel"), {"direct", "by_script", "by_env", "plug"}),
            (("-L", "sel", "-E", "^t_env$", "--", "-L", "other"), {"direct", "by_script", "unused"}),
            (("-L", "tree"), {"all"}),
        ]
        failed = 0
        for args, want in cases:
            got = targets(build, *args)
            if got != want:
                print(f"FAIL {' '.join(args)}: got {sorted(got)}, want {sorted(want)}")
                failed += 1
            else:
                print(f"ok   {' '.join(args)}: {sorted(got)}")
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
