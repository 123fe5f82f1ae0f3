#!/usr/bin/env python3
"""Summarise a SwinUNETR ONNX file: inputs/outputs, op histogram, initializers, and the
patch-merging order read from the graph (the 8-way Concat fed by stride-2 Slices).

  onnx_summary.py MODEL.onnx [--ops]

Merge order is printed per downsample as the list of (D,H,W) offsets and classified as
v15 (MONAI >= 1.5 'merging'), pre15 (MONAI 0.9-1.4 'merging', duplicated offsets) or v2 ('mergingv2').
Exit 2 if the file cannot be read.
"""
from __future__ import annotations

import collections
import os
import sys

ORDERS = {
    "v15": [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 0), (1, 0, 1), (0, 1, 1), (1, 1, 1)],
    "pre15": [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 0, 1), (0, 1, 0), (0, 0, 1), (1, 1, 1)],
    "v2": [(a, b, c) for a in (0, 1) for b in (0, 1) for c in (0, 1)],
}


def merge_orders(model):
    """Return [(concat_name, [(o1,o2,o3)...] or None)] for 8-input Concats fed by Slice chains."""
    import numpy as np
    from onnx import numpy_helper
    g = model.graph
    prod = {o: n for n in g.node for o in n.output}
    inits = {i.name: i for i in g.initializer}

    def const(name):
        if name in inits:
            return numpy_helper.to_array(inits[name])
        n = prod.get(name)
        if n is not None and n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value":
                    return numpy_helper.to_array(a.t)
                if a.name in ("value_int", "value_ints"):
                    return np.array(a.i if a.name == "value_int" else list(a.ints))
        return None

    res = []
    for n in g.node:
        if n.op_type != "Concat" or len(n.input) != 8:
            continue
        offs, srcs = [], set()
        for x in n.input:
            cur = prod.get(x)
            start = {1: 0, 2: 0, 3: 0}
            ok = False
            while cur is not None and cur.op_type == "Slice":
                starts, ends = const(cur.input[1]), const(cur.input[2])
                axes = const(cur.input[3]) if len(cur.input) > 3 and cur.input[3] else None
                steps = const(cur.input[4]) if len(cur.input) > 4 and cur.input[4] else None
                if starts is None:
                    break
                axes = list(range(len(starts))) if axes is None else [int(a) for a in np.ravel(axes)]
                steps = [1] * len(axes) if steps is None else [int(s) for s in np.ravel(steps)]
                for a, s, st in zip(axes, np.ravel(starts), steps):
                    a = a % 5
                    if a in start and st == 2:
                        start[a] = int(s)
                        ok = True
                cur = prod.get(cur.input[0])
            if not ok:
                offs = None
                break
            srcs.add(cur.output[0] if cur is not None else "?")
            offs.append((start[1], start[2], start[3]))
        if offs is not None and len(srcs) == 1:
            res.append((n.name or n.output[0], offs))
    return res


def classify(offs):
    for k, v in ORDERS.items():
        if offs == v:
            return k
    return "unknown"


def main(argv=None) -> int:
    import argparse
    p = argparse.ArgumentParser(description="summarise a SwinUNETR ONNX model")
    p.add_argument("model")
    p.add_argument("--ops", action="store_true", help="print the full op histogram")
    a = p.parse_args(argv)
    import onnx
    if not os.path.isfile(a.model):
        print(f"onnx_summary: error: {a.model}: no such file", file=sys.stderr)
        return 2
    try:
        m = onnx.load(a.model, load_external_data=False)
    except Exception as e:
        print(f"onnx_summary: error: cannot read {a.model}: {e}", file=sys.stderr)
        return 2
    g = m.graph

    def dims(vi):
        return [d.dim_param or d.dim_value for d in vi.type.tensor_type.shape.dim]
    opsets = ", ".join("%s:%d" % (o.domain or "ai.onnx", o.version) for o in m.opset_import)
    print(f"{a.model}: producer {m.producer_name} {m.producer_version}, opsets {opsets}, {len(g.node)} nodes")
    for vi in g.input:
        print(f"  input  {vi.name} {dims(vi)}")
    for vi in g.output:
        print(f"  output {vi.name} {dims(vi)}")
    nbytes = 0
    ext = 0
    for i in g.initializer:
        if i.data_location == onnx.TensorProto.EXTERNAL:
            ext += 1
            for kv in i.external_data:
                if kv.key == "length":
                    nbytes += int(kv.value)
        else:
            nbytes += len(i.raw_data) or 0
    print(f"  initializers {len(g.initializer)} ({nbytes / 1e6:.1f} MB, {ext} external)")
    hist = collections.Counter(n.op_type for n in g.node)
    top = hist.most_common() if a.ops else hist.most_common(12)
    print("  ops: " + ", ".join(f"{k} {v}" for k, v in top) + ("" if a.ops else ", ..."))
    for name, offs in merge_orders(m):
        print(f"  merge {name}: {classify(offs)} {offs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
