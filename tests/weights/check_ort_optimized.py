#!/usr/bin/env python3
"""Exports saved by ONNX Runtime at its extended and all optimisation levels
(SessionOptions.optimized_model_filepath), as sites keep them to start sessions faster: the
dynamo export (f12_c32_default) and the TorchScript exporter's at opset 17 (f12_c32_ts) of the
test data. Each is run by `swinrun forward` and held to check_logits.py's criterion against ONNX
Runtime's run of the same optimised file; the files must hold ONNX Runtime's contrib operators
swinrun accepts (com.microsoft FusedMatMul: the attention products with the 1/sqrt(head dim)
Mul folded into alpha; com.microsoft Gelu: the exact GELU's Div/Erf/Add/Mul), else the check
could not fail. A FusedMatMul given a transpose (transB=1, not what a Swin UNETR's attention
fuses to) is refused, exit 2, in one line.

    check_ort_optimized.py SWINRUN TEST_DATA WORKDIR"""
import collections
import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "export"))
import check_logits  # noqa: E402
from weights_checks import check, input_cube, summary  # noqa: E402


def optimised(src_dir, work, case, level):
    """The export of src_dir saved by ONNX Runtime at level, beside a copy of its weights file."""
    import onnxruntime as ort
    d = os.path.join(work, case)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(src_dir):
        if f.startswith("model.onnx"):
            shutil.copy(os.path.join(src_dir, f), d)
    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.graph_optimization_level = {"extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
                                   "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL}[level]
    so.optimized_model_filepath = os.path.join(d, f"{level}.onnx")
    ort.InferenceSession(os.path.join(d, "model.onnx"), so, providers=["CPUExecutionProvider"])
    return so.optimized_model_filepath


def contrib_ops(path):
    import onnx
    m = onnx.load(path, load_external_data=False)
    return m, collections.Counter(n.op_type for n in m.graph.node if n.domain == "com.microsoft")


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    swinrun, data, work = sys.argv[1:4]
    import onnxruntime as ort
    x, inp = input_cube(work, 4)
    wanted = {"f12_c32_default": {"FusedMatMul"}, "f12_c32_ts": {"FusedMatMul", "Gelu"}}
    ext_ts = None
    for case, ops in wanted.items():
        for level in ("extended", "all"):
            path = optimised(os.path.join(data, case), work, case, level)
            model, contrib = contrib_ops(path)
            if case == "f12_c32_ts" and level == "extended":
                ext_ts = (path, model)
            s = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
            ref = s.run(None, {s.get_inputs()[0].name: x})[0]
            out = os.path.join(work, f"{case}_{level}.npy")
            r = subprocess.run([swinrun, "forward", path, inp, out], capture_output=True, text=True)
            if r.returncode:
                check(f"{case} {level}", False, f"swinrun exit {r.returncode}: {r.stderr.strip()[-300:]}")
                continue
            ok, line = check_logits.compare(np.load(out), ref)
            check(f"{case} at ONNX Runtime's {level} level ({dict(contrib)}) against ONNX Runtime's run of it",
                  ok and ops <= set(contrib), line)

    import onnx
    path, model = ext_ts
    node = next(n for n in model.graph.node if n.op_type == "FusedMatMul")
    for a in node.attribute:
        if a.name == "transB":
            a.i = 1
    if not any(a.name == "transB" for a in node.attribute):
        node.attribute.append(onnx.helper.make_attribute("transB", 1))
    bad = os.path.join(os.path.dirname(path), "transposed.onnx")
    onnx.save(model, bad)
    r = subprocess.run([swinrun, "info", bad], capture_output=True, text=True)
    err = r.stderr.strip()
    check("a FusedMatMul with transB=1 refused", r.returncode == 2 and "FusedMatMul" in err and "\n" not in err,
          f"exit {r.returncode}: {err[-300:]}")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
