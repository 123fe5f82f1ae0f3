"""Test volumes for the pipeline tests: synthetic CT-like volumes with awkward geometry
and real NIfTI files that nibabel ships."""
import os

import nibabel as nib
import numpy as np


def _smooth_hu(shape, rng):
    """Blobs of tissue-like HU values with noise: labels with structure, not salt and pepper."""
    g = np.meshgrid(*[np.linspace(-1, 1, n) for n in shape], indexing="ij")
    v = np.full(shape, -800.0)
    v[(g[0] ** 2 + g[1] ** 2 / 0.8 + g[2] ** 2 / 1.2) < 0.8] = 30.0
    for _ in range(6):
        c = rng.uniform(-0.5, 0.5, 3)
        r = rng.uniform(0.15, 0.35)
        v[((g[0] - c[0]) ** 2 + (g[1] - c[1]) ** 2 + (g[2] - c[2]) ** 2) < r * r] = rng.uniform(-100, 400)
    return v + rng.normal(0, 20, shape)


def _save(path, data, affine, nifti2=False, dtype=np.int16, slope=None, inter=None):
    cls = nib.Nifti2Image if nifti2 else nib.Nifti1Image
    img = cls(data.astype(dtype), affine)
    img.set_qform(affine, code=1)
    img.set_sform(affine, code=1)
    if slope is not None:
        img.header.set_slope_inter(slope, inter)
    nib.save(img, path)
    return path


def synthetic_cases(work):
    """name -> path: every geometry the issue asks about."""
    rng = np.random.default_rng(7)
    os.makedirs(work, exist_ok=True)
    out = {}
    # LPS like a DICOM export, anisotropic 0.9 x 0.9 x 2.5 mm, odd sizes
    a = np.diag([-0.9, -0.9, 2.5, 1.0]); a[:3, 3] = [40, 30, -50]
    out["lps_aniso"] = _save(os.path.join(work, "lps_aniso.nii.gz"), _smooth_hu((71, 63, 29), rng), a)
    # smaller than the 32^3 cube after resampling on two axes (padding)
    a = np.diag([1.5, 1.5, 2.0, 1.0])
    out["small"] = _save(os.path.join(work, "small.nii"), _smooth_hu((20, 27, 45), rng), a)
    # permuted axes (i -> S, j -> R, k -> A, one flipped), odd sizes, NIfTI-2, float32
    a = np.zeros((4, 4)); a[2, 0] = -2.2; a[0, 1] = 1.3; a[1, 2] = 1.7; a[3, 3] = 1; a[:3, 3] = [-20, 5, 60]
    out["permuted_nifti2"] = _save(os.path.join(work, "permuted.nii.gz"), _smooth_hu((23, 41, 37), rng), a,
                                   nifti2=True, dtype=np.float32)
    # oblique: 12 degrees about z and 5 about x, uint16 with a slope/intercept (CT-style storage)
    cz, sz = np.cos(np.radians(12)), np.sin(np.radians(12))
    cx, sx = np.cos(np.radians(5)), np.sin(np.radians(5))
    rot = np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]]) @ np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
    a = np.eye(4); a[:3, :3] = rot @ np.diag([1.1, 1.1, 3.0]); a[:3, 3] = [10, -20, 30]
    hu = _smooth_hu((45, 39, 17), rng)
    out["oblique_scaled"] = _save(os.path.join(work, "oblique.nii.gz"), np.rint((hu + 1024) / 0.5), a,
                                  dtype=np.uint16, slope=0.5, inter=-1024.0)
    # a gantry-tilted stack, LPS, as a tilted DICOM series is read: every slice steps 20
    # degrees off the normal along the column direction (a sheared affine; Spacing resamples
    # it onto an unsheared grid)
    a = np.diag([-0.8, -0.8, 2.5, 1.0]); a[1, 2] = -2.5 * np.tan(np.radians(20)); a[:3, 3] = [25, 15, -40]
    out["sheared_tilt"] = _save(os.path.join(work, "sheared_tilt.nii.gz"), _smooth_hu((53, 47, 21), rng), a)
    return out


def resolution_cases(work):
    """name -> path: a CT finer than the default model spacing (1.5 x 1.5 x 2 mm) on every axis,
    LPS like a DICOM export, and one coarser on every axis, oblique: both ways of the way back;
    and a long LPS one whose slices run along the cubes' slab axis, so that its label planes
    are written while the cubes run (pipeline/label_writer.h)."""
    rng = np.random.default_rng(11)
    os.makedirs(work, exist_ok=True)
    out = {}
    a = np.diag([-0.7, -0.7, 1.0, 1.0]); a[:3, 3] = [35, 30, -25]
    out["ct_fine_lps"] = _save(os.path.join(work, "ct_fine_lps.nii.gz"), _smooth_hu((97, 86, 51), rng), a)
    c, s = np.cos(np.radians(9)), np.sin(np.radians(9))
    a = np.eye(4); a[:3, :3] = np.array([[1, 0, 0], [0, c, -s], [0, s, c]]) @ np.diag([3.1, 2.9, 4.0])
    a[:3, 3] = [-30, 20, 10]
    out["ct_coarse_oblique"] = _save(os.path.join(work, "ct_coarse_oblique.nii.gz"), _smooth_hu((23, 21, 13), rng), a)
    a = np.diag([-0.8, -0.8, 1.25, 1.0]); a[:3, 3] = [20, 25, -60]
    out["ct_long_lps"] = _save(os.path.join(work, "ct_long_lps.nii.gz"), _smooth_hu((48, 44, 80), rng), a)
    return out


def real_cases():
    """Real NIfTI files nibabel ships (MRI, not CT: the default HU window saturates much of
    them, the computation is the same)."""
    d = os.path.join(os.path.dirname(nib.__file__), "tests", "data")
    return {"nibabel_anatomical": os.path.join(d, "anatomical.nii"),           # LAS, big-endian int16
            "nibabel_reoriented_anat": os.path.join(d, "reoriented_anat_moved.nii")}  # big-endian float32
