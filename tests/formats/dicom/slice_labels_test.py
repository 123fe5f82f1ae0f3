#!/usr/bin/env python3
"""The SEG and RT Structure Set of a series with missing slices hold the labels on its slices,
not those only on the planes interpolated between them.

slice_labels_driver puts labels through the DICOM format's outputs on make_series.py's
"missing" series (slices 6, 14, 15 left out): label 1 on every plane, label 6 on the first
slice's plane, label 3 only on the first interpolated plane. The test derives the grid from the
files itself (test_dicom.Series) and checks, with pydicom, highdicom and dciodvfy:
  - the driver's slice planes and interpolated plane are the test's;
  - the SEG's segments and the RTSTRUCT's ROIs are labels 1 and 6 (no segment without a frame,
    no ROI without a contour), and both give the slices' labels back exactly;
  - with label 3 alone (only between the slices): nothing written, and no file left behind.

    slice_labels_test.py DRIVER SERIES_DIR WORKDIR"""
import json
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_dicom as td  # noqa: E402


def expected_grid(s, between):
    """The driver's labels on the grid (cols, rows, planes), drawn here again."""
    g = np.zeros((s.cols, s.rows, s.nz), np.uint16)
    g[2:8, 2:8, :] = 1
    g[2:6, 10:14, s.plane_of[0]] = 6
    g[10:14, 10:14, between] = 3
    return g


def main():
    driver, series, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    s = td.Series(series)
    between = min(set(range(s.nz)) - set(s.plane_of.tolist()))
    seg, rt = os.path.join(work, "seg.dcm"), os.path.join(work, "rt.dcm")
    r = td.run([driver, series, seg, rt, "organs"])
    if not td.check("driver: organs written", r.returncode == 0, r.stderr.strip()[-200:]):
        sys.exit(1)
    got = json.loads(r.stdout)
    td.check("the reader's slice planes and first interpolated plane are the test's",
             got["slice_planes"] == s.plane_of.tolist() and got["between"] == between,
             f"planes {got['slice_planes']}, between {got['between']}")
    on_slices = expected_grid(s, between)[:, :, s.plane_of]
    td.check("label 3 lies only between the slices", 3 not in on_slices and got["dicom_written"])
    td.check_seg("organs", seg, s, on_slices)
    td.check_rtstruct("organs", rt, s, on_slices)

    seg2, rt2 = os.path.join(work, "seg_between.dcm"), os.path.join(work, "rt_between.dcm")
    r = td.run([driver, series, seg2, rt2, "between"])
    written = json.loads(r.stdout or "{}").get("dicom_written", True)
    td.check("only between the slices: nothing written, no file left",
             r.returncode == 0 and not written and sorted(os.listdir(work)) == ["rt.dcm", "seg.dcm"],
             (r.stderr.strip() + " " + " ".join(sorted(os.listdir(work))))[-200:])
    sys.exit(0 if td.ok else 1)


if __name__ == "__main__":
    main()
