#!/usr/bin/env python3
"""NIfTI round trips against nibabel: swinrun reads every datatype (both byte orders,
NIfTI-1 and NIfTI-2, .nii and .nii.gz, scl_slope/scl_inter, sform/qform priorities) to the
same values and affine as nibabel, and writes outputs (uint8/uint16 labels, 4D float32)
whose header keeps the input's geometry fields and codes; a .hdr/.img pair read through either
file; ANALYZE 7.5 (no NIfTI magic) refused.

    test_nifti.py PROBE WORKDIR"""
import itertools
import os
import subprocess
import sys

import nibabel as nib
import numpy as np

# the standard gives quatern_* meaning only when qform_code > 0, srow_* when sform_code > 0
QFORM = ["quatern_b", "quatern_c", "quatern_d", "qoffset_x", "qoffset_y", "qoffset_z"]
SFORM = ["srow_x", "srow_y", "srow_z"]


def make(path, dtype, nifti2, affine, slope, inter, codes, big_endian, rng):
    shape = (7, 6, 5)
    info = np.iinfo(dtype) if np.issubdtype(dtype, np.integer) else None
    if info is not None:
        lo, hi = max(info.min, -3000), min(info.max, 3000)
        data = rng.integers(lo, hi + 1, size=shape).astype(dtype)
    else:
        data = rng.normal(0, 500, size=shape).astype(dtype)
    if big_endian:
        data = data.astype(np.dtype(dtype).newbyteorder(">"))
    cls = nib.Nifti2Image if nifti2 else nib.Nifti1Image
    img = cls(data, affine, dtype=data.dtype)
    qaff = affine.copy()
    qaff[:3, 3] += [1.5, -2.5, 3.0]  # a different qform, to see which one is used
    img.set_qform(qaff, code=codes[0])
    img.set_sform(affine, code=codes[1])
    img.header.set_xyzt_units("mm", "sec")
    if slope is not None:
        img.header.set_slope_inter(slope, inter)
    nib.save(img, path)
    return path


def expected_affine(img):
    h = img.header
    if h["sform_code"] > 0:
        return h.get_sform()
    if h["qform_code"] > 0:
        return h.get_qform()
    return np.diag([*h.get_zooms()[:3], 1.0])  # NIfTI method 1 (nibabel centres and flips instead)


def main():
    probe, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(3)
    rot = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    affine = np.eye(4)
    affine[:3, :3] = rot @ np.diag([0.8, 0.9, 2.5])
    affine[:3, 3] = [-10.0, 20.0, 30.0]
    dtypes = [np.uint8, np.int8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.float32, np.float64]
    ok = True
    n = 0
    for dt, nifti2, gz, (slope, inter), codes, be in itertools.product(
            dtypes, [False, True], [False, True], [(None, None), (2.5, -1024.0)], [(1, 1), (2, 0), (0, 0)],
            [False, True]):
        if slope is not None and not np.issubdtype(dt, np.integer):
            continue
        if (be and gz) or (codes != (1, 1) and (gz or be or slope is not None)):
            continue  # keep the product small: each property is covered on its own
        name = f"{np.dtype(dt).name}_{'n2' if nifti2 else 'n1'}{'_gz' if gz else ''}{'_scaled' if slope else ''}" \
               f"_q{codes[0]}s{codes[1]}{'_be' if be else ''}"
        path = make(os.path.join(work, name + (".nii.gz" if gz else ".nii")), dt, nifti2, affine, slope, inter, codes,
                    be, rng)
        img = nib.load(path)
        ref = np.asarray(img.get_fdata(dtype=np.float64))
        r = subprocess.run([probe, "read", path, os.path.join(work, "d.npy"), os.path.join(work, "a.txt")],
                           capture_output=True, text=True)
        if r.returncode:
            print(f"{name}: read failed: {r.stderr.strip()}")
            ok = False
            continue
        got = np.load(os.path.join(work, "d.npy")).transpose(2, 1, 0)  # (nz, ny, nx) -> (nx, ny, nz)
        aff = np.loadtxt(os.path.join(work, "a.txt"))
        checks = {"data": got.shape == ref.shape and np.allclose(got, ref.astype(np.float32), rtol=1e-6, atol=0),
                  "affine": np.allclose(aff, expected_affine(img), atol=1e-5)}
        for kind, vols in [("u8", 1), ("u16", 1), ("f32", 3)]:
            out = os.path.join(work, f"out_{kind}" + (".nii.gz" if gz else ".nii"))
            r = subprocess.run([probe, "write", path, out, kind, str(vols)], capture_output=True, text=True)
            if r.returncode:
                checks[f"write {kind}"] = False
                print(f"{name}: write {kind} failed: {r.stderr.strip()}")
                continue
            o = nib.load(out)
            h, hi = o.header, img.header
            want = {"u8": np.uint8, "u16": np.uint16, "f32": np.float32}[kind]
            fields = ["qform_code", "sform_code", "xyzt_units"] + (QFORM if hi["qform_code"] > 0 else []) + \
                (SFORM if hi["sform_code"] > 0 else [])
            geom = all(np.allclose(np.asarray(h[f]), np.asarray(hi[f]), atol=1e-6) for f in fields)
            geom &= np.allclose(h["pixdim"][1:4], hi["pixdim"][1:4]) and h["pixdim"][0] == hi["pixdim"][0]
            kind_ok = type(o) is type(img) and h.get_data_dtype() == want and np.allclose(o.affine, img.affine)
            slope_ok = tuple(h.get_slope_inter()) in ((1.0, 0.0), (None, None))
            shape_ok = o.shape == (img.shape if vols == 1 else img.shape + (vols,))
            data = np.asarray(o.dataobj)
            if vols == 1:
                cast = ref.astype(np.float32).astype(want)
                data_ok = np.array_equal(data, cast)
            else:
                data_ok = all(np.allclose(data[..., v], ref.astype(np.float32) + v, rtol=1e-6) for v in range(vols))
            checks[f"write {kind}"] = bool(geom and kind_ok and slope_ok and shape_ok and data_ok)
        good = all(checks.values())
        print(f"{name:34s} {'ok' if good else 'FAIL ' + str([k for k, v in checks.items() if not v])}")
        ok &= good
        n += 1
    ok &= check_pairs(probe, work, affine, rng)
    print(f"{n} files")
    sys.exit(0 if ok else 1)


def check_pairs(probe, work, affine, rng):
    """A NIfTI-1 .hdr/.img pair (plain and gzipped) read through either file as nibabel reads
    it, its label map written as one .nii.gz on its geometry; an ANALYZE 7.5 pair refused."""
    ok = True
    data = rng.integers(-1000, 1000, size=(7, 6, 5)).astype(np.int16)
    for name, ext in (("pair", ".hdr"), ("pair_gz", ".img.gz")):
        img = nib.Nifti1Pair(data, affine)
        img.set_qform(affine, code=1)
        img.set_sform(affine, code=1)
        path = os.path.join(work, name + ext)
        nib.save(img, path)
        img = nib.load(path)
        for given in (path, path.replace(".hdr", ".img") if ext == ".hdr" else path.replace(".img", ".hdr")):
            r = subprocess.run([probe, "read", given, os.path.join(work, "d.npy"), os.path.join(work, "a.txt")],
                               capture_output=True, text=True)
            got = np.load(os.path.join(work, "d.npy")).transpose(2, 1, 0) if not r.returncode else None
            good = got is not None and np.array_equal(got, np.asarray(img.dataobj).astype(np.float32)) and \
                np.allclose(np.loadtxt(os.path.join(work, "a.txt")), img.affine, atol=1e-5)
            out = os.path.join(work, name + "_labels.nii.gz")
            w = subprocess.run([probe, "write", given, out, "u8", "1"], capture_output=True, text=True)
            o = nib.load(out) if not w.returncode else None
            good &= o is not None and type(o) is nib.Nifti1Image and np.allclose(o.affine, img.affine)
            print(f"{os.path.basename(given):34s} {'ok' if good else 'FAIL ' + r.stderr.strip() + w.stderr.strip()}")
            ok &= bool(good)
    path = os.path.join(work, "analyze.hdr")
    nib.save(nib.AnalyzeImage(data, affine), path)
    r = subprocess.run([probe, "read", path, os.path.join(work, "d.npy"), os.path.join(work, "a.txt")],
                       capture_output=True, text=True)
    good = r.returncode != 0 and "ANALYZE 7.5" in r.stderr and "left" in r.stderr
    print(f"{'analyze.hdr refused':34s} {'ok' if good else 'FAIL ' + r.stderr.strip()}")
    return ok and good


if __name__ == "__main__":
    main()
