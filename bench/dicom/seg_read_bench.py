#!/usr/bin/env python3
"""highdicom reading seg_write_bench's two SEGs back (bench/results/dicom_io.md): the time
of segread plus the label map on the CT's slices, and whether it equals the bench's label
map (recomputed by tests/formats/dicom/labelmap_test.py's bench_labels).

    seg_read_bench.py SERIES_DIR OUT_DIR [LABELS]"""
import os
import sys
import time

import highdicom as hd
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "formats", "dicom"))
import test_dicom  # noqa: E402
from labelmap_test import bench_labels  # noqa: E402


def main():
    ct, out = sys.argv[1], sys.argv[2]
    nlabels = int(sys.argv[3]) if len(sys.argv) > 3 else 13
    s = test_dicom.Series(ct)
    want = bench_labels(s.cols, s.rows, len(s.sop), nlabels)
    for form in ("binary", "labelmap"):
        t = time.time()
        seg = hd.seg.segread(os.path.join(out, form + ".dcm"))
        arr = seg.get_pixels_by_source_instance(source_sop_instance_uids=s.sop, combine_segments=True, relabel=False)
        dt = time.time() - t
        same = np.array_equal(arr.transpose(2, 1, 0), want)
        print(f"{form:8s} {seg.NumberOfFrames} frames, highdicom segread + label map {dt:.2f} s, equal: {same}")


if __name__ == "__main__":
    main()
