#!/usr/bin/env python3
"""Anonymised and imperfect CT series (issue 29, part D), generated from the phantom with
make_series.py's helpers, against dciodvfy, highdicom and numpy.

  anon      StudyInstanceUID, SeriesInstanceUID and SOPClassUID blank (the file meta still
            says CT), FrameOfReferenceUID and AccessionNumber removed, PatientID,
            PatientName and StudyID blank, StudyDate an anonymiser's "REMOVED": the SEG (both
            forms) and the RT Structure Set pass dciodvfy with no error, name one generated
            study, CT series and frame of reference (valid UIDs under DCMTK's root), reference
            the CT instances as CT Image Storage, and give the label map back (highdicom, the
            test's own rasteriser); swinrun says in one line, and in the report, that the
            outputs will not file into the source study.
  nosop     one slice's SOPInstanceUID blank in the dataset, its file meta's kept (as
            anonymisers leave it): the SEG and the RT Structure Set reference that slice by
            the meta's UID (pydicom reads both).
  nouid     one slice's SOPInstanceUID blank in the dataset and the file meta: a SEG (or RT
            Structure Set) is refused, exit 2, one line, nothing written; a NIfTI label map,
            which references no instance, is written.
  pixels    RescaleSlope / RescaleIntercept different on every slice, and PixelPaddingValue
            (stored 0xF830, 63536: 62512 HU if taken as a pixel) outside a circle: the label
            map agrees with the NIfTI route on the test's copy, where the padding is -1024 HU
            (air), and the report's statistics are numpy's on that copy.

    anon_test.py SWINRUN MODEL WORKDIR"""
import json
import os
import shutil
import sys
import warnings

import nibabel as nib
import numpy as np
import pydicom

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_series as ms  # noqa: E402
import test_dicom as td  # noqa: E402

DCMTK_ROOT = "1.2.276.0.7230010.3."
SHAPE = (48, 40, 16)
PAD = 63536


def volume():
    nx, ny, nz = SHAPE
    return ms.phantom(SHAPE, (0.7 * 64 / nx * 4, 0.9 * 48 / ny * 4, 2.5), seed=3)


def edit_files(folder, fn):
    for n in sorted(os.listdir(folder)):
        p = os.path.join(folder, n)
        ds = pydicom.dcmread(p)
        fn(ds)
        ds.save_as(p, enforce_file_format=True)


def anonymise(ds):
    warnings.filterwarnings("ignore", message="Invalid value for VR DA")  # the placeholder below
    ds.StudyInstanceUID = ds.SeriesInstanceUID = ds.SOPClassUID = ""
    ds.PatientID = ds.PatientName = ds.StudyID = ""
    ds.StudyDate = "REMOVED"
    del ds.FrameOfReferenceUID
    del ds.AccessionNumber


def label_map(a, name, ct, env, out):
    s = td.Series(ct)
    lab_path = os.path.join(out, f"{name}.nii.gz")
    r0 = td.run([a.swinrun, ct + "/", lab_path], env=env)
    td.check(f"{name}: swinrun CT_DIR/ out.nii.gz", r0.returncode == 0, r0.stderr.strip()[-200:])
    if r0.returncode:
        return None, None
    labels = np.asarray(nib.load(lab_path).dataobj)
    present = sorted(int(v) for v in np.unique(labels) if v)
    td.check(f"{name}: the test model finds organs", len(present) > 0, f"labels {present}")
    return s, labels


def uid_ok(u):
    parts = u.split(".")
    return 0 < len(u) <= 64 and all(p.isdigit() and (p == "0" or not p.startswith("0")) for p in parts)


def read_seg(seg_path, s):
    """highdicom's label map of a SEG (either form) on the CT's slices, as BTCV labels."""
    import highdicom as hd
    seg = hd.seg.segread(seg_path)
    ds = pydicom.dcmread(seg_path)
    seg_label = {int(it.SegmentNumber): td.BTCV.index(it.SegmentLabel) + 1
                 for it in ds.SegmentSequence if it.SegmentLabel != "Background"}
    arr = seg.get_pixels_by_source_instance(source_sop_instance_uids=s.sop, combine_segments=True, relabel=False,
                                            assert_missing_frames_are_empty=True)
    lut = np.zeros(max(seg_label) + 1, np.int64)
    for sn, lab in seg_label.items():
        lut[sn] = lab
    return lut[arr].transpose(2, 1, 0)


def case_anon(a, series, env, out):
    ct = os.path.join(series, "anon")
    s, labels = label_map(a, "anon", ct, env, out)
    if s is None:
        return
    seg, lm, rt, js = (os.path.join(out, n) for n in ("anon_seg.dcm", "anon_lm.dcm", "anon_rt.dcm", "anon.json"))
    r = td.run([a.swinrun, "segment", ct, seg, "--rtstruct", rt, "--json", js], env=env)
    lines = r.stderr.strip().splitlines()
    words = ("StudyInstanceUID (blank)", "SeriesInstanceUID (blank)", "FrameOfReferenceUID (blank)",
             "will not file into the source study")
    if not td.check("anon: exit 0, one line saying which UIDs were generated and that the outputs will not file "
                    "into the source study", r.returncode == 0 and len(lines) == 1 and all(w in r.stderr for w in words),
                    r.stderr.strip()[-300:]):
        return
    rep = json.load(open(js))["volumes"][0]
    td.check("anon: the report's dicom_notice says the same", all(w in rep["dicom_notice"] for w in words),
             rep["dicom_notice"][:120])
    r = td.run([a.swinrun, ct, lm, "--seg-type", "labelmap"], env=env)
    td.check("anon: the label-map SEG is written too", r.returncode == 0, r.stderr.strip()[-200:])
    for path, what in ((seg, "SEG"), (rt, "RTSTRUCT")):
        errs, warns = td.dciodvfy_errors(path)
        td.check(f"anon: {what} dciodvfy: no error", not errs, "; ".join(errs[:3]) + f" ({len(warns)} warnings)")
    d_seg, d_rt, d_lm = (pydicom.dcmread(p) for p in (seg, rt, lm))
    study, frame = d_seg.StudyInstanceUID, d_seg.FrameOfReferenceUID
    ref_series = d_seg.ReferencedSeriesSequence[0].SeriesInstanceUID
    rt_for = d_rt.ReferencedFrameOfReferenceSequence[0]
    rt_study = rt_for.RTReferencedStudySequence[0]
    same = (d_rt.StudyInstanceUID == study and d_rt.FrameOfReferenceUID == frame and
            rt_for.FrameOfReferenceUID == frame and rt_study.ReferencedSOPInstanceUID == study and
            rt_study.RTReferencedSeriesSequence[0].SeriesInstanceUID == ref_series and
            all(x.ReferencedFrameOfReferenceUID == frame for x in d_rt.StructureSetROISequence))
    td.check("anon: SEG and RTSTRUCT name the same generated study, CT series and frame of reference", same)
    new = [study, frame, ref_series, d_seg.SeriesInstanceUID, d_rt.SeriesInstanceUID]
    td.check("anon: the generated UIDs are valid, under DCMTK's root, and distinct",
             all(uid_ok(u) and u.startswith(DCMTK_ROOT) for u in new) and len(set(new)) == len(new), str(new[:3]))
    classes = {i.ReferencedSOPClassUID for i in d_seg.ReferencedSeriesSequence[0].ReferencedInstanceSequence}
    classes |= {i.ReferencedSOPClassUID for i in rt_study.RTReferencedSeriesSequence[0].ContourImageSequence}
    td.check("anon: the CT instances referenced as CT Image Storage (the file meta's class)",
             classes == {pydicom.uid.CTImageStorage}, str(classes))
    td.check("anon: patient ID and name, study ID present and empty; the bad StudyDate left empty",
             all(t in d and str(d.data_element(t).value) == "" for d in (d_seg, d_rt)
                 for t in ("PatientID", "PatientName", "StudyID", "StudyDate")))
    for path, what in ((seg, "binary SEG"), (lm, "label-map SEG")):
        back = read_seg(path, s)
        td.check(f"anon: highdicom reads the {what} back = the NIfTI label map", np.array_equal(back, labels),
                 f"{int(np.sum(back != labels))} voxels differ")
    td.check_rtstruct("anon", rt, s, labels)


def case_nosop(a, series, env, out):
    ct = os.path.join(series, "nosop")
    blank = os.path.join(ct, sorted(os.listdir(ct))[2])
    meta_uid = pydicom.dcmread(blank).file_meta.MediaStorageSOPInstanceUID
    seg, rt = os.path.join(out, "nosop.dcm"), os.path.join(out, "nosop_rt.dcm")
    r = td.run([a.swinrun, ct, seg, "--rtstruct", rt], env=env)
    if not td.check("nosop: a SOPInstanceUID blank in the dataset only: exit 0", r.returncode == 0,
                    f"rc {r.returncode}: {r.stderr.strip()[:200]}"):
        return
    d_seg, d_rt = pydicom.dcmread(seg), pydicom.dcmread(rt)
    seg_refs = {i.ReferencedSOPInstanceUID for i in d_seg.ReferencedSeriesSequence[0].ReferencedInstanceSequence}
    rt_refs = {i.ReferencedSOPInstanceUID for i in d_rt.ReferencedFrameOfReferenceSequence[0]
               .RTReferencedStudySequence[0].RTReferencedSeriesSequence[0].ContourImageSequence}
    td.check("nosop: the SEG and the RT Structure Set reference that slice by its file meta's UID",
             meta_uid in seg_refs and meta_uid in rt_refs and "" not in seg_refs | rt_refs,
             f"{meta_uid} in SEG {meta_uid in seg_refs}, in RTSTRUCT {meta_uid in rt_refs}")


def case_nouid(a, series, env, out):
    ct = os.path.join(series, "nouid")
    before = set(os.listdir(out))
    r = td.run([a.swinrun, ct, os.path.join(out, "nouid.dcm"), "--rtstruct", os.path.join(out, "nouid_rt.dcm")],
               env=env)
    lines = r.stderr.strip().splitlines()
    td.check("nouid: a SOPInstanceUID blank in the dataset and the file meta, a SEG asked: exit 2, one line "
             "naming the file, nothing written",
             r.returncode == 2 and len(lines) == 1 and "SOPInstanceUID" in r.stderr and "slice0002.dcm" in r.stderr
             and set(os.listdir(out)) == before, f"rc {r.returncode}: {r.stderr.strip()[:160]}")
    r = td.run([a.swinrun, ct, os.path.join(out, "rt_only_nouid.nii.gz"), "--rtstruct",
                os.path.join(out, "nouid_rt.dcm")], env=env)
    td.check("nouid: an RT Structure Set alone asked: refused too", r.returncode == 2 and "SOPInstanceUID" in r.stderr,
             f"rc {r.returncode}: {r.stderr.strip()[:160]}")
    lab = os.path.join(out, "nouid.nii.gz")
    r = td.run([a.swinrun, ct, lab], env=env)
    td.check("nouid: a NIfTI label map asked: written", r.returncode == 0 and os.path.exists(lab),
             f"rc {r.returncode}: {r.stderr.strip()[:160]}")


def case_pixels(a, series, env, out):
    ct = os.path.join(series, "pixels")
    s, labels = label_map(a, "pixels", ct, env, out)
    if s is None:
        return
    copy = os.path.join(series, "pixels.nii.gz")
    ref = os.path.join(out, "pixels_nii.nii.gz")
    js = os.path.join(out, "pixels.json")
    r1 = td.run([a.swinrun, copy, ref], env=env)
    r2 = td.run([a.swinrun, ct, os.path.join(out, "pixels_again.nii.gz"), "--json", js], env=env)
    if not td.check("pixels: swinrun on the NIfTI copy and with --json", r1.returncode == 0 and r2.returncode == 0,
                    (r1.stderr + r2.stderr).strip()[-200:]):
        return
    img, rimg = nib.load(os.path.join(out, "pixels.nii.gz")), nib.load(ref)
    agree = td.world_agreement(labels, img.affine, np.asarray(rimg.dataobj), rimg.affine)
    td.check("pixels: labels agree with the NIfTI route on the copy (padding = -1024 HU), >= 99.99 %",
             agree >= 0.9999, f"{100 * agree:.4f} %")
    td.check_statistics("pixels", json.load(open(js))["volumes"][0]["statistics"], copy, labels, img.affine)


def make(series):
    rng = np.random.default_rng(29)
    vol = volume()
    nx, ny, nz = vol.shape
    axial = ms.Geometry((1, 0, 0), (0, 1, 0), 0.9, 0.7, 2.5)
    f = os.path.join(series, "anon")
    ms.write_series(f, axial, vol, rng=rng)
    edit_files(f, anonymise)
    for name in ("nosop", "nouid"):
        f = os.path.join(series, name)
        ms.write_series(f, axial, vol, rng=rng, shuffle=False)
        third = os.path.join(f, sorted(os.listdir(f))[2])
        ds = pydicom.dcmread(third)
        ds.SOPInstanceUID = ""
        if name == "nouid":
            ds.file_meta.MediaStorageSOPInstanceUID = ""
        ds.save_as(third, enforce_file_format=name == "nosop")
    # per-slice rescale (exact on integer HU) and padding outside a circle
    f = os.path.join(series, "pixels")
    os.makedirs(f)
    i, j = np.meshgrid(np.arange(nx), np.arange(ny), indexing="ij")
    outside = (i - (nx - 1) / 2) ** 2 + (j - (ny - 1) / 2) ** 2 > (0.5 * min(nx, ny)) ** 2
    copy = vol.astype(np.float64).copy()
    copy[outside] = -1024
    uids = ms.new_uids()
    slopes, intercepts = (1.0, 0.5, 0.25, 2.0), (-1024.0, -1100.0, -2048.0)
    for k in range(nz):
        a, b = slopes[k % 4], intercepts[k % 3]
        hu = vol[:, :, k].astype(np.float64)
        if a == 2.0:
            hu = np.where(outside, hu, 2 * np.floor(hu / 2))  # even HU: exact at slope 2
            copy[:, :, k] = np.where(outside, -1024, hu)
        ds = ms.make_slice(axial, k, hu.T, uids, k + 1, slope=a, intercept=b)
        stored = np.frombuffer(ds.PixelData, "<u2").reshape(ny, nx).copy()
        stored[outside.T] = PAD
        ds.PixelData = stored.tobytes()
        ds.PixelPaddingValue = PAD
        ds.save_as(os.path.join(f, f"s{k:03d}.dcm"), enforce_file_format=True)
    ms.save_copy(os.path.join(series, "pixels.nii.gz"), axial, copy)


def main():
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("swinrun")
    ap.add_argument("model")
    ap.add_argument("work")
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    series, out = os.path.join(a.work, "series"), os.path.join(a.work, "out")
    os.makedirs(series)
    os.makedirs(out)
    make(series)
    env = dict(os.environ, SWINRUN_MODEL=a.model)
    case_anon(a, series, env, out)
    case_nosop(a, series, env, out)
    case_nouid(a, series, env, out)
    case_pixels(a, series, env, out)
    print("PASS" if td.ok else "FAIL")
    return 0 if td.ok else 1


if __name__ == "__main__":
    sys.exit(main())
