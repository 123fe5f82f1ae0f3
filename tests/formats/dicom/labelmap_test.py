#!/usr/bin/env python3
"""The label-map SEG (`--seg-type labelmap`: DICOM 2024c, Supplement 243) on a generated axial
series (make_series.py's helpers), against pydicom, highdicom and the same run's NIfTI label
map and binary SEG (issue 29, part D). Debian's dciodvfy predates the label-map IOD: it
checks the binary SEG only.

  - Label Map Segmentation Storage (1.2.840.10008.5.1.4.1.1.66.7), SegmentationType LABELMAP,
    8-bit MONOCHROME2, segment 0 Background then one segment per label present;
  - one frame per slice with a label, each on its source CT slice's plane and referencing
    it; its pixels (pydicom) are the segment numbers of the NIfTI label map's slice;
  - highdicom (segread) reads it back equal to the NIfTI label map and to the binary SEG;
  - with a label missing (the test model with label 3's bias lowered): segments 1..12 for
    labels 1, 2, 4, ..., 13, pixels and highdicom's reading as above;
  - --seg-type of another name: exit 2, one line;
  - --bench: seg_write_bench's 300-label map (bench/dicom/seg_write_bench.c) on the same
    series: a 16-bit label-map SEG, read back by highdicom equal to the label map recomputed
    here, as is the binary SEG of the same 300 segments.

    labelmap_test.py SWINRUN MODEL WORKDIR [--bench SEG_WRITE_BENCH]"""
import os
import shutil
import sys

import nibabel as nib
import numpy as np
import pydicom

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import anon_test  # noqa: E402
import make_series as ms  # noqa: E402
import test_dicom as td  # noqa: E402

LABELMAP_STORAGE = "1.2.840.10008.5.1.4.1.1.66.7"


def bench_labels(nx, ny, nz, nlabels):
    """seg_write_bench's label map, recomputed: 13 ellipsoids, then one voxel per label."""
    lab = np.zeros((nx, ny, nz), np.uint16)
    i, j, k = np.meshgrid(np.arange(nx), np.arange(ny), np.arange(nz), indexing="ij")
    for l in range(1, 14):
        cx, cy = ((l - 1) % 4 + 0.5) / 4 * nx, ((l - 1) // 4 + 0.5) / 4 * ny
        r = (0.25 if l == 6 else 0.125) * min(nx, ny) / 2
        span = (0.2 + 0.4 * (l % 5) / 4) * nz
        lab[((i - cx) / r) ** 2 + ((j - cy) / r) ** 2 + ((k - 0.5 * nz) / (span / 2)) ** 2 <= 1] = l
    for l in range(14, nlabels + 1):  # voxel (i, j, k) at flat index i + nx * (j + ny * k)
        lab[np.unravel_index(l * 7919 % lab.size, lab.shape, order="F")] = l
    return lab


def check_16bit(bench, ct, out):
    import highdicom as hd
    d = os.path.join(out, "bench300")
    os.makedirs(d)
    r = td.run([bench, ct, d, "1", "300"])
    if not td.check("seg_write_bench: 300 labels, both forms", r.returncode == 0, r.stderr.strip()[-200:]):
        return
    s = td.Series(ct)
    want = bench_labels(s.cols, s.rows, len(s.sop), 300)
    ds = pydicom.dcmread(os.path.join(d, "labelmap.dcm"))
    td.check("300 segments: a 16-bit label map, 301 segments with the background",
             ds.BitsAllocated == 16 and ds.BitsStored == 16 and ds.HighBit == 15 and len(ds.SegmentSequence) == 301)
    for form in ("labelmap", "binary"):
        seg = hd.seg.segread(os.path.join(d, form + ".dcm"))
        arr = seg.get_pixels_by_source_instance(source_sop_instance_uids=s.sop, combine_segments=True,
                                                relabel=False, assert_missing_frames_are_empty=True)
        back = arr.transpose(2, 1, 0)  # segment n is label n here
        td.check(f"300 segments: highdicom reads the {form} SEG back = the label map", np.array_equal(back, want),
                 f"{int(np.sum(back != want))} voxels differ")


def without_label(model, label, path):
    """The test model with one label's output bias so low that it never wins."""
    import onnx
    from onnx import numpy_helper
    m = onnx.load(model)
    for init in m.graph.initializer:
        if init.name == "out.conv.conv.bias":
            b = numpy_helper.to_array(init).copy()
            b[label] = -1e6
            init.CopyFrom(numpy_helper.from_array(b, init.name))
    onnx.save(m, path)
    return path


def check_labelmap(what, ct, nii, lm, binary, missing=None):
    s = td.Series(ct)
    labels = np.asarray(nib.load(nii).dataobj)
    present = sorted(int(v) for v in np.unique(labels) if v)
    td.check(f"{what}the model finds organs", len(present) > 0 and missing not in present, f"labels {present}")
    ds = pydicom.dcmread(lm)
    td.check(f"{what}Label Map Segmentation Storage, LABELMAP, 8-bit MONOCHROME2, file meta alike",
             ds.SOPClassUID == LABELMAP_STORAGE and ds.file_meta.MediaStorageSOPClassUID == LABELMAP_STORAGE and
             ds.SegmentationType == "LABELMAP" and ds.BitsAllocated == 8 and ds.BitsStored == 8 and
             ds.PhotometricInterpretation == "MONOCHROME2" and ds.PixelRepresentation == 0)
    segs = [(int(x.SegmentNumber), x.SegmentLabel) for x in ds.SegmentSequence]
    td.check(f"{what}segment 0 Background, then one per label present, numbered 1..n",
             segs[0] == (0, "Background") and [n for n, _ in segs[1:]] == list(range(1, len(present) + 1)) and
             [td.BTCV.index(l) + 1 for _, l in segs[1:]] == present, str(segs[:3]))
    number_of = {td.BTCV.index(l) + 1: n for n, l in segs[1:]}
    with_labels = [k for k in range(labels.shape[2]) if labels[:, :, k].any()]
    frames = ds.PerFrameFunctionalGroupsSequence
    ks = [s.k_of.get(f.DerivationImageSequence[0].SourceImageSequence[0].ReferencedSOPInstanceUID) for f in frames]
    td.check(f"{what}one frame per slice with a label, each referencing its slice", ks == with_labels,
             f"{len(frames)} frames, {len(with_labels)} slices with labels")
    planes = all(np.abs(np.array(f.PlanePositionSequence[0].ImagePositionPatient, float) - s.pos[k]).max() < 1e-4
                 for f, k in zip(frames, ks) if k is not None)
    td.check(f"{what}every frame on its slice's plane; one dimension (ImagePositionPatient)",
             planes and len(ds.DimensionIndexSequence) == 1 and
             ds.DimensionIndexSequence[0].DimensionIndexPointer == 0x00200032)
    lut = np.zeros(labels.max() + 1, np.int64)
    for lab, n in number_of.items():
        lut[lab] = n
    px = ds.pixel_array.reshape(len(frames), s.rows, s.cols)
    exact = all(np.array_equal(px[f], lut[labels[:, :, k].T]) for f, k in enumerate(ks) if k is not None)
    td.check(f"{what}pydicom: each frame's pixels are the segment numbers of its slice", exact)
    back_lm, back_bin = anon_test.read_seg(lm, s), anon_test.read_seg(binary, s)
    td.check(f"{what}highdicom reads the label-map SEG back = the NIfTI label map", np.array_equal(back_lm, labels),
             f"{int(np.sum(back_lm != labels))} voxels differ")
    td.check(f"{what}... = the binary SEG read back", np.array_equal(back_lm, back_bin))
    errs, warns = td.dciodvfy_errors(binary)
    td.check(f"{what}binary SEG dciodvfy: no error", not errs, "; ".join(errs[:3]))


def main():
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("swinrun")
    ap.add_argument("model")
    ap.add_argument("work")
    ap.add_argument("--bench")
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    ct, out = os.path.join(a.work, "axial"), os.path.join(a.work, "out")
    os.makedirs(out)
    ms.write_series(ct, ms.Geometry((1, 0, 0), (0, 1, 0), 0.9, 0.7, 2.5), anon_test.volume(),
                    rng=np.random.default_rng(243))
    env = dict(os.environ, SWINRUN_MODEL=a.model)
    nii, lm, binary = (os.path.join(out, n) for n in ("labels.nii.gz", "lm.dcm", "bin.dcm"))
    r = [td.run([a.swinrun, ct, o, *extra], env=env)
         for o, extra in ((nii, []), (lm, ["--seg-type", "labelmap"]), (binary, ["--seg-type", "binary"]))]
    if not td.check("swinrun CT_DIR out.nii.gz, lm.dcm --seg-type labelmap, bin.dcm --seg-type binary",
                    all(x.returncode == 0 for x in r), "".join(x.stderr for x in r).strip()[-300:]):
        return 1
    check_labelmap("", ct, nii, lm, binary)
    without3 = without_label(a.model, 3, os.path.join(a.work, "without3.onnx"))
    nii3, lm3, bin3 = (os.path.join(out, n) for n in ("labels3.nii.gz", "lm3.dcm", "bin3.dcm"))
    r = [td.run([a.swinrun, ct, o, *extra, "--model", without3], env=env)
         for o, extra in ((nii3, []), (lm3, ["--seg-type", "labelmap"]), (bin3, []))]
    if td.check("without label 3: the three outputs", all(x.returncode == 0 for x in r),
                "".join(x.stderr for x in r).strip()[-300:]):
        check_labelmap("without label 3: ", ct, nii3, lm3, bin3, missing=3)
    before = set(os.listdir(out))
    r = td.run([a.swinrun, ct, os.path.join(out, "x.dcm"), "--seg-type", "bitmap"], env=env)
    td.check("--seg-type bitmap: exit 2, one line, nothing written",
             r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and set(os.listdir(out)) == before,
             r.stderr.strip()[:160])
    if a.bench:
        check_16bit(a.bench, ct, out)
    print("PASS" if td.ok else "FAIL")
    return 0 if td.ok else 1


if __name__ == "__main__":
    sys.exit(main())
