#!/usr/bin/env python3
"""The build targets a selection of CTest tests runs, so that a pass that runs only some tests
(tools/test.sh's sanitizer pass) builds only what they need.

    test_targets.py BUILD_DIR [ctest selection arguments, e.g. -L "emu|unit" -E '^x$'] ...

Several selections may be given, separated by `--`; the union is printed, one target a line.
A target counts as needed when a path to its output file appears in a selected test's command or
in one of its properties (ENVIRONMENT, REQUIRED_FILES, ...): CMake writes $<TARGET_FILE:...>
there. The commands are read from the CTestTestfile.cmake files, since `ctest -N` leaves out
the command of a test whose program is not built yet. A test that names the build folder itself
(an install of it) needs `all`. Tests that name no target (scripts of the source tree that find
their programs some other way) are listed on stderr: a pass that builds only these targets has
to be run once to show that they need none.
"""
import json
import os
import re
import subprocess
import sys

# CMake's own targets: a folder of that name in a test's path must not select them
UTILITY_TARGETS = {"all", "clean", "depend", "help", "install", "install/local", "install/strip",
                   "list_install_components", "edit_cache", "rebuild_cache", "test", "package",
                   "package_source"}


def cmake_targets(build_dir):
    out = subprocess.run(["cmake", "--build", build_dir, "--target", "help"],
                         check=True, capture_output=True, text=True).stdout
    names = {m.group(1) for m in re.finditer(r"^\.\.\. (\S+)", out, re.M)}
    return names - UTILITY_TARGETS


def selected_tests(build_dir, args):
    out = subprocess.run(["ctest", "-N", "--show-only=json-v1", *args], cwd=build_dir,
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["tests"]


def test_commands(build_dir):
    """{test name: its add_test line's arguments} from every CTestTestfile.cmake of the tree"""
    commands = {}
    line_re = re.compile(r"^add_test\(\[=\[(.*?)\]=\]\s+(.*)\)\s*$")
    for folder, _, files in os.walk(build_dir):
        if "CTestTestfile.cmake" in files:
            with open(os.path.join(folder, "CTestTestfile.cmake")) as f:
                for line in f:
                    m = line_re.match(line)
                    if m:
                        commands[m.group(1)] = m.group(2)
    return commands


def strings_of(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from strings_of(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings_of(v)


def target_names_of_path(path):
    """lib/libswinrun.so.0.1.0 -> swinrun; tests/x/test_y -> test_y"""
    base = os.path.basename(path)
    names = {base}
    stem = re.sub(r"(\.so(\.\d+)*|\.a|\.dylib)$", "", base)
    names.add(stem)
    if stem.startswith("lib"):
        names.add(stem[3:])
    return names


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    build_dir = os.path.abspath(sys.argv[1])
    selections, cur = [], []
    for a in sys.argv[2:]:
        if a == "--":
            selections.append(cur)
            cur = []
        else:
            cur.append(a)
    selections.append(cur)

    targets = cmake_targets(build_dir)
    commands = test_commands(build_dir)
    needed, blind = set(), []
    for args in selections:
        for test in selected_tests(build_dir, args):
            if test["name"] not in commands:
                sys.exit(f"test_targets: no add_test line for {test['name']} in {build_dir}")
            found = set()
            # every property but the folder the test runs in, which is no target's output
            properties = [p for p in test.get("properties", []) if p.get("name") != "WORKING_DIRECTORY"]
            for s in strings_of([commands[test["name"]], properties]):
                for token in re.split(r"[\s;=,:'\"()]+", s):
                    if token.rstrip("/") == build_dir:
                        found.add("all")
                    elif token.startswith(build_dir + "/"):
                        found |= target_names_of_path(token) & targets
            if not found:
                blind.append(test["name"])
            needed |= found
    if blind:
        print("test_targets: these tests name no build target: " + ", ".join(blind), file=sys.stderr)
    print("\n".join(["all"] if "all" in needed else sorted(needed)))


if __name__ == "__main__":
    main()
