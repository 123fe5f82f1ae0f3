#!/usr/bin/env python3
"""Bad inputs to `swinrun CT OUT`: each must exit nonzero with exactly one line on stderr
that names the problem, and leave no output file (and no temporary file) behind.

    test_bad_inputs.py SWINRUN MODEL WORKDIR   (MODEL in the test data: test-data/CASE/model.onnx)"""
import gzip
import os
import subprocess
import sys

import nibabel as nib
import numpy as np


def ct(shape=(40, 36, 20), dtype=np.int16):
    rng = np.random.default_rng(0)
    return rng.integers(-1000, 1000, size=shape).astype(dtype)


def save(path, data, zooms=(1.5, 1.5, 2.0)):
    img = nib.Nifti1Image(data, np.diag([*zooms, 1.0]), dtype=data.dtype)
    nib.save(img, path)
    return path


def patch_header(path, field_offset, fmt_bytes):
    with open(path, "r+b") as f:
        f.seek(field_offset)
        f.write(fmt_bytes)
    return path


def main():
    swinrun, model, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    good = save(os.path.join(work, "good.nii.gz"), ct())
    cases = {}  # name -> (argv, words the message must contain)

    p = os.path.join(work, "text.nii.gz")
    open(p, "w").write("this is not an image\n" * 20)
    cases["not a NIfTI (text)"] = ([p], "not a NIfTI")
    p = os.path.join(work, "random.nii")
    open(p, "wb").write(np.random.default_rng(1).integers(0, 256, 4096).astype(np.uint8).tobytes())
    cases["not a NIfTI (random bytes)"] = ([p], "NIfTI")

    raw = open(good, "rb").read()
    full = gzip.decompress(raw)
    p = os.path.join(work, "truncated.nii.gz")
    open(p, "wb").write(gzip.compress(full[: len(full) // 2]))
    cases["truncated .nii.gz (data cut)"] = ([p], "truncated")
    p = os.path.join(work, "truncated_stream.nii.gz")
    open(p, "wb").write(raw[: len(raw) // 2])
    cases["truncated .nii.gz (gzip stream cut)"] = ([p], "truncated")

    d = os.path.join(os.path.dirname(nib.__file__), "tests", "data", "example4d.nii.gz")
    # two volumes: the channels of a 2-channel model, not this one's
    cases["4D image (nibabel example4d)"] = ([d], "2 channels, but the model takes 1")
    cases["2D image"] = ([save(os.path.join(work, "flat.nii"), ct((40, 36, 1)))], "2D")
    p = save(os.path.join(work, "zero.nii"), ct())
    cases["zero-sized dimension"] = ([patch_header(p, 40 + 2 * 3, np.int16(0).tobytes())], "size 0")
    f = ct().astype(np.float32)
    f[3, 4, 5] = np.nan
    cases["NaN voxel"] = ([save(os.path.join(work, "nan.nii"), f)], "NaN")
    f = ct().astype(np.float32)
    f[1, 2, 3] = np.inf
    cases["infinite voxel"] = ([save(os.path.join(work, "inf.nii.gz"), f)], "infinite")
    p = save(os.path.join(work, "huge.nii"), ct())
    cases["absurd dimensions"] = ([patch_header(p, 40 + 2, np.array([30000, 30000, 30000], np.int16).tobytes())],
                                  "voxels")
    cases["absurd spacing (1e-9 mm)"] = ([save(os.path.join(work, "tiny.nii"), ct(), (1e-9, 1e-9, 1e-9))], "spacing")
    cases["absurd spacing (1e9 mm)"] = ([save(os.path.join(work, "vast.nii"), ct(), (1e9, 1.0, 1.0))], "spacing")
    cases["input file missing"] = ([os.path.join(work, "nonexistent.nii.gz")], "No such file")
    missing_dir_out = os.path.join(work, "no_such_dir", "out.nii.gz")
    cases["output in a missing directory"] = ([good, missing_dir_out], "no such directory")
    cases["output not named .nii/.nii.gz"] = ([good, os.path.join(work, "out.txt")], ".nii")
    cases["preview in a missing directory"] = ([good, None, "--preview", os.path.join(work, "nodir", "p.png")],
                                               "no such directory")

    # a model with four input channels: the test matrix's f24_c64_cfg_ts (tools/export/make_test_data.sh)
    in4 = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(model))), "f24_c64_cfg_ts", "model.onnx")
    cases["model with 4 input channels"] = ([good, None, "--model", in4], "one channel, but the model takes 4")
    cases["no model anywhere"] = ([good, None, "--env-no-model"], "no model found")

    ok = True
    for name, (args, words) in cases.items():
        out = os.path.join(work, "out.nii.gz")
        argv = [swinrun, args[0], args[1] if len(args) > 1 and args[1] else out]
        extra = list(args[2:])
        env = dict(os.environ)
        if extra == ["--env-no-model"]:
            extra = []
            env.pop("SWINRUN_MODEL", None)
            env["XDG_DATA_HOME"] = os.path.join(work, "empty_xdg")
        elif "--model" not in extra:
            extra += ["--model", model]
        target = argv[2]
        for t in (target, out):
            if os.path.exists(t):
                os.remove(t)
        before = set(os.listdir(work))
        r = subprocess.run(argv + extra + ["-q"], capture_output=True, text=True, env=env)
        lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
        left = [f for f in set(os.listdir(work)) - before]
        good_case = (r.returncode != 0 and len(lines) == 1 and words.lower() in lines[0].lower()
                     and not os.path.exists(target) and not left)
        print(f"{name:38s} rc={r.returncode} {'ok  ' if good_case else 'FAIL'} {lines[0] if lines else '(no message)'}"
              f"{'' if len(lines) <= 1 else f' (+{len(lines) - 1} more lines)'}{' left: ' + str(left) if left else ''}")
        ok &= good_case
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
