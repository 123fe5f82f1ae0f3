#!/usr/bin/env python3
"""Exports saved by ONNX Runtime at its optimisation levels (SessionOptions.optimized_model_filepath),
as sites keep them to start sessions faster: the dynamo export (f12_c32_default) and the
TorchScript exporter's at opset 17 (f12_c32_ts) of the test data at the extended and all levels;
the TorchScript exporter's at opset 16 (f12_c32_ts16), whose LayerNorms are decomposed, at the
basic, extended and all levels, two exported here at opset 14, normalize=False and use_v2,
at the basic and extended levels, one exported here at opset 14 with patch_norm at the basic level (ONNX Runtime leaves the patch
norm over axis 1 of (B, C, D*H*W), its scale and shift (1, C, 1)), and the dynamo export with a
4 x 5 x 4 window whose biases
dynamo folded (f12_w454_flash_dynamo21) at the basic level, where every bias and mask becomes a
plain constant and each qkv projection a Gemm (the window read from its partition's Reshape),
and the batch-norm export (f12_c32_batch_ts) at the extended and all levels, where each CNN
block's conv1 and the LeakyReLU after it become one com.microsoft FusedConv.
Each is run by `swinrun forward` and held to
check_logits.py's criterion against ONNX Runtime's run of the same optimised file; each file
must hold what makes it differ from its export, else the check could not fail: ONNX Runtime's
contrib operators swinrun accepts (com.microsoft FusedMatMul: the attention products with the
1/sqrt(head dim) Mul folded into alpha; com.microsoft Gelu: the exact GELU's Div/Erf/Add/Mul;
SimplifiedLayerNormalization: the variance half of a decomposed LayerNorm after its centring),
and for the decomposed LayerNorms ONNX Runtime's rewrites of them: a stage's first LayerNorm
averaging over axis 1 with its Transpose moved into it, and a hidden state's proj_out merged with
the next stage's norm1 (one Div used twice). A FusedMatMul given a transpose (transB=1, not what
a Swin UNETR's attention fuses to) is refused, exit 2, in one line, and so is that patch norm
with its scale made (1, 1, D*H*W) (a scale per token: no LayerNorm's; its ReduceMeans are
then no LayerNorm's either), and a FusedConv whose LeakyReLU slope is 0.2 (MONAI's is 0.01).

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
from weights_checks import check, input_cube, refused, summary  # noqa: E402


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
    so.graph_optimization_level = {"basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
                                   "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
                                   "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL}[level]
    so.optimized_model_filepath = os.path.join(d, f"{level}.onnx")
    ort.InferenceSession(os.path.join(d, "model.onnx"), so, providers=["CPUExecutionProvider"])
    return so.optimized_model_filepath


def contrib_ops(path):
    """The model, and what ONNX Runtime put in it: its contrib operators, and its rewrites of
    decomposed LayerNorms ("ReduceMean over axis 1", "Div used twice")."""
    import onnx
    m = onnx.load(path, load_external_data=False)
    found = collections.Counter(n.op_type for n in m.graph.node
                                if n.domain == "com.microsoft" or n.op_type == "SimplifiedLayerNormalization")
    uses = collections.Counter(i for n in m.graph.node for i in n.input)
    for n in m.graph.node:
        axes = [list(a.ints) for a in n.attribute if a.name == "axes"]
        if n.op_type == "ReduceMean" and axes == [[1]]:
            found["ReduceMean over axis 1"] += 1
        if n.op_type == "Div" and "norm" in n.name and uses[n.output[0]] > 1:
            found["Div used twice"] += 1
        if n.op_type == "Gemm":
            found["Gemm"] += 1
    return m, found


def exported(work, name, *args):
    """A TorchScript export at opset 14 (f=12, 32^3) made here with extra arguments."""
    out = os.path.join(work, name, "model.onnx")
    if not os.path.exists(out):
        subprocess.run([sys.executable, os.path.join(HERE, "..", "..", "tools", "export", "export_swin_unetr.py"),
                        "--exporter", "torchscript", "--opset", "14", *args, "--out", out], check=True,
                       capture_output=True)
    return os.path.dirname(out)


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    swinrun, data, work = sys.argv[1:4]
    import onnxruntime as ort
    x, inp = input_cube(work, 4)
    both = ("extended", "all")
    merged = {"ReduceMean over axis 1", "Div used twice"}
    cases = {  # case: (its export's folder, the levels, what each level must have put in the file)
        "f12_c32_default": (os.path.join(data, "f12_c32_default"), both, {"FusedMatMul"}),
        "f12_c32_ts": (os.path.join(data, "f12_c32_ts"), both, {"FusedMatMul", "Gelu"}),
        "f12_c32_ts16": (os.path.join(data, "f12_c32_ts16"), ("basic",) + both, merged),
        "opset14_nonorm": (exported(work, "export_nonorm", "--no-normalize"), ("basic", "extended"),
                           {"ReduceMean over axis 1"}),
        "opset14_v2": (exported(work, "export_v2", "--use-v2"), ("basic", "extended"), {"ReduceMean over axis 1"}),
        "opset14_patchnorm": (exported(work, "export_patchnorm", "--patch-norm"), ("basic",), {"ReduceMean over axis 1"}),
        "f12_w454_flash_dynamo21": (os.path.join(data, "f12_w454_flash_dynamo21"), ("basic",), {"Gemm"}),
        "f12_c32_batch_ts": (os.path.join(data, "f12_c32_batch_ts"), both, {"FusedConv"}),
    }
    own_input = {"f12_w454_flash_dynamo21"}   # a 64 x 32 x 32 export: its case's input
    extended_only = {"opset14_nonorm": {"SimplifiedLayerNormalization"}, "opset14_v2": {"SimplifiedLayerNormalization"}}
    ext_ts = patchnorm = ext_bn = None
    for case, (src, levels, ops) in cases.items():
        for level in levels:
            if level != "basic" and case in extended_only:
                ops = ops | extended_only[case]
            path = optimised(src, work, case, level)
            model, contrib = contrib_ops(path)
            if case == "f12_c32_ts" and level == "extended":
                ext_ts = (path, model)
            if case == "opset14_patchnorm":
                patchnorm = (path, model)
            if case == "f12_c32_batch_ts" and level == "extended":
                ext_bn = (path, model)
            cinp = os.path.join(src, "input.npy") if case in own_input else inp
            s = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
            ref = s.run(None, {s.get_inputs()[0].name: np.load(cinp)})[0]
            out = os.path.join(work, f"{case}_{level}.npy")
            r = subprocess.run([swinrun, "forward", path, cinp, out], capture_output=True, text=True)
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
    refused(swinrun, "a FusedMatMul with transB=1 refused", ["info", bad], "FusedMatMul")

    path, model = ext_bn
    node = next(n for n in model.graph.node if n.op_type == "FusedConv")
    next(a for a in node.attribute if a.name == "activation_params").floats[:] = [0.2]
    bad = os.path.join(os.path.dirname(path), "fused_slope.onnx")
    onnx.save(model, bad)
    refused(swinrun, "a FusedConv with a LeakyReLU slope of 0.2 refused", ["info", bad], "FusedConv")

    from onnx import numpy_helper
    path, model = patchnorm
    inits = {t.name: t for t in model.graph.initializer}
    mul = next(n for n in model.graph.node if n.op_type == "Mul" and any(
        i in inits and len(inits[i].dims) == 3 and inits[i].dims[1] > 1 and inits[i].dims[2] == 1 for i in n.input))
    name = next(i for i in mul.input if i in inits)
    c = inits[name].dims[1]
    tokens = (32 // 2) ** 3
    inits[name].CopyFrom(numpy_helper.from_array(np.linspace(0.5, 1.5, tokens, dtype=np.float32).reshape(1, 1, tokens), name))
    bad = os.path.join(os.path.dirname(path), "per_token_scale.onnx")
    onnx.save(model, bad)
    refused(swinrun, f"a patch norm scaled per token instead of per channel ({c}) refused", ["info", bad],
            "ReduceMean that is not part of a decomposed LayerNormalization")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
