#!/usr/bin/env python3
"""torch.onnx.export options a user may set, each export run by swinrun and by ONNX Runtime on
the same file and input, held to check_logits.py's criterion:
  nofold            TorchScript opset 17, do_constant_folding=False: each Linear's weight reaches
                    its MatMul through a Transpose of the (out, in) parameter, and the patch
                    merging's Slice bounds are Unsqueeze(Constant scalar)
  nofold_v2_affine  the same with use_v2, mergingv2 and affine instance norm
  nofold_pre15      the same with MONAI < 1.5's merging order (read from those Slice bounds)
  nofold_opset14    opset 14 (a LayerNorm written out as ReduceMean ... Div)
  nofold_opset11    opset 11, the lowest torch exports this model at (Unsqueeze's axes an attribute)
  nofold_batch      norm_name='batch': each batch norm left as a BatchNormalization node after its
                    conv (swinrun folds it at load, and `swinrun info` says so)
  nofold_batch_eps  the same with the batch norms' epsilon 0.1 (read from the nodes; MONAI's 1e-5
                    would differ by up to 5 % of a channel's scale)
  initializers_as_inputs  keep_initializers_as_inputs=True (every weight also a graph input)
  dynamic_batch     dynamic_axes on the batch dimension only
  monai_convert_to_onnx  MONAI's own route, monai.networks.utils.convert_to_onnx (traced, then
                    torch.onnx.export; dynamo=False passed through: with MONAI 1.6.1 and torch
                    2.15 its default, torch's dynamo exporter, fails on SwinUNETR's input check)
Models are f=12, 32^3, Co 3, MONAI SwinUNETRs built and initialised as make_test_data.sh
builds them (tools/export/export_swin_unetr.py, seed 0); the input is uniform [0, 1).
nofold_batch's file saved by ONNX Runtime at its basic level (its Conv + BatchNormalization fusion
names each new weight and bias after its sources, "ConvBnFusion_W_<conv weight>",
"ConvBnFusion_BN_B_<norm bias>": not state-dict keys) against ONNX Runtime's run of it; then the
file is spoiled two ways, each refused (exit 2, the message named): a batch
norm in training mode (training_mode=1: batch statistics, not the running ones) and a running
variance of -1 (no real scale).

    check_export_options.py SWINRUN WORKDIR"""
import os
import subprocess
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "export"))
import check_logits  # noqa: E402
import export_swin_unetr as exporter  # noqa: E402

COMMON = ["--feature-size", "12", "--out-channels", "3", "--size", "32", "32", "32", "--exporter", "torchscript"]
CASES = {  # name -> (exporter args, torch.onnx.export keyword arguments)
    "nofold": ([], {"do_constant_folding": False, "opset_version": 17}),
    "nofold_v2_affine": (["--use-v2", "--downsample", "mergingv2", "--instnorm-affine"],
                         {"do_constant_folding": False, "opset_version": 17}),
    "nofold_pre15": (["--merge-order", "pre15"], {"do_constant_folding": False, "opset_version": 17}),
    "nofold_opset14": ([], {"do_constant_folding": False, "opset_version": 14}),
    "nofold_opset11": ([], {"do_constant_folding": False, "opset_version": 11}),
    "nofold_batch": (["--batch-norm"], {"do_constant_folding": False, "opset_version": 17}),
    "nofold_batch_eps": (["--batch-norm"], {"do_constant_folding": False, "opset_version": 17, "bn_eps": 0.1}),
    "initializers_as_inputs": ([], {"keep_initializers_as_inputs": True, "opset_version": 17}),
    "dynamic_batch": ([], {"opset_version": 17, "dynamic_axes": {"input": {0: "N"}, "logits": {0: "N"}}}),
    "monai_convert_to_onnx": ([], {"opset_version": 17, "monai": True}),
}


def export(model, path, kw):
    import torch
    eps = kw.pop("bn_eps", None)
    for m in model.modules():
        if eps is not None and isinstance(m, torch.nn.BatchNorm3d):
            m.eps = eps
    with torch.no_grad():
        if kw.pop("monai", False):
            from monai.networks.utils import convert_to_onnx
            convert_to_onnx(model, [torch.zeros(1, 1, 32, 32, 32)], input_names=["input"], output_names=["logits"],
                            filename=path, use_trace=True, dynamo=False, **kw)
        else:
            torch.onnx.export(model, (torch.zeros(1, 1, 32, 32, 32),), path, dynamo=False, input_names=["input"],
                              output_names=["logits"], **kw)


def ort_fused_batch_norms(swinrun, src, x, inp, work):
    """src saved by ONNX Runtime at its basic level, run by swinrun and by ONNX Runtime. Returns
    the failures."""
    import onnx
    import onnxruntime as ort
    path = os.path.join(work, "nofold_batch_ort_basic.onnx")
    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    so.optimized_model_filepath = path
    ort.InferenceSession(src, so, providers=["CPUExecutionProvider"])
    fused = sum(t.name.startswith("ConvBnFusion_") for t in onnx.load(path).graph.initializer)
    ref = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"input": x})[0]
    out = os.path.join(work, "nofold_batch_ort_basic_swinrun.npy")
    r = subprocess.run([swinrun, "forward", path, inp, out], capture_output=True, text=True)
    ok, line = (False, f"swinrun exit {r.returncode}: {r.stderr.strip()[-300:]}") if r.returncode else \
        check_logits.compare(np.load(out), ref)
    ok = ok and fused > 0
    print(f"{'ok  ' if ok else 'FAIL'} nofold_batch at ONNX Runtime's basic level ({fused} ConvBnFusion_ initializers): {line}")
    return not ok


def spoiled_batch_norms(swinrun, src, inp, work):
    """nofold_batch's first BatchNormalization in training mode, then with a negative running
    variance: each refused. Returns the failures."""
    import onnx
    from onnx import helper, numpy_helper
    bad = 0
    for name, want in (("bn_training", "training mode"), ("bn_negative_var", "running variance")):
        m = onnx.load(src)
        bn = next(n for n in m.graph.node if n.op_type == "BatchNormalization")
        if name == "bn_training":
            for a in bn.attribute:
                if a.name == "training_mode":
                    bn.attribute.remove(a)
                    break
            bn.attribute.append(helper.make_attribute("training_mode", 1))
        else:
            var = next(t for t in m.graph.initializer if t.name == bn.input[4])
            v = numpy_helper.to_array(var).copy()
            v[1] = -1.0
            var.CopyFrom(numpy_helper.from_array(v, var.name))
        path = os.path.join(work, f"{name}.onnx")
        onnx.save(m, path)
        r = subprocess.run([swinrun, "forward", path, inp, os.path.join(work, f"{name}.npy")], capture_output=True, text=True)
        ok = r.returncode == 2 and want in r.stderr
        print(f"{'ok  ' if ok else 'FAIL'} {name}: exit {r.returncode}: {r.stderr.strip()[-200:]}")
        bad += not ok
    return bad


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    swinrun, work = sys.argv[1:3]
    os.makedirs(work, exist_ok=True)
    import onnxruntime as ort
    warnings.filterwarnings("ignore")
    x = np.random.default_rng(1).random((1, 1, 32, 32, 32), dtype=np.float32)
    inp = os.path.join(work, "input.npy")
    np.save(inp, x)
    bad = 0
    for name, (args, kw) in CASES.items():
        model, _ = exporter.make_model(exporter.parse_args(COMMON + args))
        path = os.path.join(work, f"{name}.onnx")
        export(model, path, dict(kw))
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        ref = sess.run(None, {"input": x})[0]
        out = os.path.join(work, f"{name}_swinrun.npy")
        r = subprocess.run([swinrun, "forward", path, inp, out], capture_output=True, text=True)
        if r.returncode:
            print(f"FAIL {name}: swinrun exit {r.returncode}: {r.stderr.strip()[-300:]}")
            bad += 1
            continue
        ok, line = check_logits.compare(np.load(out), ref)
        if name.startswith("nofold_batch"):
            info = subprocess.run([swinrun, "info", path], capture_output=True, text=True).stdout
            if "batch, folded into the convolutions at load" not in info:
                ok, line = False, f"swinrun info does not say the batch norms were folded at load: {info[-300:]}"
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {line}")
        bad += not ok
    bad += ort_fused_batch_norms(swinrun, os.path.join(work, "nofold_batch.onnx"), x, inp, work)
    bad += spoiled_batch_norms(swinrun, os.path.join(work, "nofold_batch.onnx"), inp, work)
    print("PASS" if not bad else f"FAIL: {bad} failures")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
