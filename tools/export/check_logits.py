#!/usr/bin/env python3
"""Agreement criterion for end-to-end tests: check_logits.py GOT.npy REF.npy

Pass iff
  * max|got - ref| <= 1e-3 * max(1, max|ref|), and
  * argmax over channels (axis 1 of N,C,D,H,W) is equal on every voxel whose two largest
    reference logits differ by more than 1e-3.
NaN/Inf anywhere in GOT (or REF) fails.
Exit codes: 0 pass, 1 fail, 2 bad input (missing/unreadable file, shape mismatch).
Options: --atol-rel R (default 1e-3), --margin M (default 1e-3),
  --min-label-agreement F: instead of the label rule above, pass iff the argmax is equal
  on at least the fraction F of all voxels (the half-precision criterion: 0.995).
"""
from __future__ import annotations

import sys

import numpy as np


def compare(got: np.ndarray, ref: np.ndarray, rel: float = 1e-3, margin: float = 1e-3,
            min_agreement: float | None = None):
    """Return (ok, summary_line)."""
    got = got.astype(np.float64, copy=False)
    ref = ref.astype(np.float64, copy=False)
    if not np.isfinite(ref).all():
        return False, f"FAIL: reference has {int((~np.isfinite(ref)).sum())} non-finite values"
    nonfinite = int((~np.isfinite(got)).sum())
    maxref = float(np.abs(ref).max()) if ref.size else 0.0
    bound = rel * max(1.0, maxref)
    if nonfinite:
        return False, (f"FAIL: got has {nonfinite} non-finite values (NaN/Inf); bound {bound:.3g}")
    diff = float(np.abs(got - ref).max()) if ref.size else 0.0
    if ref.ndim >= 2 and ref.shape[1] >= 2:
        part = -np.partition(-ref, 1, axis=1)  # top-2 along channels
        top2_gap = part[:, 0] - part[:, 1]
        sel = top2_gap > margin
        lab_ref = ref.argmax(axis=1)
        lab_got = got.argmax(axis=1)
        compared = int(sel.sum())
        mism = int(((lab_ref != lab_got) & sel).sum())
        agreement = float((lab_ref == lab_got).mean())
    else:
        compared, mism, agreement = 0, 0, 1.0
    labels_ok = mism == 0 if min_agreement is None else agreement >= min_agreement
    ok = diff <= bound and labels_ok
    line = (f"{'PASS' if ok else 'FAIL'}: max|got-ref| {diff:.3g} bound {bound:.3g} (max|ref| {maxref:.3g}); "
            f"labels compared {compared} of {ref.size // max(1, ref.shape[1] if ref.ndim >= 2 else 1)} voxels, "
            f"mismatches {mism}; same label on {100 * agreement:.3f} % of all voxels")
    if min_agreement is not None:
        line += f" (need >= {100 * min_agreement:.3g} %)"
    return ok, line


def main(argv=None) -> int:
    import argparse
    p = argparse.ArgumentParser(description="compare logits against a reference")
    p.add_argument("got")
    p.add_argument("ref")
    p.add_argument("--atol-rel", type=float, default=1e-3)
    p.add_argument("--margin", type=float, default=1e-3)
    p.add_argument("--min-label-agreement", type=float, default=None)
    try:
        a = p.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    arrs = []
    for f in (a.got, a.ref):
        try:
            arrs.append(np.load(f, allow_pickle=False))
        except Exception as e:
            print(f"check_logits: error: cannot read {f}: {' '.join(str(e).split())}", file=sys.stderr)
            return 2
    got, ref = arrs
    if got.shape != ref.shape:
        print(f"check_logits: error: shape mismatch: got {got.shape} vs ref {ref.shape}", file=sys.stderr)
        return 2
    if not (np.issubdtype(got.dtype, np.floating) and np.issubdtype(ref.dtype, np.floating)):
        print(f"check_logits: error: expected float arrays, got {got.dtype} and {ref.dtype}", file=sys.stderr)
        return 2
    ok, line = compare(got, ref, a.atol_rel, a.margin, a.min_label_agreement)
    print(line)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
