#!/usr/bin/env python3
"""A synthetic multi-sequence brain-MRI-like volume for models of several input channels
(BraTS-style: T1, T1ce, T2, FLAIR): an ellipsoid head of noisy tissue, each sequence at its
own intensity level (hundreds to thousands, as scanners store them), a brighter lesion, and a
background of exact zeros (what NormalizeIntensity(nonzero=True) leaves out).

    tools/export/make_mri_phantom.py out.nii.gz [--shape NX NY NZ] [--spacing DX DY DZ]
        [--channels C] [--seed S] [--split]

out.nii.gz: one 4D float32 NIfTI (x, y, z, channel), RAS, as the Medical Segmentation
Decathlon ships its brain tumours; --split: one 3D file per channel instead, out_t1.nii.gz,
out_t1ce.nii.gz, ... (as BraTS ships them)."""
import argparse
import os

import numpy as np

SEQUENCES = ("t1", "t1ce", "t2", "flair")


def phantom(shape, channels=4, seed=0):
    """(nx, ny, nz, channels) float32."""
    rng = np.random.default_rng(seed)
    i, j, k = np.meshgrid(*[np.arange(s, dtype=np.float64) for s in shape], indexing="ij")
    c = [s / 2 for s in shape]
    inside = sum(((a - m) / (0.42 * s)) ** 2 for a, m, s in zip((i, j, k), c, shape)) < 1
    lesion = (i - 0.6 * shape[0]) ** 2 + (j - 0.45 * shape[1]) ** 2 + (k - 0.5 * shape[2]) ** 2 < (0.12 * min(shape)) ** 2
    x = np.zeros(tuple(shape) + (channels,), np.float32)
    for ch in range(channels):
        v = rng.normal(400 + 250 * ch, 60 + 20 * ch, shape) + 40 * np.sin(0.2 * i + 0.1 * ch * j)
        v[lesion] += 500 + 300 * ch
        x[..., ch] = np.where(inside, v, 0)
    return x


def channel_names(out, channels):
    stem = out[:-7] if out.endswith(".nii.gz") else out[:-4]
    return [f"{stem}_{SEQUENCES[c] if c < len(SEQUENCES) else c}.nii.gz" for c in range(channels)]


def main():
    import nibabel as nib

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--shape", type=int, nargs=3, default=[96, 112, 80])
    ap.add_argument("--spacing", type=float, nargs=3, default=[1.0, 1.0, 1.0])
    ap.add_argument("--channels", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--split", action="store_true")
    a = ap.parse_args()
    x = phantom(a.shape, a.channels, a.seed)
    aff = np.diag(a.spacing + [1.0])
    if a.split:
        for ch, name in enumerate(channel_names(a.out, a.channels)):
            nib.save(nib.Nifti1Image(x[..., ch], aff), name)
    else:
        nib.save(nib.Nifti1Image(x, aff), a.out)
    print(f"{a.out}: {a.channels} channels, {a.shape[0]} x {a.shape[1]} x {a.shape[2]}"
          f"{' (one file each)' if a.split else ''}")


if __name__ == "__main__":
    main()
