#!/usr/bin/env python3
"""The linear way back streamed (pipeline/invert_linear.c: a few planes of probabilities held)
against the same way back computed from the probabilities held whole (swin_plane_trilinear, the
--probabilities output): the labels must be the argmax of those probabilities to the bit, on
awkward shapes: the slab axis along each of the three grid axes, permuted and flipped input
axes, a volume smaller than the cube, one voxel thick inputs, uint16 labels. File form (probe
segment) and memory form (probe segment_mem), with and without probabilities and a preview.

    test_invert.py PROBE WORKDIR"""
import os
import subprocess
import sys

import nibabel as nib
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from cases import _save, _smooth_hu  # noqa: E402


def shapes(work):
    """name -> (path, roi, slab axis or None, thin axis or None): each roi chosen so that the
    slab axis is the one named; thin: the memory form only, on the first plane across that axis
    (a file is at least 2 voxels thick)."""
    rng = np.random.default_rng(5)
    os.makedirs(work, exist_ok=True)
    out = {}
    a = np.diag([-0.9, -0.9, 2.5, 1.0]); a[:3, 3] = [40, 30, -50]  # LPS, finer in-plane, coarser in z
    lps = _save(os.path.join(work, "lps.nii.gz"), _smooth_hu((61, 53, 23), rng), a)
    a = np.zeros((4, 4)); a[2, 0] = -2.2; a[0, 1] = 1.3; a[1, 2] = 1.7; a[3, 3] = 1  # i -> -S, j -> R, k -> A
    perm = _save(os.path.join(work, "perm.nii.gz"), _smooth_hu((19, 37, 31), rng), a)
    for ax, roi in enumerate(((8, 32, 32), (32, 8, 32), (32, 32, 8))):
        out[f"lps_slab{ax}"] = (lps, roi, ax, None)
        out[f"permuted_slab{ax}"] = (perm, roi, ax, None)
    a = np.diag([1.5, 1.5, 2.0, 1.0])
    out["smaller_than_cube"] = (_save(os.path.join(work, "small.nii.gz"), _smooth_hu((12, 10, 9), rng), a),
                                (32, 32, 32), None, None)
    a = np.diag([0.8, -0.8, 3.0, 1.0])
    slab = _save(os.path.join(work, "slab.nii.gz"), _smooth_hu((40, 35, 2), rng), a)
    out["one_voxel_z"] = (slab, (16, 16, 16), None, 2)
    a = np.zeros((4, 4)); a[1, 0] = 3.0; a[0, 1] = -1.1; a[2, 2] = 1.3; a[3, 3] = 1  # i -> A, j -> L
    side = _save(os.path.join(work, "side.nii.gz"), _smooth_hu((2, 30, 25), rng), a)
    out["one_voxel_x"] = (side, (16, 16, 16), None, 0)
    a = np.diag([2.0, 2.0, 3.0, 1.0])  # 3 mm slices onto 2 mm: centres halfway between planes
    out["halfway_3mm"] = (_save(os.path.join(work, "halfway.nii.gz"), _smooth_hu((21, 17, 15), rng), a),
                          (16, 16, 16), None, None)
    return out


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()}")
    return r.stdout


def slab_axis(grid, roi):
    """pipeline/sliding.c's swin_sliding_axis: the first axis with the largest size / roi."""
    r = [g / k for g, k in zip(grid, roi)]
    return r.index(max(r))


def main():
    probe, work = sys.argv[1], sys.argv[2]
    ok = True
    for name, (path, roi, want_ax, thin) in shapes(os.path.join(work, "in")).items():
        for channels in (3, 300) if name == "smaller_than_cube" else (4,):
            base = os.path.join(work, f"{name}_c{channels}")
            kv = [f"roi={roi[0]},{roi[1]},{roi[2]}", f"channels={channels}", "invert=linear"]
            if thin is not None:  # the memory form alone
                kv.append(f"thin={thin}")
                run([probe, "segment_mem", path, base + "_mem.npy", base + "_mem_p.npy", *kv])
                run([probe, "segment_mem", path, base + "_mem_alone.npy", *kv])
                mem, mem_p = np.load(base + "_mem.npy"), np.load(base + "_mem_p.npy")
                good = (mem.shape[2 - thin] == 1 and np.array_equal(mem, np.argmax(mem_p, axis=0))
                        and np.array_equal(np.load(base + "_mem_alone.npy"), mem))
                print(f"{name:18s} c={channels:<3d} input {mem.shape[::-1]} (memory form): "
                      f"{len(np.unique(mem))} labels, {'ok' if good else 'FAIL'}")
                ok &= good
                continue
            out = run([probe, "segment", path, base + ".nii.gz", *kv, f"probs={base}_p.nii.gz",
                       f"preview={base}.png"]).split()
            grid = [int(x) for x in out[3:6]]
            ax = slab_axis(grid, roi)
            run([probe, "segment", path, base + "_alone.nii.gz", *kv])
            run([probe, "segment_mem", path, base + "_mem.npy", base + "_mem_p.npy", *kv])
            run([probe, "segment_mem", path, base + "_mem_alone.npy", *kv])
            lab = np.asarray(nib.load(base + ".nii.gz").dataobj)
            probs = np.asarray(nib.load(base + "_p.nii.gz").dataobj)
            full = np.argmax(probs, axis=-1)  # the first maximum, as torch.argmax
            alone = np.asarray(nib.load(base + "_alone.nii.gz").dataobj)
            mem = np.load(base + "_mem.npy").T  # (nz, ny, nx) -> (nx, ny, nz)
            mem_p = np.moveaxis(np.load(base + "_mem_p.npy"), 0, -1).transpose(2, 1, 0, 3)
            mem_alone = np.load(base + "_mem_alone.npy").T
            dtype_ok = lab.dtype == (np.uint8 if channels <= 256 else np.uint16)
            checks = {"file = argmax(probabilities)": np.array_equal(lab, full),
                      "file without probabilities": np.array_equal(alone, lab),
                      "memory = argmax(its probabilities)": np.array_equal(mem, np.argmax(mem_p, axis=-1)),
                      "memory probabilities = file's": np.array_equal(mem_p, probs),
                      "memory = file": np.array_equal(mem, lab),
                      "memory without probabilities": np.array_equal(mem_alone, lab),
                      "slab axis": want_ax is None or ax == want_ax, "label datatype": dtype_ok,
                      "preview written": os.path.getsize(base + ".png") > 0}
            bad = [k for k, v in checks.items() if not v]
            near = np.sort(probs, axis=-1)
            gap = near[..., -1] - near[..., -2] if channels > 1 else np.ones(lab.shape)
            print(f"{name:18s} c={channels:<3d} input {lab.shape} grid {tuple(grid)} roi {roi} slab axis {ax}: "
                  f"{len(np.unique(lab))} labels, {int(np.sum(gap == 0))} exact ties, "
                  f"{'ok' if not bad else 'FAIL: ' + ', '.join(bad)}")
            ok &= not bad
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
