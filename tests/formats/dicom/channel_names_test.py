#!/usr/bin/env python3
"""A MONAI bundle's channel_def names the segments of the DICOM outputs: a generated bundle
(tools/export/make_bundle.py, five output channels, so not the BTCV table's 14) whose
metadata.json names channel 1 "Spleen", 2 "IVC" (as MONAI's BTCV bundle spells the inferior
vena cava), 3 a name of its own with a backslash and a non-ASCII letter, 4 nothing (""), run on
a generated axial series:

  - `swinrun info` prints the names, `info --json` gives them as channel_names;
  - each segment of the SEG (pydicom) and each ROI of the RT Structure Set has the name and
    code of its label (the label map of the same run as NIfTI says which labels are present):
    1 Spleen (SNOMED CT 78961009), 2 Inferior vena cava (64131007), 3 the name with '?' for
    what LO cannot hold, as Tissue (85756007), 4 "Label 4", as Tissue;
  - --classes FILE still wins over the bundle's names.

    channel_names_test.py SWINRUN WORKDIR"""
import json
import os
import shutil
import subprocess
import sys

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

NAMES = {"0": "background", "1": "Spleen", "2": "IVC", "3": "cyst \\ kyste \u00e9", "4": ""}
EXPECT = {1: ("Spleen", "78961009"), 2: ("Inferior vena cava", "64131007"), 3: ("cyst ? kyste ??", "85756007"),
          4: ("Label 4", "85756007")}


def main():
    swinrun, work = sys.argv[1:3]
    shutil.rmtree(work, ignore_errors=True)
    bundle, ct, out = (os.path.join(work, n) for n in ("bundle", "axial", "out"))
    os.makedirs(out)
    make_bundle.make(bundle, "btcv", seed=1)
    meta_path = os.path.join(bundle, "configs", "metadata.json")
    meta = json.load(open(meta_path))
    meta["network_data_format"]["outputs"]["pred"]["channel_def"] = NAMES
    json.dump(meta, open(meta_path, "w"))
    ms.write_series(ct, ms.Geometry((1, 0, 0), (0, 1, 0), 0.9, 0.7, 2.5), anon_test.volume(),
                    rng=np.random.default_rng(5))

    r = td.run([swinrun, "info", bundle])
    td.check("info prints the channel names", "channels     0 background, 1 Spleen, 2 IVC, 3 cyst \\ kyste \u00e9, 4 \n"
             in r.stdout, r.stdout[-400:])
    r = td.run([swinrun, "info", bundle, "--json", "-"])
    td.check("info --json channel_names", r.returncode == 0 and json.loads(r.stdout)["channel_names"] ==
             "\n".join(NAMES[str(c)] for c in range(5)), r.stdout[-300:])

    nii, seg, rt = (os.path.join(out, n) for n in ("labels.nii.gz", "seg.dcm", "rt.dcm"))
    runs = [td.run([swinrun, ct, nii, "--model", bundle]),
            td.run([swinrun, ct, seg, "--rtstruct", rt, "--model", bundle])]
    if not td.check("swinrun CT_DIR labels.nii.gz and seg.dcm --rtstruct rt.dcm with the bundle",
                    all(x.returncode == 0 for x in runs), "".join(x.stderr for x in runs)[-300:]):
        return 1
    present = sorted(int(v) for v in np.unique(np.asarray(nib.load(nii).dataobj)) if v > 0)
    td.check(f"labels present: {present} (at least two, else the names prove little)", len(present) >= 2)
    want = [EXPECT[label] for label in present]
    ds = pydicom.dcmread(seg)
    got = [(s.SegmentLabel, s.SegmentedPropertyTypeCodeSequence[0].CodeValue) for s in ds.SegmentSequence]
    td.check("SEG: each segment's name and code from channel_def", got == want, f"{got} vs {want}")
    rs = pydicom.dcmread(rt)
    rois = [x.ROIName for x in rs.StructureSetROISequence]
    td.check("RTSTRUCT: each ROI's name from channel_def", rois == [w[0] for w in want], f"{rois}")

    classes = os.path.join(work, "classes.tsv")
    with open(classes, "w") as f:
        f.write("".join(f"{c}\tMine {c}\t85756007\tSCT\tTissue\t1,2,3\n" for c in range(1, 5)))
    seg2 = os.path.join(out, "seg_classes.dcm")
    r = td.run([swinrun, ct, seg2, "--model", bundle, "--classes", classes])
    labels = [s.SegmentLabel for s in pydicom.dcmread(seg2).SegmentSequence] if r.returncode == 0 else r.stderr
    td.check("--classes wins over channel_def", labels == [f"Mine {c}" for c in present], f"{labels}")
    print("PASS" if td.ok else "FAIL")
    return 0 if td.ok else 1


if __name__ == "__main__":
    sys.exit(main())
