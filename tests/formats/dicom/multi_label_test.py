#!/usr/bin/env python3
"""A multi-label run (each output channel its own sigmoid >= 0.5: overlapping masks) on a DICOM
series: a generated bundle (tools/export/make_bundle.py, five output channels) whose
post-processing says sigmoid and threshold 0.5 on every channel, and whose channel_def names
channel 0 "Tumour core", 1 "Liver", 3 "Whole tumour", run on a generated oblique series and on
its NIfTI twin (the same voxels, written by nibabel):

  - OUT.nii.gz from the series: the 4D uint8 file of one 0/1 volume per channel, equal voxel
    for voxel (at the same world points) to the masks NIfTI input gives, and the masks overlap
    (else the check below proves little);
  - the SEG (dciodvfy: no error; read back by highdicom with segments kept apart): one segment
    per channel with voxels, named from channel_def ("Label 3" where it names none), each
    segment's pixels equal to its channel's mask;
  - the RTSTRUCT: one ROI per such channel, contours that rasterise (even-odd) to its mask,
    no RTROIInterpretedType but for the BTCV organ "Liver" (ORGAN);
  - --seg-type labelmap is refused in one line before any work (a label map holds one segment
    per pixel).

    multi_label_test.py SWINRUN WORKDIR"""
import json
import os
import shutil
import sys

import highdicom as hd
import nibabel as nib
import numpy as np
import pydicom

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools", "export"))
import anon_test  # noqa: E402
import make_bundle  # noqa: E402
import make_series as ms  # noqa: E402
import test_dicom as td  # noqa: E402

CHANNELS = 5
NAMES = {"0": "Tumour core", "1": "Liver", "2": "", "3": "Whole tumour", "4": "Oedema"}


def name_of(c):
    return NAMES[str(c)] or f"Label {c + 1}"


def label_of(name):
    """An ROI's or segment's label (channel + 1) from its name."""
    return next((c + 1 for c in range(CHANNELS) if name_of(c) == name), -1)


def sigmoid_bundle(bundle):
    make_bundle.make(bundle, "btcv", seed=4)
    inf_path = os.path.join(bundle, "configs", "inference.json")
    inf = json.load(open(inf_path))
    for t in inf["postprocessing"]["transforms"]:
        if t["_target_"] == "Activationsd":
            t.pop("softmax"), t.update(sigmoid=True)
        if t["_target_"] == "AsDiscreted":
            t.pop("argmax"), t.update(threshold=0.5)
    json.dump(inf, open(inf_path, "w"))
    meta_path = os.path.join(bundle, "configs", "metadata.json")
    meta = json.load(open(meta_path))
    meta["network_data_format"]["outputs"]["pred"]["channel_def"] = NAMES
    json.dump(meta, open(meta_path, "w"))


def main():
    swinrun, work = sys.argv[1:3]
    shutil.rmtree(work, ignore_errors=True)
    bundle, ct, out = (os.path.join(work, n) for n in ("bundle", "oblique", "out"))
    os.makedirs(out)
    sigmoid_bundle(bundle)
    R = ms.rotation((0.2, 0.1, 1.0), 12.0)
    geo = ms.Geometry(R @ (1, 0, 0), R @ (0, 1, 0), 0.9, 0.7, 2.5)
    vol = anon_test.volume()
    ms.write_series(ct, geo, vol, rng=np.random.default_rng(7))
    twin = os.path.join(work, "twin.nii")
    ms.save_copy(twin, geo, vol)

    nii, twin_out, seg, rt = (os.path.join(out, n) for n in ("masks.nii.gz", "twin_masks.nii.gz", "seg.dcm", "rt.dcm"))
    runs = [td.run([swinrun, ct, nii, "--model", bundle]),
            td.run([swinrun, twin, twin_out, "--model", bundle]),
            td.run([swinrun, ct, seg, "--rtstruct", rt, "--model", bundle])]
    if not td.check("the series to masks.nii.gz and to seg.dcm --rtstruct rt.dcm, its NIfTI twin to NIfTI",
                    all(x.returncode == 0 for x in runs), "".join(x.stderr for x in runs)[-400:]):
        return 1
    img = nib.load(nii)
    masks = np.asarray(img.dataobj)
    s = td.Series(ct)
    td.check("masks.nii.gz: uint8, one 0/1 volume per channel on the series' grid",
             masks.dtype == np.uint8 and masks.shape == (s.cols, s.rows, len(s.sop), CHANNELS) and
             set(np.unique(masks)) <= {0, 1} and np.allclose(img.affine, s.affine, atol=1e-3),
             f"{masks.dtype} {masks.shape}")
    twin_img = nib.load(twin_out)
    twin_masks = np.asarray(twin_img.dataobj)
    same = [td.world_agreement(masks[..., c], img.affine, twin_masks[..., c], twin_img.affine)
            for c in range(CHANNELS)] if twin_masks.shape == masks.shape else [0.0]
    td.check("each channel's mask from the series is the NIfTI twin's", min(same) == 1.0,
             " ".join(f"{x:.5f}" for x in same))
    present = [c for c in range(CHANNELS) if masks[..., c].any()]
    overlap = int(np.sum(masks.sum(axis=3) >= 2))
    td.check(f"channels with voxels {present} (at least two) and voxels in two masks or more ({overlap})",
             len(present) >= 2 and overlap > 0)

    errs, warns = td.dciodvfy_errors(seg)
    td.check("SEG dciodvfy: no error", not errs, "; ".join(errs[:3]) + f" ({len(warns)} warnings)")
    ds = pydicom.dcmread(seg)
    segments = [(int(x.SegmentNumber), x.SegmentLabel) for x in ds.SegmentSequence]
    td.check("SEG: one segment per channel with voxels, named from channel_def",
             [n for _, n in segments] == [name_of(c) for c in present], f"{segments}")
    arr = hd.seg.segread(seg).get_pixels_by_source_instance(
        source_sop_instance_uids=s.sop, segment_numbers=[n for n, _ in segments], combine_segments=False,
        assert_missing_frames_are_empty=True)  # (nz, rows, cols, segments)
    exact = all(np.array_equal(arr[..., i].transpose(2, 1, 0), masks[..., label_of(name) - 1])
                for i, (_, name) in enumerate(segments))
    td.check("highdicom reads each segment back equal to its channel's mask (overlaps kept)", exact)
    td.check("SEG says its segments overlap (SegmentsOverlap YES)", getattr(ds, "SegmentsOverlap", "") == "YES",
             str(getattr(ds, "SegmentsOverlap", "")))
    td.check_rtstruct("multi-label", rt, s, None, masks=masks, label_of=label_of)

    r = td.run([swinrun, ct, os.path.join(out, "lm.dcm"), "--model", bundle, "--seg-type", "labelmap"])
    lines = r.stderr.strip().splitlines()
    td.check("--seg-type labelmap refused in one line, exit 2, nothing written",
             r.returncode == 2 and len(lines) == 1 and "overlap" in r.stderr and
             not os.path.exists(os.path.join(out, "lm.dcm")), r.stderr.strip()[-200:])
    print("PASS" if td.ok else "FAIL")
    return 0 if td.ok else 1


if __name__ == "__main__":
    sys.exit(main())
