#!/usr/bin/env python3
"""`swinrun info` reports the attention scale a file stores: the dynamo export with float16
weights (f12_w454_flash_dynamo21_fp16w, heads 3, 1, 1, 12 at feature size 12: head dims 4, 24,
48, 8) scales q and k each by a float16 copy of head_dim ** -0.25, as torch decomposes
scaled_dot_product_attention, so the logits' scale is that copy squared (0.499893 for 1/sqrt(4));
a float32 export (f12_c32_ts) stores MONAI's exact 1/sqrt(head dim), reported as 0 in the JSON
and not printed.

    check_info_scale.py SWINRUN TEST_DATA"""
import json
import os
import subprocess
import sys

import numpy as np


def info(swinrun, case_dir, *extra):
    r = subprocess.run([swinrun, "info", os.path.join(case_dir, "model.onnx"), *extra], capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"FAIL: swinrun info exit {r.returncode}: {r.stderr.strip()[-300:]}")
    return r.stdout


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    swinrun, data = sys.argv[1:]
    bad = 0
    half = os.path.join(data, "f12_w454_flash_dynamo21_fp16w")
    got = json.loads(info(swinrun, half, "--json", "-"))["attn_scale"]
    cfg = json.load(open(os.path.join(half, "model.json")))
    dims = [cfg["feature_size"] * 2 ** s // h for s, h in enumerate(cfg["heads"])]
    want = [float(np.float16(d ** -0.25)) ** 2 for d in dims]
    ok = all(abs(g - w) <= 1e-6 * w for g, w in zip(got, want))
    bad += not ok
    print(f"{'ok  ' if ok else 'FAIL'} float16 weights, head dims {dims}: reported {got}, stored {want}")
    text = info(swinrun, half)
    ok = "attn scale" in text and "as stored in the file" in text
    bad += not ok
    print(f"{'ok  ' if ok else 'FAIL'} its text form names the stored scale")
    exact = os.path.join(data, "f12_c32_ts")
    got = json.loads(info(swinrun, exact, "--json", "-"))["attn_scale"]
    ok = got == [0, 0, 0, 0] and "attn scale" not in info(swinrun, exact)
    bad += not ok
    print(f"{'ok  ' if ok else 'FAIL'} float32 export: reported {got}, nothing printed")
    print("PASS" if not bad else f"FAIL: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
