#!/usr/bin/env python3
"""Run ONNX Runtime (CPUExecutionProvider) on a model and save the logits.

  ort_reference.py MODEL.onnx --input input.npy --out logits.npy
  ort_reference.py MODEL.onnx --shape 1 1 64 64 64 --seed 0 --save-input input.npy --out logits.npy

The generated input is deterministic (numpy default_rng(seed)), float32 in [0,1], CT-like:
a soft body ellipsoid, a few smooth Gaussian blobs of different intensities, and mild noise.
Exit codes: 0 ok, 1 ORT failed to load or run the model, 2 bad arguments.
"""
from __future__ import annotations

import argparse
import os
import sys
import time


def die(msg: str, code: int = 2):
    print(f"ort_reference: error: {msg}", file=sys.stderr)
    sys.exit(code)


def make_input(shape, seed: int):
    import numpy as np
    if len(shape) != 5:
        die(f"--shape needs 5 integers (N C D H W), got {shape}")
    n, c, D, H, W = shape
    rng = np.random.default_rng(seed)
    z, y, x = np.meshgrid(np.linspace(-1, 1, D, dtype=np.float32), np.linspace(-1, 1, H, dtype=np.float32),
                          np.linspace(-1, 1, W, dtype=np.float32), indexing="ij")
    out = np.empty((n, c, D, H, W), dtype=np.float32)
    for b in range(n):
        for ch in range(c):
            # body: soft ellipsoid at ~0.3 (soft tissue), background 0
            r = (z / 0.9) ** 2 + (y / 0.8) ** 2 + (x / 0.85) ** 2
            v = 0.3 / (1.0 + np.exp((r - 1.0) * 12.0))
            for _ in range(8):  # organs / bones as smooth blobs
                cz, cy, cx = rng.uniform(-0.6, 0.6, 3)
                s = rng.uniform(0.08, 0.3, 3)
                amp = rng.uniform(-0.2, 0.6)
                v = v + amp * np.exp(-(((z - cz) / s[0]) ** 2 + ((y - cy) / s[1]) ** 2 + ((x - cx) / s[2]) ** 2))
            v = v + rng.normal(0.0, 0.03, v.shape).astype(np.float32)
            out[b, ch] = np.clip(v, 0.0, 1.0)
    return out


def input_is_float16(model: str) -> bool:
    """True for a float16 graph (its input is float16)."""
    import onnx
    m = onnx.load(model, load_external_data=False)
    inits = {t.name for t in m.graph.initializer}
    ins = [i for i in m.graph.input if i.name not in inits]
    return bool(ins) and ins[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT16


def run(model: str, x, threads: int = 0):
    """Logits of ORT's CPU provider; a float16 graph gets x in float16 (exactly: the caller
    passes float16-representable values) and its logits are widened to float32."""
    import numpy as np
    import onnxruntime as ort
    so = ort.SessionOptions()
    if threads:
        so.intra_op_num_threads = threads
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    inp = sess.get_inputs()[0]
    if inp.type == "tensor(float16)":
        x = x.astype(np.float16)
    return np.asarray(sess.run(None, {inp.name: x})[0], dtype=np.float32)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="ONNX Runtime reference logits")
    p.add_argument("model")
    p.add_argument("--input", help="input .npy (float32, N C D H W)")
    p.add_argument("--shape", type=int, nargs="+", help="generate an input of this shape (N C D H W)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--save-input", help="where to save the generated input .npy")
    p.add_argument("--out", default="logits.npy")
    p.add_argument("--threads", type=int, default=0, help="ORT intra-op threads (0 = ORT default)")
    a = p.parse_args(argv)
    import numpy as np
    if not os.path.isfile(a.model):
        die(f"{a.model}: no such file")
    if (a.input is None) == (a.shape is None):
        die("give exactly one of --input FILE or --shape N C D H W")
    if a.input:
        if not os.path.isfile(a.input):
            die(f"{a.input}: no such file")
        x = np.load(a.input)
        if x.ndim != 5:
            die(f"{a.input}: expected a 5-D array (N C D H W), got shape {x.shape}")
        x = np.ascontiguousarray(x, dtype=np.float32)
    else:
        x = make_input(a.shape, a.seed)
        if input_is_float16(a.model):   # the same values for swinrun's float32 input and ORT's float16 one
            x = x.astype(np.float16).astype(np.float32)
        if a.save_input:
            os.makedirs(os.path.dirname(os.path.abspath(a.save_input)), exist_ok=True)
            np.save(a.save_input, x)
    t0 = time.time()
    try:
        y = run(a.model, x, a.threads)
    except Exception as e:
        msg = " ".join(str(e).split())
        print(f"ort_reference: ORT failed on {a.model} with input {list(x.shape)}: {msg}", file=sys.stderr)
        return 1
    dt = time.time() - t0
    y = np.ascontiguousarray(y, dtype=np.float32)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    np.save(a.out, y)
    print(f"ort_reference: {a.model} input {list(x.shape)} -> {a.out} {list(y.shape)} in {dt:.1f}s "
          f"(max|y| {float(np.abs(y).max()):.3g}, finite {bool(np.isfinite(y).all())})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
