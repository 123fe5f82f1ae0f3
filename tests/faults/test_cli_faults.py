#!/usr/bin/env python3
"""Allocation faults through the CLI (swinrun_alloc_faults: the CLI with the allocation
wrappers, armed by SWIN_FAIL_ALLOC=N): `swinrun segment` in the batch form with every output
(label map, probabilities, preview, JSON report), once more with --invert linear, and
`swinrun forward`. A counting run gives
each command's allocations and their call stacks, `swinrun info` the loader's; then one run
per N fails allocation N, for every N after the loader's share and the first of each call
stack within it. Each run must exit 1 with a last line 'swinrun: ... memory ...', leave no
output and no temporary file; only the JSON report may stay, naming the volume as failed
with SWIN_ERR_NOMEM (it reports the batch).

    test_cli_faults.py SWINRUN_ALLOC_FAULTS MODEL WORKDIR"""
import json
import os
import shutil
import subprocess
import sys

import nibabel as nib
import numpy as np


def run(cmd, fail_at=0, log=None):
    env = dict(os.environ, SWIN_FAIL_ALLOC=str(fail_at))
    if log:
        env["SWIN_ALLOC_LOG"] = log
    return subprocess.run(cmd, capture_output=True, text=True, env=env)


def count(cmd, log):
    r = run(cmd, log=log)
    lines = open(log).read().split()
    return r, int(lines[0]), lines[1:]


def main():
    exe, model, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    out = os.path.join(work, "out")
    ok = True

    def check(what, cond, detail=""):
        nonlocal ok
        if not cond:
            print(f"{what:60s} FAIL {detail}")
        ok &= bool(cond)

    rng = np.random.default_rng(5)
    ct = os.path.join(work, "ct.nii.gz")
    nib.save(nib.Nifti1Image(rng.integers(-500, 500, size=(40, 30, 20)).astype(np.int16),
                             np.diag([1.5, 1.5, 2.0, 1.0])), ct)
    x = os.path.join(work, "x.npy")
    np.save(x, rng.random((1, 1, 32, 32, 32), dtype=np.float32))
    report = os.path.join(out, "report.json")
    commands = {
        "segment": [exe, "segment", "--model", model, "--out-dir", out, "--with-probabilities", "--with-preview",
                    "--json", report, ct],
        "segment_linear": [exe, "segment", "--model", model, "--out-dir", out, "--with-probabilities",
                           "--with-preview", "--invert", "linear", "--json", report, ct],
        "forward": [exe, "forward", model, x, os.path.join(out, "y.npy")],
    }
    log = os.path.join(work, "alloc.log")
    _, loader, _ = count([exe, "info", model], log)
    for name, cmd in commands.items():
        os.makedirs(out, exist_ok=True)
        r, total, stacks = count(cmd, log)
        check(f"{name}: runs without a fault", r.returncode == 0, r.stderr.strip()[-200:])
        shutil.rmtree(out)
        seen, chosen = set(), []
        for n in range(1, total + 1):
            first = stacks[n - 1] not in seen
            seen.add(stacks[n - 1])
            if first or n > loader - 10:
                chosen.append(n)
        for n in chosen:
            os.makedirs(out)
            r = run(cmd, fail_at=n)
            last = r.stderr.strip().split("\n")[-1]
            left = sorted(os.listdir(out))
            json_ok = True
            if "report.json" in left:
                left.remove("report.json")
                vols = json.load(open(report))["volumes"]
                json_ok = [v["status"] for v in vols] == ["SWIN_ERR_NOMEM"]
            check(f"{name}, allocation {n} of {total} failed", r.returncode == 1 and last.startswith("swinrun: ") and
                  "memory" in last and not left and json_ok, f"rc={r.returncode} left={left} json_ok={json_ok} "
                  f"stderr={last[-200:]}")
            shutil.rmtree(out)
        print(f"{name}: {total} allocations ({loader} the loader's), {len(seen)} call stacks: {len(chosen)} runs, "
              f"each failing one (every one after the loader's share, the first of each call stack before)")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
