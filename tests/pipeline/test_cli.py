#!/usr/bin/env python3
"""The segment CLI's forms and promises, with a real (small) model:
  - `swinrun CT OUT` with the model from SWINRUN_MODEL, a preview PNG and --json;
  - a dynamic export: --roi required, then any multiple-of-32 window;
  - the batch form: model loaded once, DIR/<name>_seg.nii.gz, a bad volume reported and
    skipped (exit 1), the good one written, JSON for both;
  - SIGINT and SIGTERM during the windows: the process dies by the signal and leaves
    neither an output nor a temporary file.

    test_cli.py SWINRUN MODEL WORKDIR"""
import json
import os
import signal
import struct
import subprocess
import sys
import time
import zlib

import nibabel as nib
import numpy as np


def save(path, shape, zooms):
    rng = np.random.default_rng(5)
    nib.save(nib.Nifti1Image(rng.integers(-500, 500, size=shape).astype(np.int16), np.diag([*zooms, 1.0])), path)
    return path


def png_size(path):
    b = open(path, "rb").read()
    assert b[:8] == b"\x89PNG\r\n\x1a\n" and b[12:16] == b"IHDR"
    w, h = struct.unpack(">II", b[16:24])
    # decode to check the IDAT stream and the row count
    idat = b"".join(b[i + 8:i + 8 + struct.unpack(">I", b[i:i + 4])[0]] for i in range(8, len(b) - 12)
                    if b[i + 4:i + 8] == b"IDAT")
    raw = zlib.decompress(idat)
    assert len(raw) == h * (3 * w + 1)
    return w, h


def main():
    swinrun, model, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    for f in os.listdir(work):
        if not os.path.isdir(os.path.join(work, f)):
            os.remove(os.path.join(work, f))
    ok = True

    def check(what, cond, detail=""):
        nonlocal ok
        print(f"{what:60s} {'ok' if cond else 'FAIL'} {detail}")
        ok &= bool(cond)

    a = save(os.path.join(work, "a.nii.gz"), (40, 30, 20), (1.5, 1.5, 2.0))
    env = dict(os.environ, SWINRUN_MODEL=model)
    out, prev, js = (os.path.join(work, n) for n in ("a_out.nii.gz", "a.png", "a.json"))
    r = subprocess.run([swinrun, a, out, "--preview", prev, "--json", js], capture_output=True, text=True, env=env)
    check("implicit segment with SWINRUN_MODEL, preview, json", r.returncode == 0, r.stderr.strip()[-200:])
    if r.returncode == 0:
        lab = nib.load(out)
        check("labels: input shape and affine, uint8", lab.shape == (40, 30, 20) and
              np.allclose(lab.affine, nib.load(a).affine) and lab.get_data_dtype() == np.uint8)
        w, h = png_size(prev)
        check("preview PNG decodes", w > 0 and h > 0, f"{w} x {h}")
        j = json.load(open(js))
        v = j["volumes"][0]
        check("json: windows, timings, memory", v["windows"] == 2 and v["seconds"]["windows"] > 0 and
              j["peak_rss_bytes"] > 0 and j["planned_total_bytes"] > 0, f"{v['windows']} windows")

    dyn = os.path.join(os.path.dirname(model), "..", "f12_dyn_ts", "model.onnx")
    check("test data: the dynamic export f12_dyn_ts", os.path.exists(dyn), dyn)
    if os.path.exists(dyn):  # a dynamic export needs --roi; with it, it runs
        o = os.path.join(work, "dyn.nii.gz")
        r1 = subprocess.run([swinrun, a, o, "--model", dyn], capture_output=True, text=True)
        r2 = subprocess.run([swinrun, a, o, "--model", dyn, "--roi", "32", "32", "64"], capture_output=True, text=True)
        check("dynamic export: refused without --roi, runs with it",
              r1.returncode == 2 and "dynamic" in r1.stderr and r2.returncode == 0 and os.path.exists(o),
              (r1.stderr + r2.stderr).strip()[-200:])

    bad = os.path.join(work, "b.nii")
    open(bad, "w").write("not an image")
    outdir = os.path.join(work, "batch")
    os.makedirs(outdir, exist_ok=True)
    bj = os.path.join(work, "batch.json")
    r = subprocess.run([swinrun, "segment", "--model", model, "--out-dir", outdir, "--with-preview", "--json", bj,
                        bad, a], capture_output=True, text=True)
    files = sorted(os.listdir(outdir))
    check("batch: bad volume skipped, exit 1", r.returncode == 1 and "b.nii" in r.stderr, r.stderr.strip()[-200:])
    check("batch: good volume written with preview", files == ["a_preview.png", "a_seg.nii.gz"], str(files))
    if os.path.exists(bj):
        st = [v["status"] for v in json.load(open(bj))["volumes"]]
        check("batch: json has both volumes", st == ["SWIN_ERR_FORMAT", "SWIN_OK"], str(st))
    else:
        check("batch: json written", False)

    # a volume that takes a few seconds (hundreds of windows of 32^3)
    big = save(os.path.join(work, "big.nii.gz"), (200, 200, 100), (1.5, 1.5, 2.0))
    for sig in (signal.SIGINT, signal.SIGTERM):
        sub = os.path.join(work, f"sig{int(sig)}")
        os.makedirs(sub, exist_ok=True)
        p = subprocess.Popen([swinrun, big, os.path.join(sub, "o.nii.gz"), "--model", model, "--json",
                              os.path.join(sub, "o.json"), "--probabilities", os.path.join(sub, "p.nii.gz")],
                             stderr=subprocess.PIPE, text=True)
        time.sleep(3.0)
        tmp_seen = os.listdir(sub)
        p.send_signal(sig)
        p.wait(timeout=60)
        left = os.listdir(sub)
        check(f"{signal.Signals(sig).name} mid-run: killed by it, nothing left behind",
              p.returncode == -sig and not left and tmp_seen, f"rc={p.returncode} before={tmp_seen} after={left}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
