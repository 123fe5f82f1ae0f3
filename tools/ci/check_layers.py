#!/usr/bin/env python3
"""Checks that no source of a lower layer includes a header of a higher one.

    check_layers.py [--root DIR]      exit 0 when every project include is allowed, else 1
    check_layers.py --self-test       plants violations in a copy of the tree; each must fail

The layers, bottom up (the CMake targets in parentheses link only what is listed):

    core        core/                 (swin_core)        nothing
    ops         kernels/*.[ch]        (swin_ops)         core
    weights     weights/              (swin_weights)     core
    cpu         kernels/cpu/          (swin_cpu)         core, ops
    cuda        kernels/cuda/         (swin_cuda, swin_cuda_emu)  core, ops
    runtime     runtime/              (swin_forward, swinrun_lib)  core, ops, weights, cpu, cuda
    pipeline    pipeline/, formats/dicom/  (swin_pipeline)  core, runtime
    cli         apps/cli/          (swinrun)          core, runtime, pipeline

Outside the layers: the CUDA emulator tests/cuemu/ (cuemu) includes nothing of the project;
tests/, bench/ and tools/ may include anything; apps/cli/emu_device.c is compiled into
the emulated CLI only and may include the emulator. Only quoted includes of a path under
one of these folders are checked (system headers and generated ones are not the project's).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

# (folder prefix, layer); the longest matching prefix wins. A prefix ending in "/*"
# matches the files directly in that folder only.
FOLDERS = [
    ("core/", "core"),
    ("kernels/*", "ops"),
    ("weights/", "weights"),
    ("kernels/cpu/", "cpu"),
    ("kernels/cuda/", "cuda"),
    ("tests/cuemu/", "emu"),
    ("runtime/", "runtime"),
    ("pipeline/", "pipeline"),
    ("formats/dicom/", "pipeline"),
    ("apps/cli/", "cli"),
    ("tests/", "tooling"),
    ("bench/", "tooling"),
    ("tools/", "tooling"),
]
FILES = {"apps/cli/emu_device.c": "tooling"}

ALLOWED = {
    "core": set(),
    "ops": {"core"},
    "weights": {"core"},
    "cpu": {"core", "ops"},
    "cuda": {"core", "ops"},
    "emu": set(),
    "runtime": {"core", "ops", "weights", "cpu", "cuda"},
    "pipeline": {"core", "runtime"},
    "cli": {"core", "runtime", "pipeline"},
    "tooling": None,  # anything
}

SOURCE_EXT = (".c", ".h", ".cu", ".cuh", ".cpp")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of(path):
    if path in FILES:
        return FILES[path]
    best, best_len = None, -1
    for prefix, layer in FOLDERS:
        if prefix.endswith("/*"):
            folder = prefix[:-1]
            hit = path.startswith(folder) and "/" not in path[len(folder):]
        else:
            hit = path.startswith(prefix)
        if hit and len(prefix) > best_len:
            best, best_len = layer, len(prefix)
    return best


def sources(root):
    for top in sorted({p.split("/")[0] for p, _ in FOLDERS}):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(SOURCE_EXT):
                    yield os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")


def violations(root):
    found = []
    for path in sources(root):
        src = layer_of(path)
        if src is None:
            found.append(f"{path}: in no layer: add its folder to FOLDERS in tools/ci/check_layers.py")
            continue
        allowed = ALLOWED[src]
        if allowed is None:
            continue
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            for lineno, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                dst = layer_of(m.group(1))
                if dst is None or dst == src:
                    continue  # not a project path (system, generated), or the same layer
                if dst not in allowed:
                    found.append(f"{path}:{lineno}: layer '{src}' includes \"{m.group(1)}\" of layer '{dst}' "
                                 f"(allowed: {', '.join(sorted(allowed)) or 'nothing'})")
    return found


def check(root):
    found = violations(root)
    for v in found:
        print(v)
    if found:
        print(f"{len(found)} include(s) reach up a layer: move the shared type down "
              f"(into core/), or the code up", file=sys.stderr)
        return 1
    print(f"layers ok: {sum(1 for _ in sources(root))} sources checked")
    return 0


# (file to plant in, include line to add, why it must fail)
PLANTS = [
    ("core/status.h", '#include "runtime/plan.h"', "core includes runtime"),
    ("kernels/ops.h", '#include "weights/onnx_loader.h"', "the op table includes the loader"),
    ("weights/strmap.c", '#include "runtime/swinrun.h"', "weights includes the public API"),
    ("kernels/cuda/pack.cu", '#include "tests/cuemu/cuemu_api.h"', "a production .cu includes the emulator"),
    ("kernels/cpu/copy.c", '#include "kernels/cuda/cuda_backend.h"', "one backend includes another"),
    ("runtime/plan.c", '#include "pipeline/sliding.h"', "runtime includes the pipeline"),
    ("pipeline/png.c", '#include "apps/cli/cli.h"', "the pipeline includes the CLI"),
]


def self_test(root):
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for path in sources(root):
            os.makedirs(os.path.join(tmp, os.path.dirname(path)), exist_ok=True)
            shutil.copyfile(os.path.join(root, path), os.path.join(tmp, path))
        if violations(tmp):
            print("self-test: the unmodified tree must pass first")
            return 1
        for path, line, why in PLANTS:
            full = os.path.join(tmp, path)
            with open(full, encoding="utf-8") as f:
                text = f.read()
            with open(full, "w", encoding="utf-8") as f:
                f.write(line + "\n" + text)
            # the real command line, as CTest runs it
            r = subprocess.run([sys.executable, __file__, "--root", tmp], capture_output=True, text=True)
            named = f"{path}:1:" in r.stdout
            print(f"{'ok  ' if r.returncode == 1 and named else 'FAIL'} planted: {why} ({path}: {line})")
            ok &= r.returncode == 1 and named
            with open(full, "w", encoding="utf-8") as f:
                f.write(text)
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    return self_test(a.root) if a.self_test else check(a.root)


if __name__ == "__main__":
    sys.exit(main())
