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
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from weights_checks import check, info, run, summary  # noqa: E402


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    swinrun, data = sys.argv[1:]
    half = os.path.join(data, "f12_w454_flash_dynamo21_fp16w")
    got = info(swinrun, os.path.join(half, "model.onnx")).get("attn_scale")
    cfg = json.load(open(os.path.join(half, "model.json")))
    dims = [cfg["feature_size"] * 2 ** s // h for s, h in enumerate(cfg["heads"])]
    want = [float(np.float16(d ** -0.25)) ** 2 for d in dims]
    check(f"float16 weights, head dims {dims}: the stored scales {want}",
          got is not None and all(abs(g - w) <= 1e-6 * w for g, w in zip(got, want)), f"reported {got}")
    text = run(swinrun, ["info", os.path.join(half, "model.onnx")]).stdout
    line = next((ln for ln in text.splitlines() if ln.startswith("attn scale")), "no attn scale line")
    check("its text form names the stored scale", line.endswith("as stored in the file"), line)
    exact = os.path.join(data, "f12_c32_ts", "model.onnx")
    got = info(swinrun, exact).get("attn_scale")
    text = run(swinrun, ["info", exact]).stdout
    check("float32 export: 0 reported, nothing printed", got == [0, 0, 0, 0] and "attn scale" not in text, f"reported {got}")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
