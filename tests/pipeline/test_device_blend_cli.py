#!/usr/bin/env python3
"""swinrun_emu segment on the emulated CUDA backend, a real model: the cubes blended on the
device against the same run blended on the host.

    test_device_blend_cli.py SWINRUN_EMU MODEL.onnx WORKDIR [--half]

One CT phantom smaller than the model's cube (one cube, padding), the linear way back with the
probabilities and the preview written (the file form: one-byte labels on the preprocessed grid
for the preview, probability planes for the inversion and the output):
  - `swinrun plan --volume --voxel-size` gives the context's bytes and the ring's;
  - with --mem-limit between the two, auto blends on the host and says why (the reference run),
    and --blend-on device is refused before any cube, leaving no output;
  - without a limit the cubes are blended on the device, in a ring of the planned bytes, and
    swinrun_emu itself fails unless the emulated device's high-water mark equals the plan's
    total (context + ring);
  - the label maps, the probabilities and the previews of both runs are equal (the
    probabilities to the bit: the emulator's device exp is the host's);
  - with --half, a CT of intensities around 3e4 fed unclipped overflows float16: blended on the
    device the run fails as on the host (exit 1, saying to run with --precision fp32, no output).
Exit status 0 when every check passes."""
import json
import os
import subprocess
import sys

import nibabel as nib
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PHANTOM = os.path.join(HERE, "..", "..", "tools", "export", "make_ct_phantom.py")
SHAPE, SPACING = (24, 20, 14), (1.5, 1.5, 2.0)

failures = []


def check(what, cond):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run(args):
    return subprocess.run(args, capture_output=True, text=True)


def main():
    exe, model, work = sys.argv[1:4]
    extra = ["--half"] if "--half" in sys.argv[4:] else []
    os.makedirs(work, exist_ok=True)
    ct = os.path.join(work, "ct.nii.gz")
    subprocess.run([sys.executable, PHANTOM, ct, "--shape", *map(str, SHAPE), "--spacing", *map(str, SPACING)],
                   check=True, capture_output=True)
    common = ["--model", model, "--backend", "cuda", "--invert", "linear", "-q", *extra]

    plan_json = os.path.join(work, "plan.json")
    r = run([exe, "plan", model, "--backend", "cuda", *extra, "--invert", "linear", "--with-probabilities",
             "--volume", *map(str, SHAPE), "--voxel-size", *map(str, SPACING), "--json", plan_json])
    check("swinrun plan --volume runs: " + r.stderr.strip(), r.returncode == 0)
    plan = json.load(open(plan_json))
    ring, total = plan["ring_bytes"], plan["total_bytes"]
    context = total - ring
    check(f"the plan counts a ring ({ring} bytes) in its total ({total})", ring > 0)
    limit = str(context + ring // 2)

    out = {}
    for name, args in (("host", ["--mem-limit", limit]), ("device", [])):
        o = {k: os.path.join(work, f"{name}_{k}") for k in ("labels.nii.gz", "probs.nii.gz", "preview.png", "json")}
        r = run([exe, ct, o["labels.nii.gz"], *common, *args, "--probabilities", o["probs.nii.gz"],
                 "--preview", o["preview.png"], "--json", o["json"]])
        check(f"{name} run: exit {r.returncode} {r.stderr.strip()[-300:]}", r.returncode == 0)
        out[name] = o
    rep = {k: json.load(open(out[k]["json"]))["volumes"][0] for k in out}
    check("auto under a limit below context + ring blends on the host and says why: " + rep["host"]["blend_note"],
          not rep["host"]["blended_on_device"] and "limit" in rep["host"]["blend_note"])
    check(f"without a limit the cubes are blended on the device, in a ring of the planned {ring} bytes",
          rep["device"]["blended_on_device"] and rep["device"]["ring_bytes"] == ring)
    check("one cube, a volume smaller than it", rep["device"]["windows"] == 1)
    for k in rep:
        idle = rep[k].get("device_idle_seconds")
        check(f"{k} run: the device's idle time, timed by events, within the cubes' stage: {idle}",
              isinstance(idle, float) and 0 <= idle <= rep[k]["seconds"]["windows"])

    refused = os.path.join(work, "refused.nii.gz")
    r = run([exe, ct, refused, *common, "--blend-on", "device", "--mem-limit", limit])
    check("--blend-on device under that limit is refused (exit 1), naming host blending: " + r.stderr.strip(),
          r.returncode == 1 and "--blend-on host" in r.stderr and not os.path.exists(refused))

    lh = np.asarray(nib.load(out["host"]["labels.nii.gz"]).dataobj)
    ld = np.asarray(nib.load(out["device"]["labels.nii.gz"]).dataobj)
    check(f"labels equal on the {lh.shape} input grid ({int((lh != ld).sum())} differ, {len(np.unique(lh))} labels)",
          lh.shape == ld.shape and (lh == ld).all())
    ph = np.asarray(nib.load(out["host"]["probs.nii.gz"]).dataobj)
    pd = np.asarray(nib.load(out["device"]["probs.nii.gz"]).dataobj)
    check(f"probabilities equal ({ph.size} values, max difference {float(np.abs(ph - pd).max()):.3g})",
          ph.shape == pd.shape and (ph == pd).all())
    check("previews equal", open(out["host"]["preview.png"], "rb").read() == open(out["device"]["preview.png"],
                                                                                     "rb").read())
    if extra:
        hot = os.path.join(work, "overflow.nii.gz")
        img = nib.load(ct)
        data = 3e4 + 1e4 * np.sin(np.arange(np.prod(SHAPE)).reshape(SHAPE) * 0.37).astype(np.float32)
        nib.save(nib.Nifti1Image(data.astype(np.float32), img.affine), hot)
        out_hot = os.path.join(work, "overflow_labels.nii.gz")
        r = run([exe, hot, out_hot, *common, "--blend-on", "device", "--no-intensity-clip"])
        check("half overflow blended on the device: exit 1, 'run with --precision fp32': " + r.stderr.strip()[-200:],
              r.returncode == 1 and "run with --precision fp32" in r.stderr and not os.path.exists(out_hot))
    print("FAILED: %d" % len(failures) if failures else "PASS")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
