#!/usr/bin/env python3
"""Streaming sliding windows (probe sliding) against MONAI's sliding_window_inference with
the same fake model: averaged logits on volumes larger, smaller and odd-sized relative to
the window, constant and gaussian blending, several overlaps. Fails on any voxel the
stream never finalised, on NaN, and on |difference| > 2e-5.

    test_sliding.py PROBE WORKDIR"""
import os
import subprocess
import sys

import numpy as np
import torch
from monai.inferers import sliding_window_inference

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_model import make_fake  # noqa: E402

CASES = [  # volume shape, roi, overlap, mode, channels
    ((70, 50, 40), (32, 32, 32), 0.5, "constant", 3),
    ((70, 50, 40), (32, 32, 32), 0.5, "gaussian", 3),
    ((20, 45, 31), (32, 32, 32), 0.5, "gaussian", 2),   # smaller than the roi on two axes: padding
    ((17, 19, 23), (32, 32, 32), 0.25, "constant", 2),  # smaller everywhere
    ((33, 97, 64), (32, 64, 32), 0.3, "gaussian", 4),   # non-cubic roi, odd sizes
    ((64, 64, 100), (32, 32, 32), 0.0, "constant", 2),  # no overlap, slab along the last axis
    ((40, 36, 90), (32, 32, 32), 0.5, "gaussian", 3),   # slab along the last axis, runs across the ring's wrap
    ((24, 20, 230), (16, 16, 96), 0.0, "constant", 2),  # runs along the last axis longer than a tile
    ((41, 37, 29), (32, 32, 32), 0.75, "gaussian", 2),
]


def main():
    probe, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(1)
    ok = True
    for n, (shape, roi, overlap, mode, ch) in enumerate(CASES):
        vol = rng.uniform(0, 1, size=shape).astype(np.float32)
        vin, vout = os.path.join(work, f"sw{n}_in.npy"), os.path.join(work, f"sw{n}_out.npy")
        np.save(vin, vol)
        r = subprocess.run([probe, "sliding", vin, vout, *map(str, roi), str(overlap), mode, str(ch)],
                           capture_output=True, text=True)
        if r.returncode:
            print(f"case {n}: probe failed: {r.stderr.strip()}")
            ok = False
            continue
        got = np.load(vout)
        with torch.no_grad():
            ref = sliding_window_inference(torch.from_numpy(vol)[None, None], roi, 1, make_fake(ch),
                                           overlap=overlap, mode=mode)[0].numpy()
        diff = np.abs(got.astype(np.float64) - ref)
        worst = float(np.max(diff)) if np.all(np.isfinite(diff)) else float("nan")
        good = got.shape == ref.shape and np.all(got > -1e29) and worst <= 2e-5  # NaN fails
        print(f"case {n}: {shape} roi {roi} overlap {overlap} {mode}: {r.stdout.strip()}, max |diff| {worst:.3g} "
              f"{'ok' if good else 'FAIL'}")
        ok &= bool(good)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
