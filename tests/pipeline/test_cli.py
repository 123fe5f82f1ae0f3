#!/usr/bin/env python3
"""The segment CLI's forms and promises, with a real (small) model:
  - `swinrun CT OUT` with the model from SWINRUN_MODEL, a preview PNG and --json;
  - --invert linear (the JSON report says which way back), a bad --invert refused;
  - a dynamic export: --cube required, then any multiple-of-32 window;
  - the batch form: model loaded once, DIR/<name>_seg.nii.gz, a bad volume in the middle
    reported by name and skipped (exit 1, "1 of 3 volumes failed"), the volumes before and
    after it written, JSON for all three;
  - SIGINT and SIGTERM in the middle of a batch (the second of three volumes in its
    windows): the process dies by the signal (a shell reports 130 / 143), the first
    volume's outputs are kept whole, nothing of the second or third and no temporary file
    (nor the JSON report) is left.

    test_cli.py SWINRUN MODEL WORKDIR"""
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import time
import zlib

import nibabel as nib
import numpy as np


def save(path, shape, zooms, cls=nib.Nifti1Image):
    rng = np.random.default_rng(5)
    nib.save(cls(rng.integers(-500, 500, size=shape).astype(np.int16), np.diag([*zooms, 1.0])), path)
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
        check("json: the way back, nearest by default", j.get("invert") == "nearest", str(j.get("invert")))
        sec = v["seconds"]
        parts = [sec[k] for k in ("cut", "forward", "blend", "argmax")]
        check("json: the cubes' phases (cut, forward, blend, argmax) add up to at most their stage",
              min(parts) >= 0 and sec["forward"] > 0 and sum(parts) <= sec["windows"] + 1e-3,
              f"{parts} of {sec['windows']}")
        check("json: no device idle time on the CPU backend (null)",
              "device_idle_seconds" in v and v["device_idle_seconds"] is None, str(v.get("device_idle_seconds")))
    lin, jl = os.path.join(work, "a_lin.nii.gz"), os.path.join(work, "a_lin.json")
    r = subprocess.run([swinrun, a, lin, "--invert", "linear", "--json", jl], capture_output=True, text=True, env=env)
    check("--invert linear: labels, json says linear", r.returncode == 0 and nib.load(lin).shape == (40, 30, 20) and
          json.load(open(jl)).get("invert") == "linear", r.stderr.strip()[-200:])
    r = subprocess.run([swinrun, a, lin + ".x.nii.gz", "--invert", "cubic"], capture_output=True, text=True, env=env)
    check("--invert cubic: refused, one line naming the choices", r.returncode != 0 and
          "nearest or linear" in r.stderr and r.stderr.count("\n") == 1 and not os.path.exists(lin + ".x.nii.gz"),
          r.stderr.strip()[-200:])

    dyn = os.path.join(os.path.dirname(model), "..", "f12_dyn_ts", "model.onnx")
    check("test data: the dynamic export f12_dyn_ts", os.path.exists(dyn), dyn)
    if os.path.exists(dyn):  # a dynamic export needs --cube; with it, it runs
        o = os.path.join(work, "dyn.nii.gz")
        r1 = subprocess.run([swinrun, a, o, "--model", dyn], capture_output=True, text=True)
        r2 = subprocess.run([swinrun, a, o, "--model", dyn, "--cube", "32", "32", "64"], capture_output=True, text=True)
        check("dynamic export: refused without --cube, runs with it",
              r1.returncode == 2 and "dynamic" in r1.stderr and r2.returncode == 0 and os.path.exists(o),
              (r1.stderr + r2.stderr).strip()[-200:])

    bad = os.path.join(work, "b.nii")
    open(bad, "w").write("not an image")
    # the last one a NIfTI-1 .hdr/.img pair, given by its .img: named c_seg.nii.gz
    c = save(os.path.join(work, "c.img"), (36, 36, 18), (1.5, 1.5, 2.0), nib.Nifti1Pair)
    outdir = os.path.join(work, "batch")
    os.makedirs(outdir, exist_ok=True)
    bj = os.path.join(work, "batch.json")
    r = subprocess.run([swinrun, "segment", "--model", model, "--out-dir", outdir, "--with-preview", "--json", bj,
                        a, bad, c], capture_output=True, text=True)
    files = sorted(os.listdir(outdir))
    check("batch: bad volume in the middle named, exit 1", r.returncode == 1 and "b.nii" in r.stderr and
          "1 of 3 volumes failed" in r.stderr, r.stderr.strip()[-200:])
    check("batch: the volumes before and after it written with previews",
          files == ["a_preview.png", "a_seg.nii.gz", "c_preview.png", "c_seg.nii.gz"], str(files))
    if "c_seg.nii.gz" in files:
        check("batch: the last volume's labels on its own grid", nib.load(os.path.join(outdir, "c_seg.nii.gz")).shape ==
              (36, 36, 18))
    if os.path.exists(bj):
        st = [(os.path.basename(v["input"]), v["status"]) for v in json.load(open(bj))["volumes"]]
        check("batch: json has all three volumes", st == [("a.nii.gz", "SWIN_OK"), ("b.nii", "SWIN_ERR_FORMAT"),
                                                          ("c.img", "SWIN_OK")], str(st))
    else:
        check("batch: json written", False)

    # a volume that takes a few seconds (hundreds of windows of 32^3), second of three
    big = save(os.path.join(work, "big.nii.gz"), (200, 200, 100), (1.5, 1.5, 2.0))
    for sig in (signal.SIGINT, signal.SIGTERM):
        sub = os.path.join(work, f"sig{int(sig)}")
        shutil.rmtree(sub, ignore_errors=True)
        os.makedirs(sub)
        js = os.path.join(work, f"sig{int(sig)}.json")
        if os.path.exists(js):
            os.remove(js)
        p = subprocess.Popen([swinrun, "segment", "--model", model, "--out-dir", sub, "--with-probabilities",
                              "--with-preview", "--json", js, a, big, c], stderr=subprocess.PIPE, text=True)
        first = os.path.join(sub, "a_seg.nii.gz")
        t0 = time.time()
        while not os.path.exists(first) and time.time() - t0 < 60 and p.poll() is None:
            time.sleep(0.05)
        time.sleep(1.5)  # into the big volume's windows
        tmp_seen = [f for f in os.listdir(work) if f.startswith(os.path.basename(js))]
        p.send_signal(sig)
        p.wait(timeout=60)
        left = sorted(os.listdir(sub))
        json_left = [f for f in os.listdir(work) if f.startswith(os.path.basename(js))]
        first_ok = os.path.exists(first) and nib.load(first).shape == (40, 30, 20)
        check(f"{signal.Signals(sig).name} mid-batch: killed by it, first volume kept, nothing else left",
              p.returncode == -sig and first_ok and
              left == ["a_preview.png", "a_probabilities.nii.gz", "a_seg.nii.gz"] and tmp_seen and not json_left,
              f"rc={p.returncode} json tmp before={tmp_seen} after={json_left} outputs={left}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
