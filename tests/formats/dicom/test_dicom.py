#!/usr/bin/env python3
"""DICOM in, SEG / RTSTRUCT / NIfTI out, against independent readers (issue 16).

On every generated good series (make_series.py):
  - `swinrun CT_DIR/ out.nii.gz` has the grid the test derives from the files itself
    (slices sorted along the normal, affine from position, orientation and spacing), and its
    labels agree with `swinrun copy.nii.gz` on the test's own NIfTI copy on >= 99.99 % of
    voxels (compared in world coordinates);
  - the report's dicom_tilt_degrees is the tilt make_series.py wrote (tilted: 20, its grid
    sheared; tilted_missing: 20 with slices 6 and 14 left out; the others 0), and the CLI
    names a tilt in one line;
  - missing (three slices left out; tilted_missing two, on its sheared grid): the label map
    is the regular grid across the gaps, its labels agree with the NIfTI copy whose missing
    planes the test interpolated itself; the SEG and RTSTRUCT cover the slices there are, each
    from its plane; the report counts the interpolated planes and the CLI says so; so too
    two_spacings (5 mm gaps, more of them, then 2.5 mm ones): the grid is 2.5 mm;
  - `swinrun CT_DIR/ seg.dcm --rtstruct rt.dcm`: dciodvfy reports no error for either;
    highdicom reads the SEG back voxel-exact against that label map, every frame's plane
    position is its source CT slice's, ReferencedSeriesSequence lists every CT instance;
  - the RTSTRUCT's contours, rasterised here (even-odd rule at pixel centres), give every
    organ back with Dice >= 0.99 (exact: the contours follow voxel edges), every point
    within 0.01 mm of its slice's plane, each contour referencing its slice.
dcmqi (segimage2itkimage) reads one SEG back; its voxels are compared in world coordinates.
Every bad series: exit 2, one line on stderr (and the list of the series for an ambiguous
study), no output file.

    test_dicom.py SWINRUN MODEL WORKDIR [--series DIR] [--only NAME ...]

--series: series make_series.py wrote already (default: written into WORKDIR/series);
--only: good series names, bad series names, "bad" for all of them, "list" for the
file-list form."""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys

import nibabel as nib
import numpy as np
import pydicom

HERE = os.path.dirname(os.path.abspath(__file__))
GOOD = ["axial", "oblique", "feetfirst", "rle", "jpegll", "jpegls", "tilted", "missing", "tilted_missing",
        "two_spacings"]
TILT = {"tilted": 20.0, "tilted_missing": 20.0}  # the gantry tilt make_series.py wrote (degrees), else 0
BAD = {  # folder -> words its one-line message must contain
    "bad_two_series": "ambiguous: 2 axial CT series",
    "bad_mixed_geometry": "mixed geometry",
    "bad_duplicate": "same position",
    "bad_wide_gap": "more than 3 missing slices",
    "bad_jagged": "off the line",
    "bad_not_ct": "not CT Image Storage",
    "bad_mpeg2": "cannot decode transfer syntax",
}
LISTED = {"bad_two_series": 3}  # a refused choice also lists the series: a header and a line each
BTCV = ["Spleen", "Right kidney", "Left kidney", "Gallbladder", "Esophagus", "Liver", "Stomach", "Aorta",
        "Inferior vena cava", "Portal vein and splenic vein", "Pancreas", "Right adrenal gland", "Left adrenal gland"]
# The names a 14-class model's labels get (the BTCV organs); any other model's are "Label N"
# (formats/dicom/classes.c). NAMES_BTCV: whether this run's model has 14 output channels.
NAMES_BTCV = True


def label_of(name):
    """A segment's or ROI's label from its name; -1 for a name of the other kind."""
    if NAMES_BTCV:
        return BTCV.index(name) + 1 if name in BTCV else -1
    return int(name[len("Label "):]) if name.startswith("Label ") and name[len("Label "):].isdigit() else -1

ok = True


def check(what, cond, detail=""):
    global ok
    print(f"{what:72s} {'ok' if cond else 'FAIL'} {detail}", flush=True)
    ok &= bool(cond)
    return bool(cond)


def finest_spacing(gaps):
    """The grid's spacing (docs/dicom.md): the smallest gap g, at most the median gap, that at
    least a tenth of the gaps (two at least) lie within [g, g + 2 tol] of, tol = max(0.01, 1 % of
    g), as those gaps' mean; else the median gap (the upper one of an even count, as series.c
    takes it)."""
    gaps = np.sort(gaps)
    median = gaps[len(gaps) // 2]
    need = max(2, int(np.ceil(len(gaps) / 10)))
    for g in gaps[gaps <= median]:
        near = gaps[(gaps >= g) & (gaps <= g + 2 * max(0.01, 0.01 * g))]
        if len(near) >= need:
            return near.mean()
    return median


class Series:
    """The CT files as the test reads them: pydicom, sorted along the normal."""

    def __init__(self, folder):
        dss = [pydicom.dcmread(p, stop_before_pixels=True) for p in sorted(glob.glob(os.path.join(folder, "*")))]
        iop = np.array(dss[0].ImageOrientationPatient, float)
        self.r, self.c = iop[:3], iop[3:]
        self.n = np.cross(self.r, self.c)
        dss.sort(key=lambda d: float(np.dot(np.array(d.ImagePositionPatient, float), self.n)))
        self.ds = dss
        self.pos = np.array([d.ImagePositionPatient for d in dss], float)
        self.sop = [d.SOPInstanceUID for d in dss]
        self.k_of = {u: k for k, u in enumerate(self.sop)}
        self.dr, self.dc = (float(v) for v in dss[0].PixelSpacing)
        self.rows, self.cols = int(dss[0].Rows), int(dss[0].Columns)
        self.series_uid = dss[0].SeriesInstanceUID
        lps = np.eye(4)
        lps[:3, 0], lps[:3, 1] = self.r * self.dc, self.c * self.dr
        # the regular grid: planes the finest spacing apart along the normal, from the first
        # slice to the last; each slice on its nearest plane (missing slices: planes between)
        d = (self.pos - self.pos[0]) @ self.n
        self.nz = int(np.rint(d[-1] / finest_spacing(np.diff(d)))) + 1
        self.plane_of = np.rint(d / (d[-1] / (self.nz - 1))).astype(int)
        lps[:3, 2] = (self.pos[-1] - self.pos[0]) / (self.nz - 1)
        lps[:3, 3] = self.pos[0]
        self.affine = np.diag([-1.0, -1.0, 1.0, 1.0]) @ lps


def run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)


def world_agreement(lab_a, aff_a, lab_b, aff_b):
    """Fraction of a's voxels whose label equals b's voxel at the same world point (the
    grids are the same voxels in another order: the mapped indices must be integers)."""
    ijk = np.indices(lab_a.shape).reshape(3, -1)
    m = np.linalg.inv(aff_b) @ aff_a
    t = m[:3, :3] @ ijk + m[:3, 3:4]
    ti = np.rint(t).astype(int)
    assert np.abs(t - ti).max() < 1e-3, np.abs(t - ti).max()
    inside = np.all((ti >= 0) & (ti < np.array(lab_b.shape)[:, None]), axis=0)
    assert inside.all()
    return float(np.mean(lab_a[ijk[0], ijk[1], ijk[2]] == lab_b[ti[0], ti[1], ti[2]]))


def check_statistics(name, stats, copy_path, labels, affine):
    """The report's organ statistics against numpy on the HU of the test's NIfTI copy, taken
    at the label map's voxels through world coordinates (pydicom decodes no JPEG lossless)."""
    cp = nib.load(copy_path)
    ijk = np.indices(labels.shape).reshape(3, -1)
    m = np.linalg.inv(cp.affine) @ affine
    ti = np.rint(m[:3, :3] @ ijk + m[:3, 3:4]).astype(int)
    hu = np.asarray(cp.dataobj, np.float64)[ti[0], ti[1], ti[2]].reshape(labels.shape)
    ml = abs(np.linalg.det(affine[:3, :3])) / 1000
    want = []
    for lab in (int(v) for v in np.unique(labels) if v):
        v = hu[labels == lab]
        want.append((lab, v.size, v.size * ml, v.mean(), v.std()))
    got = [(x["label"], x["voxels"], x["volume_ml"], x["hu_mean"], x["hu_std"]) for x in stats]
    good = len(got) == len(want) and all(
        g[0] == w[0] and g[1] == w[1] and np.allclose(g[2:], w[2:], rtol=1e-5, atol=1e-3) for g, w in zip(got, want))
    check(f"{name}: report statistics (voxels, mL, HU mean and std) = numpy's", good, f"{len(got)} labels")


def dciodvfy_errors(path):
    r = run(["dciodvfy", "-new", path])
    lines = (r.stdout + r.stderr).splitlines()
    return [l for l in lines if l.startswith("Error")], [l for l in lines if l.startswith("Warning")]


def check_seg(name, seg_path, s, labels):
    import highdicom as hd
    errs, warns = dciodvfy_errors(seg_path)
    check(f"{name}: SEG dciodvfy: no error", not errs, "; ".join(errs[:3]) + f" ({len(warns)} warnings)")
    seg = hd.seg.segread(seg_path)
    ds = pydicom.dcmread(seg_path)
    # segment number -> label through the segment label (BTCV names, or "Label N")
    seg_label = {int(it.SegmentNumber): label_of(it.SegmentLabel) for it in ds.SegmentSequence}
    present = sorted(int(v) for v in np.unique(labels) if v)
    check(f"{name}: SEG segments are the labels present", sorted(seg_label.values()) == present,
          f"{len(present)} segments")
    arr = seg.get_pixels_by_source_instance(source_sop_instance_uids=s.sop, combine_segments=True, relabel=False,
                                            assert_missing_frames_are_empty=True)
    # arr: (nz, rows, cols) segment numbers; labels: (cols, rows, nz)
    lut = np.zeros(max(seg_label) + 1 if seg_label else 1, np.int64)
    for sn, lab in seg_label.items():
        lut[sn] = lab
    back = lut[arr].transpose(2, 1, 0)
    check(f"{name}: highdicom reads the SEG back voxel-exact", np.array_equal(back, labels),
          f"{int(np.sum(back != labels))} voxels differ")
    planes_ok, refs_ok = True, True
    for f in ds.PerFrameFunctionalGroupsSequence:
        src = f.DerivationImageSequence[0].SourceImageSequence[0].ReferencedSOPInstanceUID
        k = s.k_of.get(src)
        pp = np.array(f.PlanePositionSequence[0].ImagePositionPatient, float)
        planes_ok &= k is not None and np.abs(pp - s.pos[k]).max() < 1e-4
    ref = ds.ReferencedSeriesSequence[0]
    refs_ok = ref.SeriesInstanceUID == s.series_uid and \
        sorted(i.ReferencedSOPInstanceUID for i in ref.ReferencedInstanceSequence) == sorted(s.sop)
    check(f"{name}: every SEG frame on its source CT slice's plane", planes_ok, f"{ds.NumberOfFrames} frames")
    check(f"{name}: ReferencedSeriesSequence lists every CT instance", refs_ok)
    same = all(str(getattr(ds, t, "")) == str(getattr(s.ds[0], t, "")) for t in
               ("PatientID", "PatientName", "StudyInstanceUID", "FrameOfReferenceUID"))
    check(f"{name}: SEG patient, study, frame of reference from the CT; a new series",
          same and ds.SeriesInstanceUID != s.series_uid)


def edges_of(points_uv):
    """The closed polygon's edges: (start, end) in (u, v) = (column index, row index)."""
    return points_uv, np.roll(points_uv, -1, axis=0)


def rasterise(edges, rows, cols):
    """Even-odd rule at pixel centres over every edge of a slice's contours together: a
    centre (i, j) is inside when a ray from it toward +u crosses an odd number of edges."""
    p, q = np.concatenate([e[0] for e in edges]), np.concatenate([e[1] for e in edges])
    j = np.arange(rows)[None, :]
    straddle = (p[:, 1:2] > j) != (q[:, 1:2] > j)                    # (edges, rows)
    e_idx, rows_idx = np.nonzero(straddle)
    pu, pv, qu, qv = p[e_idx, 0], p[e_idx, 1], q[e_idx, 0], q[e_idx, 1]
    x = pu + (rows_idx - pv) * (qu - pu) / (qv - pv)                  # crossing's u on row j
    first = np.clip(np.floor(x).astype(int) + 1, 0, cols)            # centres i < x: i < first
    cnt = np.zeros((rows, cols + 1), np.int64)
    np.add.at(cnt, (rows_idx, first), 1)
    crossings_right = np.cumsum(cnt[:, ::-1], axis=1)[:, ::-1][:, 1:]  # crossings with first > i
    return (crossings_right % 2).astype(bool)


def check_rtstruct(name, rt_path, s, labels, masks=None, label_of=label_of):
    """labels: (cols, rows, nz) label values; or masks: (cols, rows, nz, channels) 0/1, label
    c + 1 channel c's mask (a multi-label run). label_of: an ROI's label from its name."""
    errs, warns = dciodvfy_errors(rt_path)
    check(f"{name}: RTSTRUCT dciodvfy: no error", not errs, "; ".join(errs[:3]) + f" ({len(warns)} warnings)")
    ds = pydicom.dcmread(rt_path)
    names = {int(r.ROINumber): r.ROIName for r in ds.StructureSetROISequence}
    algo = all(r.ROIGenerationAlgorithm == "AUTOMATIC" for r in ds.StructureSetROISequence)
    # ORGAN for the BTCV organs; empty for a name of the model's own (coded Tissue)
    organ = all((o.RTROIInterpretedType or "") == ("ORGAN" if names[int(o.ReferencedROINumber)] in BTCV else "")
                for o in ds.RTROIObservationsSequence)
    check(f"{name}: RTSTRUCT ROIs AUTOMATIC, ORGAN (organs) or no type, colours", algo and organ and
          all(len(rc.ROIDisplayColor) == 3 for rc in ds.ROIContourSequence))
    worst_dice, worst_plane, refs = 1.0, 0.0, True
    for rc in ds.ROIContourSequence:
        lab = label_of(names[int(rc.ReferencedROINumber)])
        mask = np.zeros((s.cols, s.rows, len(s.sop)), bool)
        per_slice = {}
        for c in getattr(rc, "ContourSequence", []):
            k = s.k_of.get(c.ContourImageSequence[0].ReferencedSOPInstanceUID)
            refs &= k is not None and c.ContourGeometricType == "CLOSED_PLANAR"
            if k is None:
                continue
            raw = c.get_item("ContourData").value  # parsed here: pydicom's DS objects are slow
            p = np.array(raw.split(b"\\") if isinstance(raw, bytes) else raw, float).reshape(-1, 3)
            refs &= len(p) == int(c.NumberOfContourPoints)
            d = p - s.pos[k]
            worst_plane = max(worst_plane, float(np.abs(d @ s.n).max()))
            uv = np.stack([d @ s.r / s.dc, d @ s.c / s.dr], axis=1)
            per_slice.setdefault(k, []).append(edges_of(uv))
        for k, edges in per_slice.items():
            mask[:, :, k] = rasterise(edges, s.rows, s.cols).T
        truth = masks[..., lab - 1].astype(bool) if masks is not None else labels == lab
        dice = 2 * np.sum(mask & truth) / max(1, mask.sum() + truth.sum())
        worst_dice = min(worst_dice, dice)
    present = ([c + 1 for c in range(masks.shape[3]) if masks[..., c].any()] if masks is not None else
               sorted(int(v) for v in np.unique(labels) if v))
    check(f"{name}: RTSTRUCT one ROI per label present", sorted(label_of(n) for n in names.values()) == present,
          f"{len(names)} ROIs")
    check(f"{name}: RTSTRUCT rasterised (even-odd) gives the labels back, Dice >= 0.99", worst_dice >= 0.99,
          f"worst Dice {worst_dice:.6f}")
    check(f"{name}: RTSTRUCT points within 0.01 mm of their slice's plane", worst_plane <= 0.01,
          f"worst {worst_plane:.2e} mm")
    check(f"{name}: each contour references its CT slice", refs)


def check_dcmqi(name, seg_path, labels, affine, work):
    tool = shutil.which("segimage2itkimage", path=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    if not check(f"{name}: dcmqi's segimage2itkimage is installed", tool is not None):
        return
    out = os.path.join(work, f"{name}_dcmqi")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    r = run([tool, "--inputDICOM", seg_path, "--outputDirectory", out, "--outputType", "nifti"])
    if not check(f"{name}: dcmqi reads the SEG", r.returncode == 0, (r.stdout + r.stderr).strip()[-200:]):
        return
    meta = json.load(open(os.path.join(out, "meta.json")))
    seg_names = {}
    for group in meta["segmentAttributes"]:
        for sgm in group:
            seg_names[int(sgm["labelID"])] = sgm.get("SegmentLabel")
    exact = True
    files = sorted(glob.glob(os.path.join(out, "*.nii.gz")))
    for f in files:
        img = nib.load(f)
        data = np.asanyarray(img.dataobj)
        for lab_id in np.unique(data):
            if not lab_id:
                continue
            lab = label_of(seg_names[int(lab_id)])
            ijk = np.argwhere(data == lab_id).T
            m = np.linalg.inv(affine) @ img.affine
            t = m[:3, :3] @ ijk + m[:3, 3:4]
            ti = np.rint(t).astype(int)
            exact &= bool(np.abs(t - ti).max() < 1e-2) and ti.shape[1] == int(np.sum(labels == lab))
            exact &= bool(np.all(labels[ti[0], ti[1], ti[2]] == lab))
    check(f"{name}: dcmqi's voxels are swinrun's labels (world coordinates)", exact and files, f"{len(files)} files")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("swinrun")
    ap.add_argument("model")
    ap.add_argument("work")
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--series")
    a = ap.parse_args()
    global NAMES_BTCV
    with open(os.path.join(os.path.dirname(a.model), "model.json")) as f:
        NAMES_BTCV = json.load(f)["out_channels"] == 14
    os.makedirs(a.work, exist_ok=True)
    series = a.series
    if not series:
        series = os.path.join(a.work, "series")
        r = run([sys.executable, os.path.join(HERE, "make_series.py"), series])
        if not check("series generated (pydicom, dcmcjpeg, dcmcjpls)", r.returncode == 0, r.stderr[-300:]):
            return 1
    out = os.path.join(a.work, "out")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    env = dict(os.environ, SWINRUN_MODEL=a.model)
    for name in GOOD:
        if a.only and name not in a.only:
            continue
        ct = os.path.join(series, name)
        s = Series(ct)
        lab_path, ref_path = os.path.join(out, f"{name}_dcm.nii.gz"), os.path.join(out, f"{name}_nii.nii.gz")
        seg_path, rt_path = os.path.join(out, f"{name}_seg.dcm"), os.path.join(out, f"{name}_rt.dcm")
        js = os.path.join(out, f"{name}.json")
        r1 = run([a.swinrun, ct + "/", lab_path], env=env)
        r2 = run([a.swinrun, os.path.join(series, name + ".nii.gz"), ref_path], env=env)
        r3 = run([a.swinrun, "segment", ct, seg_path, "--rtstruct", rt_path, "--json", js], env=env)
        if not check(f"{name}: swinrun CT_DIR/ out.nii.gz, the NIfTI copy, CT_DIR seg.dcm --rtstruct",
                     r1.returncode == 0 and r2.returncode == 0 and r3.returncode == 0,
                     (r1.stderr + r2.stderr + r3.stderr).strip()[-300:]):
            continue
        img = nib.load(lab_path)
        labels = np.asarray(img.dataobj)
        check(f"{name}: label map grid = the test's own reading of the files",
              labels.shape == (s.cols, s.rows, s.nz) and np.abs(img.affine - s.affine).max() < 1e-4,
              f"max affine difference {np.abs(img.affine - s.affine).max():.1e}")
        ref = nib.load(ref_path)
        agree = world_agreement(labels, img.affine, np.asarray(ref.dataobj), ref.affine)
        present = [int(v) for v in np.unique(labels) if v]
        check(f"{name}: labels agree with the NIfTI route on the copy, >= 99.99 %", agree >= 0.9999,
              f"{100 * agree:.4f} %, labels present {present}")
        j = json.load(open(js))["volumes"][0]
        check_statistics(name, j["statistics"], os.path.join(series, name + ".nii.gz"), labels, img.affine)
        check(f"{name}: report: labels present, DICOM written",
              j["labels_present"] == len(present) and j["dicom_input"] and j["dicom_written"] == bool(present))
        tilt = TILT.get(name, 0.0)
        noted = f"gantry tilt {tilt:.1f} degrees" in r1.stderr
        check(f"{name}: report and CLI: gantry tilt {tilt} degrees", abs(j["dicom_tilt_degrees"] - tilt) < 0.05 and
              noted == (tilt > 0), f"dicom_tilt_degrees {j['dicom_tilt_degrees']}, stderr {r1.stderr.strip()[-160:]}")
        if not present:
            check(f"{name}: no organ: no SEG, no RTSTRUCT", not os.path.exists(seg_path) and not os.path.exists(rt_path))
            continue
        filled = s.nz - len(set(s.plane_of.tolist()))
        check(f"{name}: report and CLI: {len(s.sop)} slices, {filled} planes interpolated",
              j["dicom_slices"] == len(s.sop) and j["dicom_planes_filled"] == filled and
              ("uneven slice spacing" in r1.stderr) == (filled > 0), r1.stderr.strip()[-200:])
        # the SEG and RTSTRUCT cover the slices: each one's plane of the label map
        check_seg(name, seg_path, s, labels[:, :, s.plane_of])
        check_rtstruct(name, rt_path, s, labels[:, :, s.plane_of])
        if name in ("axial", "oblique"):
            check_dcmqi(name, seg_path, labels, img.affine, out)
    # bad series: one line, exit 2, nothing written
    for name, words in BAD.items():
        if a.only and name not in a.only and "bad" not in a.only:
            continue
        before = set(os.listdir(out))
        o = os.path.join(out, f"{name}.dcm")
        r = run([a.swinrun, os.path.join(series, name), o, "--rtstruct", os.path.join(out, f"{name}_rt.dcm")], env=env)
        lines = r.stderr.strip().splitlines()
        check(f"{name}: exit 2, one line naming the problem, nothing written",
              r.returncode == 2 and len(lines) == 1 + LISTED.get(name, 0) and words in r.stderr and set(os.listdir(out)) == before,
              f"rc {r.returncode}: {r.stderr.strip()[:160]}")
    # no organ: the test model with background's bias raised so that every voxel is label 0
    if not a.only or "noorgan" in a.only:
        import onnx
        from onnx import numpy_helper
        m = onnx.load(a.model)
        for init in m.graph.initializer:
            if init.name == "out.conv.conv.bias":
                b = numpy_helper.to_array(init).copy()
                b[0] = 1e6
                init.CopyFrom(numpy_helper.from_array(b, init.name))
        bg = os.path.join(a.work, "background_only.onnx")
        onnx.save(m, bg)
        seg_path, rt_path, js = (os.path.join(out, n) for n in ("none_seg.dcm", "none_rt.dcm", "none.json"))
        r = run([a.swinrun, os.path.join(series, "axial"), seg_path, "--rtstruct", rt_path, "--json", js,
                 "--model", bg])
        lines = r.stderr.strip().splitlines()
        j = json.load(open(js))["volumes"][0] if os.path.exists(js) else {}
        check("no organ found: exit 0, a one-line notice, no SEG, no RTSTRUCT, the report says so",
              r.returncode == 0 and len(lines) == 1 and "no organ found" in r.stderr and
              not os.path.exists(seg_path) and not os.path.exists(rt_path) and
              j.get("labels_present") == 0 and j.get("dicom_written") is False, r.stderr.strip()[:160])
    # DCMTK's data dictionary missing: a clear line, not a crash
    if not a.only or "bad" in a.only:
        before = set(os.listdir(out))
        r = run([a.swinrun, os.path.join(series, "bad_two_series"), os.path.join(out, "nodict.dcm")],
                env=dict(env, DCMDICTPATH="/nonexistent/dicom.dic"))
        lines = r.stderr.strip().splitlines()
        check("no DICOM data dictionary: exit 2, one line naming DCMDICTPATH, nothing written",
              r.returncode == 2 and len(lines) == 1 and "DCMDICTPATH" in r.stderr and set(os.listdir(out)) == before,
              r.stderr.strip()[:120])
    # the file-list form: the files of one series of the two
    if not a.only or "list" in a.only:
        two = os.path.join(series, "bad_two_series")
        by_series = {}
        for p in sorted(glob.glob(os.path.join(two, "*"))):
            by_series.setdefault(pydicom.dcmread(p, stop_before_pixels=True).SeriesNumber, []).append(p)
        o = os.path.join(out, "list.nii.gz")
        r = run([a.swinrun, "segment", *by_series[2], o], env=env)
        check("file list of one series: swinrun segment F1 ... Fn out.nii.gz", r.returncode == 0 and
              nib.load(o).shape == (64, 48, 12), r.stderr.strip()[-200:])
        # --classes: another model's label meanings
        table = os.path.join(out, "classes.tsv")
        with open(table, "w") as fh:
            fh.write("# label name code scheme meaning colour [modifier]\n"
                     "1\tLeft thing\t85756007\tSCT\tTissue\t10,20,30\n"
                     "2\tRight thing\t85756007\tSCT\tTissue\t40,50,60\t24028007\tRight\n")
        seg_path, rt_path = os.path.join(out, "classes_seg.dcm"), os.path.join(out, "classes_rt.dcm")
        r = run([a.swinrun, os.path.join(series, "axial"), seg_path, "--rtstruct", rt_path, "--classes", table],
                env=env)
        good = r.returncode == 0
        if good:
            sg, rt = pydicom.dcmread(seg_path), pydicom.dcmread(rt_path)
            by_label = {int(x.SegmentNumber): x for x in sg.SegmentSequence}
            t2 = by_label[2].SegmentedPropertyTypeCodeSequence[0]
            good = (by_label[1].SegmentLabel == "Left thing" and t2.CodeValue == "85756007" and
                    t2.SegmentedPropertyTypeModifierCodeSequence[0].CodeValue == "24028007" and
                    by_label[3].SegmentLabel == "Label 3" and
                    [int(v) for v in rt.ROIContourSequence[0].ROIDisplayColor] == [10, 20, 30] and
                    rt.StructureSetROISequence[1].ROIName == "Right thing")
        check("--classes: names, codes, modifiers and colours from the table, 'Label N' beyond it", good,
              r.stderr.strip()[-200:])
        batch = os.path.join(out, "batch")
        os.makedirs(batch, exist_ok=True)
        r = run([a.swinrun, "segment", "--out-dir", batch, os.path.join(series, "axial") + "/",
                 os.path.join(series, "oblique.nii.gz")], env=env)
        check("--out-dir with a series folder and a NIfTI file", r.returncode == 0 and
              sorted(os.listdir(batch)) == ["axial_seg.nii.gz", "oblique_seg.nii.gz"], r.stderr.strip()[-200:])
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
