#!/usr/bin/env python3
"""The report's organ statistics against numpy: per label other than 0, the voxel count, the
volume in mL (count x |det| of the affine's 3x3 part / 1000) and the mean and population
standard deviation of the input's intensities there, computed from nibabel's reading of the
CT (scaled, as float32) and of the label map swinrun wrote. The NIfTI format gives the
statistics their intensities from memory: the file's own values when narrower than float32
(int16, uint8, uint16 with a slope and intercept, big-endian int16), else the float32 copy
(float32, float64); each datatype is run once, .nii and .nii.gz.

    test_statistics.py PROBE WORKDIR"""
import os
import subprocess
import sys

import nibabel as nib
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cases import _smooth_hu  # noqa: E402

failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)


def reference(ct_path, labels_path):
    img = nib.load(ct_path)
    hu = img.get_fdata(dtype=np.float64).astype(np.float32).astype(np.float64)  # the reader's float32 values
    lab = np.asarray(nib.load(labels_path).dataobj)
    mm3 = abs(np.linalg.det(img.affine[:3, :3]))
    out = {}
    for l in np.unique(lab):
        if l == 0:
            continue
        v = hu[lab == l]
        out[int(l)] = (v.size, v.size * mm3 / 1000.0, v.mean(), v.std())
    return out


def main():
    probe, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(17)
    a = np.diag([-0.9, -0.8, 2.5, 1.0])
    a[:3, 3] = [30, 20, -40]
    hu = _smooth_hu((57, 49, 23), rng)
    kinds = [  # name, on-disk dtype, stored values, slope, intercept, suffix
        ("int16", np.int16, np.rint(hu), None, None, ".nii.gz"),
        ("int16_be", np.dtype(">i2"), np.rint(hu), None, None, ".nii"),
        ("uint8", np.uint8, np.clip(np.rint((hu + 1000) / 8), 0, 255), 8.0, -1000.0, ".nii.gz"),
        ("uint16_scaled", np.uint16, np.rint((hu + 1024) / 0.5), 0.5, -1024.0, ".nii.gz"),
        ("float32", np.float32, hu, None, None, ".nii"),
        ("float64", np.float64, hu * 1.0000001, None, None, ".nii.gz"),
    ]
    for name, dt, values, slope, inter, suffix in kinds:
        ct = os.path.join(work, name + suffix)
        img = nib.Nifti1Image(values.astype(dt), a, dtype=dt)
        img.set_sform(a, code=1)
        if slope is not None:
            img.header.set_slope_inter(slope, inter)
        nib.save(img, ct)
        out = os.path.join(work, name + "_labels.nii.gz")
        r = subprocess.run([probe, "segment", ct, out, "channels=4", "roi=32,32,32"], capture_output=True, text=True)
        if r.returncode:
            check(False, f"{name}: probe segment: {r.stderr.strip()}")
            continue
        got = {}
        for line in r.stdout.splitlines():
            f = line.split()
            if f[0] == "stat":
                got[int(f[1])] = (int(f[2]), float(f[3]), float(f[4]), float(f[5]))
        ref = reference(ct, out)
        check(sorted(got) == sorted(ref) and len(ref) >= 2, f"{name}: labels {sorted(got)} (numpy: {sorted(ref)})")
        for l in sorted(set(got) & set(ref)):
            g, e = got[l], ref[l]
            ok = (g[0] == e[0] and abs(g[1] - e[1]) <= 1e-9 * e[1] and abs(g[2] - e[2]) <= 1e-9 * max(1.0, abs(e[2]))
                  and abs(g[3] - e[3]) <= 1e-6 * max(1.0, e[3]))
            check(ok, f"{name} label {l}: {g[0]} voxels {g[1]:.4f} mL HU {g[2]:.6f} +- {g[3]:.6f} "
                      f"(numpy {e[0]} {e[1]:.4f} {e[2]:.6f} +- {e[3]:.6f})")
    if failures:
        print(f"{len(failures)} failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
