#!/usr/bin/env python3
"""A synthetic abdominal-CT-like volume for trying swinrun: int16 NIfTI in Hounsfield units.

Air outside, a body ellipse (fat rim, soft tissue), organ-like blobs (liver, spleen, two
kidneys, aorta), a spine with vertebral bodies, ribs, bowel gas pockets, mild noise.
Stored like a scanner export: LPS orientation (i runs to the patient's left, j to
posterior, k superior), anisotropic spacing, qform and sform both set (code 1, scanner),
int16 with scl_slope 1 / scl_inter 0.

    tools/export/make_ct_phantom.py out.nii.gz [--shape NX NY NZ] [--spacing DX DY DZ] [--seed S]

The default (240 x 240 x 96 at 1.2 x 1.2 x 2.5 mm: a 288 mm field of view, 240 mm long)
resamples to 192 x 192 x 120 at the BTCV spacing: 18 windows of 96^3 at overlap 0.5, a
quick first run. A full-size scan: --shape 512 512 300 --spacing 0.78 0.78 2.5.
"""
import argparse
import sys

import numpy as np


def phantom(shape, spacing, seed=0):
    rng = np.random.default_rng(seed)
    nx, ny, nz = shape
    # world-ish millimetre coordinates centred on the volume: x to the patient's left
    # (LPS i axis), y posterior, z superior
    x = (np.arange(nx) - (nx - 1) / 2) * spacing[0]
    y = (np.arange(ny) - (ny - 1) / 2) * spacing[1]
    z = (np.arange(nz) - (nz - 1) / 2) * spacing[2]
    X, Y = np.meshgrid(x, y, indexing="ij")  # in-plane grid (nx, ny)
    half_w = min(170.0, 0.45 * nx * spacing[0])
    half_h = min(120.0, 0.40 * ny * spacing[1])
    out = np.empty(shape, np.int16)
    zmax = max(abs(z[0]), abs(z[-1]), 1.0)
    for k, zk in enumerate(z):
        t = zk / zmax  # -1 (inferior) .. 1 (superior)
        sl = np.full((nx, ny), -1000.0)
        body = (X / half_w) ** 2 + (Y / half_h) ** 2
        sl[body <= 1.0] = -100.0  # subcutaneous fat
        sl[body <= 0.85] = 40.0  # muscle / soft tissue
        def blob(cx, cy, rx, ry, hu, zc=0.0, rz=2.0):
            w = 1 - ((zk / zmax - zc) / rz) ** 2
            if w <= 0:
                return
            m = ((X - cx * half_w) / (rx * half_w * np.sqrt(w))) ** 2 + \
                ((Y - cy * half_h) / (ry * half_h * np.sqrt(w))) ** 2
            sl[m <= 1.0] = hu
        # patient's right is -x in LPS index terms here (x grows to the left)
        blob(-0.45, -0.15, 0.38, 0.45, 60.0, zc=0.35, rz=0.6)   # liver
        blob(0.55, 0.15, 0.18, 0.25, 50.0, zc=0.4, rz=0.35)    # spleen
        blob(-0.35, 0.45, 0.10, 0.14, 150.0, zc=-0.05, rz=0.3)  # right kidney (contrast)
        blob(0.35, 0.45, 0.10, 0.14, 150.0, zc=0.0, rz=0.3)    # left kidney
        blob(0.05, 0.40, 0.05, 0.07, 200.0)                     # aorta
        blob(-0.08, 0.38, 0.06, 0.08, 120.0)                    # vena cava
        blob(0.1, -0.35, 0.12, 0.08, -900.0, zc=-0.3, rz=0.25)  # bowel gas
        # spine: vertebral bodies with discs every ~30 mm
        vert = (np.cos(zk / 30.0 * 2 * np.pi) > -0.6)
        spine = ((X / (0.09 * half_w)) ** 2 + ((Y - 0.62 * half_h) / (0.13 * half_h)) ** 2) <= 1.0
        sl[spine] = 700.0 if vert else 80.0
        cortex = ((X / (0.11 * half_w)) ** 2 + ((Y - 0.62 * half_h) / (0.15 * half_h)) ** 2 <= 1.0) & ~spine
        sl[cortex] = 1000.0
        # ribs: a ring just inside the body contour in the upper half
        if t > 0.0:
            ring = (body > 0.70) & (body < 0.76) & (np.cos(np.arctan2(Y, X) * 9) > 0.3)
            sl[ring] = 800.0
        sl += rng.normal(0.0, 12.0, size=sl.shape)
        out[:, :, k] = np.clip(np.rint(sl), -1024, 3071).astype(np.int16)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="output .nii or .nii.gz")
    ap.add_argument("--shape", type=int, nargs=3, default=[240, 240, 96], metavar=("NX", "NY", "NZ"))
    ap.add_argument("--spacing", type=float, nargs=3, default=[1.2, 1.2, 2.5], metavar=("DX", "DY", "DZ"))
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    import nibabel as nib

    data = phantom(a.shape, a.spacing, a.seed)
    nx, ny, nz = a.shape
    dx, dy, dz = a.spacing
    # LPS storage: +i -> patient's left (-R), +j -> posterior (-A), +k -> superior
    aff = np.diag([-dx, -dy, dz, 1.0])
    aff[:3, 3] = [dx * (nx - 1) / 2, dy * (ny - 1) / 2, -dz * (nz - 1) / 2]
    img = nib.Nifti1Image(data, aff)
    img.set_qform(aff, code=1)
    img.set_sform(aff, code=1)
    img.header.set_xyzt_units("mm", "sec")
    img.header.set_slope_inter(1.0, 0.0)
    img.header["descrip"] = b"swinrun synthetic CT phantom (HU)"
    nib.save(img, a.out)
    print(f"{a.out}: {nx} x {ny} x {nz} int16 HU, spacing {dx} x {dy} x {dz} mm, LPS", file=sys.stderr)


if __name__ == "__main__":
    main()
