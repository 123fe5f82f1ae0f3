#!/usr/bin/env python3
"""A model of several input channels (MRI sequences, BraTS-style) through the whole pipeline,
against MONAI's: the channels as one 4D NIfTI file or as one file per channel (a list of files
for LoadImaged), each channel resampled and z-scored on its own (NormalizeIntensityd with
channel_wise=True, nonzero or not) or mapped through the intensity range, then sliding
windows, argmax and Invertd back to the input grid (tools/export/pipeline_reference.py); and
multi-label (--multi-label): each output channel's sigmoid >= 0.5, a 4D file of masks, by
both ways back (Invertd nearest after the threshold, or the sigmoids interpolated first).

    test_channels.py fake PROBE WORKDIR          the tests' fake model (4 inputs, 3 outputs) on
                                                 both sides: 100 % identical labels, the
                                                 preprocessed channels within 1e-5
    test_channels.py onnx SWINRUN MODEL WORKDIR  swinrun's CLI on a 4-input-channel export vs
                                                 MONAI with ONNX Runtime: >= 99.9 % identical,
                                                 probabilities within 5e-3; and the refusals
                                                 (channels that do not match the model, files
                                                 on different grids): exit 2, nothing written"""
import json
import os
import subprocess
import sys

import nibabel as nib
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "..", "..", "tools", "export"))
from fake_model import make_fake  # noqa: E402
from make_mri_phantom import SEQUENCES, phantom  # noqa: E402
from linear_reference import reference_linear  # noqa: E402
from pipeline_reference import predictor_from_onnx, reference  # noqa: E402


def head(shape, seed):
    """(nx, ny, nz, 4) MRI-like intensities, background exactly 0 (tools/export/make_mri_phantom.py)."""
    return phantom(shape, 4, seed)


def affine(spacing, oblique=False, lps=False):
    a = np.diag(list(spacing) + [1.0])
    if oblique:
        t = np.deg2rad(12)
        r = np.array([[np.cos(t), -np.sin(t), 0], [np.sin(t), np.cos(t), 0], [0, 0, 1]])
        a[:3, :3] = r @ a[:3, :3]
    if lps:
        a[:2] *= -1
    a[:3, 3] = [-40.0, 35.0, -20.0]
    return a


def cases(work):
    """name -> (the input paths, swinrun options, probe keys, reference keyword arguments)."""
    os.makedirs(work, exist_ok=True)
    out = {}
    x = head((58, 52, 40), 1)
    p = os.path.join(work, "mri4d_ras.nii.gz")
    nib.save(nib.Nifti1Image(x, affine((1.0, 1.2, 1.5))), p)
    out["4d_ras_nonzero_1mm"] = ([p], ["--intensity-norm", "zscore-nonzero", "--spacing", "1", "1", "1"],
                                 ["norm=zscore-nonzero", "spacing=1,1,1"],
                                 {"normalize": "zscore-nonzero", "spacing": (1.0, 1.0, 1.0)})
    x = head((50, 56, 36), 2)
    files = []
    for ch, name in enumerate(SEQUENCES):  # int16, one file per sequence, LPS and oblique
        files.append(os.path.join(work, f"lps_{name}.nii.gz"))
        nib.save(nib.Nifti1Image(np.round(x[..., ch]).astype(np.int16), affine((1.1, 0.9, 1.6), True, True)), files[-1])
    out["files_lps_oblique_nonzero"] = (files, ["--intensity-norm", "zscore-nonzero", "--spacing", "1.2", "1.2", "1.2"],
                                        ["norm=zscore-nonzero", "spacing=1.2,1.2,1.2"],
                                        {"normalize": "zscore-nonzero", "spacing": (1.2, 1.2, 1.2)})
    x = head((44, 40, 34), 3)
    img = nib.Nifti1Image(np.round(x / 0.5).astype(np.int16), affine((1.5, 1.5, 1.5)))
    img.header.set_slope_inter(0.5, 3.0)  # scaled: data = stored * 0.5 + 3 (the zeros become 3)
    p = os.path.join(work, "mri4d_scaled.nii.gz")
    nib.save(img, p)
    out["4d_scaled_zscore_noresample"] = ([p], ["--intensity-norm", "zscore", "--no-resample"],
                                          ["norm=zscore", "noresample=1"], {"normalize": "zscore", "resample": False})
    x = head((40, 46, 30), 4)
    files, types = [], (np.uint8, np.int16, np.float32, np.uint16)
    for ch, name in enumerate(SEQUENCES):  # a different datatype per file, the range recipe
        files.append(os.path.join(work, f"mixed_{name}.nii"))
        v = x[..., ch] / 8 if types[ch] == np.uint8 else x[..., ch]
        nib.save(nib.Nifti1Image(np.round(v).astype(types[ch]), affine((1.3, 1.3, 1.8), True)), files[-1])
    out["files_mixed_types_range"] = (files, ["--intensity-range", "0", "1500"], ["window=0,1500"],
                                      {"window": (0.0, 1500.0)})
    p = os.path.join(work, "mri4d_ras.nii.gz")  # multi-label, as BraTS' TC / WT / ET
    out["4d_ras_masks"] = ([p], ["--intensity-norm", "zscore-nonzero", "--spacing", "1", "1", "1", "--multi-label"],
                           ["norm=zscore-nonzero", "spacing=1,1,1", "masks=1"],
                           {"normalize": "zscore-nonzero", "spacing": (1.0, 1.0, 1.0), "masks": True})
    lps = [os.path.join(work, f"lps_{name}.nii.gz") for name in SEQUENCES]
    out["files_lps_masks_linear"] = (lps, ["--intensity-norm", "zscore-nonzero", "--multi-label", "--invert", "linear"],
                                     ["norm=zscore-nonzero", "masks=1", "invert=linear"],
                                     {"normalize": "zscore-nonzero", "masks": True, "linear": True})
    return out


def compare(name, got_path, ref, fake, probs=None, p_ref=None):
    got = np.asarray(nib.load(got_path).dataobj)
    if got.ndim == 4:  # masks: each channel present somewhere, and absent somewhere
        present = [int(ref[..., c].sum()) for c in range(ref.shape[-1])]
        if not all(0 < v < ref[..., c].size for c, v in enumerate(present)):
            return False, f"{name:30s} reference masks empty or full ({present}): the case tests nothing"
    frac = float(np.mean(got == ref)) if got.shape == ref.shape else 0.0
    good = frac >= (1.0 if fake else 0.999) and got.dtype == np.uint8
    msg = f"{name:30s} {100 * frac:.4f} % identical ({int(np.sum(got != ref)) if got.shape == ref.shape else 'shape'} differ)"
    if probs:
        p_got = np.asarray(nib.load(probs).dataobj, np.float64)
        p_ref = np.moveaxis(p_ref, 0, -1)
        perr = float(np.max(np.abs(p_got - p_ref))) if p_got.shape == p_ref.shape else float("nan")
        good &= bool(perr <= (1e-5 if fake else 5e-3))
        msg += f"; probabilities max |diff| {perr:.2e}"
    return good, msg


def refusals(swinrun, model, work):
    """Inputs that do not fit a 4-channel model: exit 2, one line naming the problem, no output;
    a count that does not fit refused from the headers, before the volumes are read."""
    x = head((30, 28, 24), 5)
    a = affine((1.5, 1.5, 1.5))
    one = os.path.join(work, "bad_one.nii.gz")
    nib.save(nib.Nifti1Image(x[..., 0], a), one)
    three = os.path.join(work, "bad_three.nii.gz")
    nib.save(nib.Nifti1Image(x[..., :3], a), three)
    shifted = os.path.join(work, "bad_shifted.nii.gz")
    b = a.copy()
    b[0, 3] += 2.0
    nib.save(nib.Nifti1Image(x[..., 1], b), shifted)
    many = os.path.join(work, "bad_many.nii.gz")
    nib.save(nib.Nifti1Image(np.repeat(x[..., :1], 17, axis=3), a), many)
    bad = {"one channel": ([one], "one channel, but the model takes 4"),
           "three volumes": ([three], "3 channels, but the model takes 4"),
           "files on different grids": ([one, shifted, one, one], "differs"),
           "17 volumes": ([many], "17 volumes"),
           "five channels from two files": ([one, x4 := os.path.join(work, "bad_four.nii.gz")], "5 channels")}
    nib.save(nib.Nifti1Image(x, a), x4)
    # counted from the headers before any volume is read: a pair whose .img is gone is refused
    # for its channels, not for the missing data
    headless = os.path.join(work, "bad_pair.hdr")
    nib.save(nib.Nifti1Pair(x[..., :2], a), headless)
    os.remove(headless[:-4] + ".img")
    bad["two channels, counted before reading"] = ([headless], "2 channels, but the model takes 4")
    ok = True
    for name, (inputs, words) in bad.items():
        out = os.path.join(work, "refused.nii.gz")
        if os.path.exists(out):
            os.remove(out)
        before = set(os.listdir(work))
        r = subprocess.run([swinrun, "segment", *inputs, out, "--model", model, "-q"], capture_output=True, text=True)
        left = set(os.listdir(work)) - before
        good = r.returncode == 2 and words in r.stderr and not left and len(r.stderr.strip().splitlines()) == 1
        print(f"refused: {name:28s} exit {r.returncode}, {r.stderr.strip()!r}{'' if not left else f', left {left}'} "
              f"{'ok' if good else 'FAIL'}")
        ok &= good
    return ok


def main():
    mode = sys.argv[1]
    fake = mode == "fake"
    if fake:
        probe, work = sys.argv[2], sys.argv[3]
        predict, roi = make_fake(3, 4), (32, 32, 32)
    else:
        swinrun, model, work = sys.argv[2], sys.argv[3], sys.argv[4]
        predict, roi, ci = predictor_from_onnx(model, 2)
        if ci != 4:
            sys.exit(f"test_channels.py: {model} takes {ci} input channels; this test needs 4")
    ok = True
    for name, (inputs, opts, keys, kw) in cases(os.path.join(work, "in")).items():
        out = os.path.join(work, f"{name}.nii.gz")
        probs = os.path.join(work, f"{name}_prob.nii.gz") if name.startswith("4d_ras") else None
        report = os.path.join(work, f"{name}.json")
        if fake:
            cmd = [probe, "segment", ",".join(inputs), out, "in_channels=4", "channels=3", *keys]
            cmd += [f"probs={probs}"] if probs else []
        else:
            cmd = [swinrun, "segment", *inputs, out, "--model", model, "-q", "--json", report, *opts]
            cmd += ["--probabilities", probs] if probs else []
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            print(f"{name}: swinrun failed: {r.stderr.strip()}")
            ok = False
            continue
        det = {"want_probabilities": bool(probs)}
        image = inputs[0] if len(inputs) == 1 else inputs
        prep_ref = os.path.join(work, f"{name}_prep_ref.npy")
        if kw.pop("linear", False):
            ref, _, _ = reference_linear(image, predict, roi, **kw)
        else:
            ref, _ = reference(image, predict, roi, details=det, prep_out=prep_ref, **kw)
        good, msg = compare(name, out, ref, fake, probs, det.get("probabilities"))
        if not fake and kw.get("masks"):  # the report's statistics: one per channel, as label c + 1
            got = np.asarray(nib.load(out).dataobj)
            stats = {s["label"]: s["voxels"] for s in json.load(open(report))["volumes"][0]["statistics"]}
            want = {c + 1: int(got[..., c].sum()) for c in range(got.shape[-1]) if got[..., c].any()}
            good &= stats == want
            msg += f"; statistics per channel {'as' if stats == want else 'NOT as'} the masks ({stats})"
        if fake and len(inputs) == 1:  # the preprocessed channels alone, vs MONAI's
            pn = os.path.join(work, f"{name}_prep.npy")
            r = subprocess.run([probe, "prep", inputs[0], pn, os.path.join(work, "grid.txt"), *keys],
                               capture_output=True, text=True)
            a = np.load(pn) if r.returncode == 0 else np.zeros(1)
            b = np.load(prep_ref)
            # z-scores: MONAI's float32 mean and deviation against swinrun's double ones
            perr = float(np.max(np.abs(a - b))) if a.shape == b.shape else float("nan")
            good &= bool(perr <= 1e-5)
            msg += f"; preprocessed {a.shape} max |diff| {perr:.1e}"
        print(f"{msg} {'ok' if good else 'FAIL'}")
        ok &= good
    if not fake:
        ok &= refusals(swinrun, model, work)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
