#!/usr/bin/env python3
"""CT series for the DICOM tests, written with pydicom from the project's CT phantom
(tools/export/make_ct_phantom.py), each with the test's own NIfTI copy of the same voxels.

Good series (one folder each, plus NAME.nii.gz: the same voxels in NIfTI-2 with the files' affine):
  axial     shuffled file names, reversed InstanceNumber, non-square pixels (rows 0.9 mm
            apart, columns 0.7 mm), stored unsigned with intercept -1024
  oblique   orientation rotated 23.7 degrees about an oblique axis, slope 0.5
  feetfirst PatientPosition FFS, row direction -x: slices run against row x column
  rle       RLE Lossless (pydicom's encoder)
  jpegll    JPEG Lossless SV1 (DCMTK's dcmcjpeg)
  jpegls    JPEG-LS lossless (DCMTK's dcmcjpls)
  tilted    gantry tilt of 20 degrees: each slice 2.5 mm along the normal and 2.5 tan 20 mm
            along the column direction from the one before, GantryDetectorTilt 20
  missing   slices 6, 14 and 15 left out (gaps of one and two missing slices); its NIfTI copy
            is the whole grid, the missing planes interpolated linearly between the slices
            around them (float32)
  tilted_missing  tilted as tilted, slices 6 and 14 left out: a sheared grid with filled planes
  two_spacings  slices 1, 3, ..., 15 left out: 5 mm apart up to slice 16, then 2.5 mm; more
            gaps of 5 mm than of 2.5 mm, read on the 2.5 mm grid all the same
Bad series (folders bad_*): several series, mixed geometry, duplicate positions, a gap of
four missing slices, a tilted stack with one slice off its line, MPEG-2 (a syntax swinrun does
not decode), an MR image among CT.

    make_series.py OUTDIR [--shape NX NY NZ]"""
import argparse
import json
import os
import shutil
import subprocess
import sys

import nibabel as nib
import numpy as np
import pydicom
from pydicom.dataset import Dataset, FileMetaDataset
from pydicom.uid import CTImageStorage, ExplicitVRLittleEndian, RLELossless, generate_uid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tools", "export"))
from make_ct_phantom import phantom  # noqa: E402


def rotation(axis, deg):
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    t = np.radians(deg)
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + np.sin(t) * K + (1 - np.cos(t)) * K @ K


class Geometry:
    """Slice k of the volume at origin + k * step * (slice_dir + tan(tilt) * col_dir) (LPS);
    pixel (row j, column i) at + i * col_spacing * row_dir + j * row_spacing * col_dir."""

    def __init__(self, row_dir, col_dir, row_spacing, col_spacing, step, slice_sign=1, origin=(-30.0, -20.0, 50.0),
                 tilt=0.0):
        self.r = np.asarray(row_dir, float)
        self.c = np.asarray(col_dir, float)
        self.dr, self.dc, self.step = row_spacing, col_spacing, step
        self.n = np.cross(self.r, self.c) * slice_sign
        self.origin = np.asarray(origin, float)
        self.shift = np.tan(np.radians(tilt)) * self.c

    def position(self, k):
        return self.origin + k * self.step * (self.n + self.shift)

    def affine_ras(self, nz):
        """From the values as the files store them (decimal strings): positions, orientation,
        spacing; the slice axis from the first to the last position."""
        rd = lambda v: np.array([float(ds_str(x)) for x in np.atleast_1d(v)])  # noqa: E731
        lps = np.eye(4)
        lps[:3, 0] = rd(self.r) * rd(self.dc)
        lps[:3, 1] = rd(self.c) * rd(self.dr)
        lps[:3, 2] = (rd(self.position(nz - 1)) - rd(self.position(0))) / (nz - 1)
        lps[:3, 3] = rd(self.position(0))
        return np.diag([-1.0, -1.0, 1.0, 1.0]) @ lps


def ds_str(v):
    s = f"{v:.10g}"
    return s if len(s) <= 16 else f"{v:.8g}"


def make_slice(geo, k, pixels, uids, instance, *, slope=1.0, intercept=-1024.0, extra=None):
    """pixels: (rows, cols) HU."""
    ds = Dataset()
    ds.file_meta = FileMetaDataset()
    ds.file_meta.MediaStorageSOPClassUID = CTImageStorage
    sop = generate_uid()
    ds.file_meta.MediaStorageSOPInstanceUID = sop
    ds.file_meta.TransferSyntaxUID = ExplicitVRLittleEndian
    ds.SpecificCharacterSet = "ISO_IR 100"
    ds.SOPClassUID, ds.SOPInstanceUID = CTImageStorage, sop
    ds.PatientName, ds.PatientID, ds.PatientBirthDate, ds.PatientSex = "Phantom^Swinrun", "SWIN0001", "19700101", "O"
    ds.StudyInstanceUID, ds.StudyDate, ds.StudyTime = uids["study"], "20260101", "120000"
    ds.ReferringPhysicianName, ds.StudyID, ds.AccessionNumber = "", "1", ""
    ds.Modality, ds.SeriesInstanceUID, ds.SeriesNumber = "CT", uids["series"], uids.get("number", 2)
    ds.SeriesDescription = uids.get("description", "phantom")
    ds.FrameOfReferenceUID, ds.PositionReferenceIndicator = uids["for"], ""
    ds.Manufacturer = "swinrun tests"
    ds.PatientPosition = uids.get("position", "HFS")
    ds.ImageType = ["ORIGINAL", "PRIMARY", "AXIAL"]
    ds.InstanceNumber = instance
    ds.ImagePositionPatient = [ds_str(v) for v in geo.position(k)]
    ds.ImageOrientationPatient = [ds_str(v) for v in (*geo.r, *geo.c)]
    ds.PixelSpacing = [ds_str(geo.dr), ds_str(geo.dc)]
    ds.SliceThickness = ds_str(geo.step)
    ds.KVP = ""
    ds.AcquisitionNumber = 1
    ds.SamplesPerPixel, ds.PhotometricInterpretation = 1, "MONOCHROME2"
    ds.Rows, ds.Columns = pixels.shape
    ds.BitsAllocated, ds.BitsStored, ds.HighBit, ds.PixelRepresentation = 16, 16, 15, 0
    ds.RescaleSlope, ds.RescaleIntercept, ds.RescaleType = ds_str(slope), ds_str(intercept), "HU"
    stored = np.rint((pixels.astype(np.float64) - intercept) / slope)
    assert stored.min() >= 0 and stored.max() < 65536
    ds.PixelData = stored.astype("<u2").tobytes()
    for key, v in (extra or {}).items():
        setattr(ds, key, v)
    return ds


def write_series(folder, geo, vol, *, shuffle=True, reverse_numbers=True, slope=1.0, uids=None, extra=None,
                 rng=None, skip=(), encode=None):
    """vol: (nx, ny, nz) HU; slice k pixel (j, i) = vol[i, j, k]. Returns the SOP UIDs by k."""
    os.makedirs(folder, exist_ok=True)
    nz = vol.shape[2]
    uids = uids or new_uids()
    order = rng.permutation(nz) if shuffle else np.arange(nz)
    sops = []
    for n, k in enumerate(order):
        k = int(k)
        if k in skip:
            continue
        inst = nz - k if reverse_numbers else k + 1
        ds = make_slice(geo, k, vol[:, :, k].T, uids, inst, slope=slope, extra=(extra or {}).get(k))
        if encode == "rle":
            ds.compress(RLELossless, encoding_plugin="pydicom")
        name = f"IM{rng.integers(1 << 30):010d}" if shuffle else f"slice{k:04d}.dcm"
        ds.save_as(os.path.join(folder, name), enforce_file_format=True)
        sops.append((k, ds.SOPInstanceUID))
    return uids


def new_uids(**kw):
    return dict(study=generate_uid(), series=generate_uid(), **{"for": generate_uid()}, **kw)


def dcmtk_encode(folder, tool, args):
    for f in os.listdir(folder):
        p = os.path.join(folder, f)
        subprocess.run([tool, *args, p, p + ".tmp"], check=True, capture_output=True)
        os.replace(p + ".tmp", p)


def save_copy(path, geo, vol, dtype=np.int16):
    """NIfTI-2: its affine is float64, as the files' geometry; NIfTI-1's float32 sform would
    move the oblique grid (see test_dicom.py)."""
    nib.save(nib.Nifti2Image(vol.astype(dtype), geo.affine_ras(vol.shape[2])), path)


def filled(vol, geo, skip):
    """The grid of a series without the slices in skip: each missing plane the linear
    interpolation between the slices around it, weighted by distance along the normal (the
    positions as the files store them), in float64, rounded once to float32."""
    d = {k: float(np.dot([float(ds_str(v)) for v in geo.position(k)], geo.n)) for k in range(vol.shape[2])}
    have = [k for k in range(vol.shape[2]) if k not in skip]
    out = vol.astype(np.float64)
    step = (d[have[-1]] - d[have[0]]) / (vol.shape[2] - 1)
    for p in skip:
        t = p * step
        lo = max(k for k in have if k < p)
        hi = min(k for k in have if k > p)
        w = (t - (d[lo] - d[have[0]])) / ((d[hi] - d[have[0]]) - (d[lo] - d[have[0]]))
        out[:, :, p] = (1.0 - w) * vol[:, :, lo] + w * vol[:, :, hi]
    return out.astype(np.float32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--shape", type=int, nargs=3, default=[64, 48, 24])
    ap.add_argument("--only", nargs="*", help="names of series to write (default: all)")
    a = ap.parse_args()
    rng = np.random.default_rng(16)
    nx, ny, nz = a.shape
    if os.path.isdir(a.out):
        shutil.rmtree(a.out)
    os.makedirs(a.out)
    # phantom at 0.7 x 0.9 x 2.5 mm: i along columns (0.7 mm apart), j along rows (0.9 mm)
    vol = phantom((nx, ny, nz), (0.7 * 64 / nx * 4, 0.9 * 48 / ny * 4, 2.5), seed=3)
    axial = Geometry((1, 0, 0), (0, 1, 0), 0.9, 0.7, 2.5)
    R = rotation((1.0, 0.4, 0.3), 23.7)
    # origin off any round number: a grid exactly on a rounding tie of the resampling would
    # make the float32 NIfTI copy resample differently
    oblique = Geometry(R @ [1, 0, 0], R @ [0, 1, 0], 0.9, 0.7, 2.5, origin=(12.3457, -40.2468, 80.1357))
    # feet first: row direction toward the patient's right, slices toward the head while
    # row x column points to the feet
    feet = Geometry((-1, 0, 0), (0, 1, 0), 0.9, 0.7, 2.5, slice_sign=-1, origin=(20.0, -20.0, -60.0))
    tilted = Geometry((1, 0, 0), (0, 1, 0), 0.9, 0.7, 2.5, origin=(-31.4159, -22.7183, 48.2818), tilt=20)
    good = {
        "axial": dict(geo=axial),
        "oblique": dict(geo=oblique, slope=0.5),
        "feetfirst": dict(geo=feet, uids=new_uids(position="FFS")),
        "rle": dict(geo=axial, encode="rle"),
        "jpegll": dict(geo=axial, dcmtk=("dcmcjpeg", ["+e1"])),
        "jpegls": dict(geo=axial, dcmtk=("dcmcjpls", ["+el"])),
        "tilted": dict(geo=tilted, extra={"GantryDetectorTilt": "20"}),
        "missing": dict(geo=axial, skip=(6, 14, 15)),
        "tilted_missing": dict(geo=tilted, skip=(6, 14), extra={"GantryDetectorTilt": "20"}),
        "two_spacings": dict(geo=axial, skip=tuple(range(1, 16, 2))),
    }
    meta = {}
    for name, g in good.items():
        if a.only and name not in a.only:
            continue
        folder = os.path.join(a.out, name)
        write_series(folder, g["geo"], vol, slope=g.get("slope", 1.0), uids=g.get("uids"), rng=rng,
                     encode=g.get("encode"), extra={k: g["extra"] for k in range(nz)} if "extra" in g else None,
                     skip=g.get("skip", ()))
        if "dcmtk" in g:
            dcmtk_encode(folder, *g["dcmtk"])
        if "skip" in g:
            save_copy(os.path.join(a.out, name + ".nii.gz"), g["geo"], filled(vol, g["geo"], g["skip"]), np.float32)
        else:
            save_copy(os.path.join(a.out, name + ".nii.gz"), g["geo"], vol)
        meta[name] = {"affine": g["geo"].affine_ras(nz).tolist()}

    small = vol[:, :, :12]
    if not a.only or "bad" in a.only:
        # two series in one folder
        f = os.path.join(a.out, "bad_two_series")
        write_series(f, axial, small, rng=rng, uids=new_uids(number=2, description="abdomen"))
        write_series(f, axial, small, rng=rng, uids=new_uids(number=3, description="abdomen 2 mm"))
        # mixed geometry: one slice with another pixel spacing
        f = os.path.join(a.out, "bad_mixed_geometry")
        write_series(f, axial, small, rng=rng, extra={5: {"PixelSpacing": ["0.8", "0.7"]}})
        # duplicate positions: a second instance at slice 4's position
        f = os.path.join(a.out, "bad_duplicate")
        u = write_series(f, axial, small, rng=rng)
        write_series(f, axial, small[:, :, 4:5], shuffle=False, uids=u, rng=rng)
        # a gap of four missing slices
        write_series(os.path.join(a.out, "bad_wide_gap"), axial, small, rng=rng, skip=(4, 5, 6, 7))
        # a tilted stack (12 degrees) with slice 5 moved 1 mm along the row direction: no
        # longer one step from slice to slice
        tilted12 = Geometry((1, 0, 0), (0, 1, 0), 0.9, 0.7, 2.5, tilt=12)
        f = os.path.join(a.out, "bad_jagged")
        u = new_uids()
        for k in range(12):
            ds = make_slice(tilted12, k, small[:, :, k].T, u, k + 1)
            p = np.asarray(tilted12.position(k)) + ([1.0, 0, 0] if k == 5 else 0)
            ds.ImagePositionPatient = [ds_str(v) for v in p]
            ds.save_as(os.path.join(f if os.path.isdir(f) else (os.makedirs(f) or f), f"s{k}.dcm"),
                       enforce_file_format=True)
        # MPEG-2, which swinrun does not decode (the RLE fragments relabelled: never decoded)
        f = os.path.join(a.out, "bad_mpeg2")
        write_series(f, axial, small, rng=rng, encode="rle")
        for n in os.listdir(f):
            ds = pydicom.dcmread(os.path.join(f, n))
            ds.file_meta.TransferSyntaxUID = "1.2.840.10008.1.2.4.100"
            ds.save_as(os.path.join(f, n), enforce_file_format=True)
        # an MR image among the CT slices
        f = os.path.join(a.out, "bad_not_ct")
        u = write_series(f, axial, small, rng=rng)
        ds = pydicom.dcmread(os.path.join(f, sorted(os.listdir(f))[0]))
        ds.SOPClassUID = ds.file_meta.MediaStorageSOPClassUID = "1.2.840.10008.5.1.4.1.1.4"
        ds.save_as(os.path.join(f, sorted(os.listdir(f))[0]), enforce_file_format=True)
    with open(os.path.join(a.out, "series.json"), "w") as fh:
        json.dump(meta, fh, indent=1)


if __name__ == "__main__":
    main()
