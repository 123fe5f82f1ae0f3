#!/usr/bin/env python3
"""No merge left half done: fails when a file git tracks holds a conflict marker line
('<<<<<<< ' or '>>>>>>> ' at a line's start), naming each.

    check_conflicts.py [--root DIR]     the repository's tracked files (git ls-files)
    check_conflicts.py --self-test      a planted conflict must be found, a clean file not"""
import argparse
import os
import subprocess
import sys
import tempfile

MARKERS = (b"<<<<<<< ", b">>>>>>> ")


def conflicts(path):
    """(line number, line) of each marker line in the file; none in a file that is not text."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return []
    if b"\0" in data[:8192]:
        return []
    return [(i + 1, line.decode(errors="replace")) for i, line in enumerate(data.split(b"\n"))
            if line.startswith(MARKERS)]


def self_test():
    with tempfile.TemporaryDirectory() as d:
        bad, good = os.path.join(d, "bad.md"), os.path.join(d, "good.md")
        with open(bad, "w") as f:
            f.write("a\n<<<<<<< HEAD\nb\n=======\nc\n>>>>>>> topic\n")
        with open(good, "w") as f:
            f.write("Title\n=======\n\n    x <<<<<<< y\n")
        found, clean = conflicts(bad), conflicts(good)
    ok = [n for n, _ in found] == [2, 6] and not clean
    print("check_conflicts self-test:", "ok" if ok else f"FAIL (found {found}, clean {clean})")
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    files = subprocess.run(["git", "-C", a.root, "ls-files", "-z"], capture_output=True, check=True).stdout
    bad = [(name, n, line) for name in files.decode().split("\0") if name
           for n, line in conflicts(os.path.join(a.root, name))]
    for name, n, line in bad:
        print(f"{name}:{n}: a merge conflict marker: {line[:60]}")
    print(f"check_conflicts: {len(bad)} marker line(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
