#!/usr/bin/env python3
"""Check that swin_onnx_load binds the right tensors, in the canonical layouts of
core/model.h: selected weights written by loader_dump are compared bit for bit with the
values python's onnx/numpy read from the same file, converted here independently.

    check_weights.py LOADER_DUMP CASE_DIR_OR_MODEL
Linear weights are found by position (the n-th MatMul/Gemm with a constant weight), conv,
LayerNorm and InstanceNorm parameters by their state_dict names, bias tables by position."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper


def main() -> int:
    dump, arg = sys.argv[1], sys.argv[2]
    model = arg if arg.endswith(".onnx") else os.path.join(arg, "model.onnx")
    if not os.path.isfile(model):
        print(f"FAIL: {model} missing (run tools/export/make_test_data.sh)")
        return 1
    m = onnx.load(model)
    g = m.graph
    vals = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    for n in g.node:
        if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value":
            vals[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
        elif n.op_type == "Identity" and n.input[0] in vals:
            vals[n.output[0]] = vals[n.input[0]]

    cfg = json.loads(subprocess.run([dump, model], capture_output=True, text=True).stdout)
    if cfg.get("status") != "SWIN_OK":
        print(f"FAIL: load failed: {cfg}")
        return 1
    depths = cfg["depths"]

    linears = []   # (in, out) weights in graph order
    for n in g.node:
        if n.op_type in ("MatMul", "Gemm") and n.input[1] in vals and n.input[0] not in vals:
            w = vals[n.input[1]]
            trans = n.op_type == "Gemm" and any(a.name == "transB" and a.i for a in n.attribute)
            linears.append(w.T if trans else w)
    tables = [vals[n.input[0]] for n in g.node
              if n.op_type in ("Gather", "GatherND") and n.input[0] in vals and vals[n.input[0]].dtype == np.float32]

    def lin(s, b, which):   # which: 0 qkv, 1 proj, 2 fc1, 3 fc2, 'merge'
        i = sum(4 * depths[k] + 1 for k in range(s))
        return linears[i + 4 * depths[s]] if which == "merge" else linears[i + 4 * b + which]

    def table(s, b):
        return tables[sum(depths[:s]) + b]

    def conv(name):      # (cout, cin, kd, kh, kw) -> (kd, kh, kw, cin, cout)
        return vals[name].transpose(2, 3, 4, 1, 0)

    def convt(name):     # (cin, cout, kd, kh, kw) -> (kd, kh, kw, cin, cout)
        return vals[name].transpose(2, 3, 4, 0, 1)

    last = depths[3] - 1
    checks = {
        "patch_w": conv("swinViT.patch_embed.proj.weight"),
        "patch_b": vals["swinViT.patch_embed.proj.bias"],
        "stage0.block0.qkv_w": lin(0, 0, 0),
        "stage0.block0.proj_w": lin(0, 0, 1),
        "stage0.block0.fc1_w": lin(0, 0, 2),
        "stage0.block0.fc2_w": lin(0, 0, 3),
        f"stage3.block{last}.qkv_w": lin(3, last, 0),
        f"stage3.block{last}.fc2_w": lin(3, last, 3),
        "stage1.merge_red_w": lin(1, 0, "merge"),
        "stage3.merge_red_w": lin(3, 0, "merge"),
        "stage2.merge_norm_w": vals.get("swinViT.layers3.0.downsample.norm.weight"),
        "stage0.block0.proj_b": vals.get("swinViT.layers1.0.blocks.0.attn.proj.bias"),
        "stage1.block0.fc1_b": vals.get("swinViT.layers2.0.blocks.0.mlp.linear1.bias"),
        "encoder0.conv1_w": conv("encoder1.layer.conv1.conv.weight"),
        "encoder4.conv2_w": conv("encoder10.layer.conv2.conv.weight"),
        "decoder4.transp_w": convt("decoder5.transp_conv.conv.weight"),
        "decoder0.transp_w": convt("decoder1.transp_conv.conv.weight"),
        "decoder2.res.conv1_w": conv("decoder3.conv_block.conv1.conv.weight"),
        "decoder0.res.conv3_w": conv("decoder1.conv_block.conv3.conv.weight"),
        "out_w": conv("out.conv.conv.weight"),
        "out_b": vals["out.conv.conv.bias"],
    }
    # a constant-folded bias has no table in the graph (its values are checked by e2e_CASE)
    if len(tables) == sum(depths):
        checks["stage0.block0.bias_table"] = table(0, 0)
        checks[f"stage3.block{last}.bias_table"] = table(3, last)
    if cfg["qkv_bias"]:
        checks["stage0.block0.qkv_b"] = vals.get("swinViT.layers1.0.blocks.0.attn.qkv.bias")
    if cfg["in_channels"] != cfg["feature_size"]:
        checks["encoder0.conv3_w"] = conv("encoder1.layer.conv3.conv.weight")
    if cfg["use_v2"]:
        checks["stage1.v2.conv1_w"] = conv("swinViT.layers2c.0.layer.conv1.conv.weight")
        checks["stage3.v2.conv2_w"] = conv("swinViT.layers4c.0.layer.conv2.conv.weight")
    if cfg["patch_norm"]:
        checks["patch_norm_w"] = vals.get("swinViT.patch_embed.norm.weight")
    if cfg["instnorm_affine"]:
        checks["encoder0.norm1_w"] = vals.get("encoder1.layer.norm1.weight")
        checks["encoder0.norm1_b"] = vals.get("encoder1.layer.norm1.bias")
        checks["decoder4.res.norm1_w"] = vals.get("decoder5.conv_block.norm1.weight")
    checks = {k: v for k, v in checks.items() if v is not None}   # names an exporter dropped

    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        args = [dump, model]
        for k in checks:
            args += [k, os.path.join(tmp, k + ".bin")]
        r = subprocess.run(args, capture_output=True, text=True)
        if r.returncode:
            print(f"FAIL: loader_dump rc {r.returncode}: {r.stderr.strip()}")
            return 1
        for k, want in checks.items():
            got = np.fromfile(os.path.join(tmp, k + ".bin"), dtype=np.float32)
            want = np.ascontiguousarray(want, dtype=np.float32).ravel()
            ok = got.shape == want.shape and np.array_equal(got, want)
            bad += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {k}: {want.size} floats" + ("" if ok else f" (got {got.size}, max |d| "
                  f"{np.abs(got - want).max() if got.shape == want.shape else 'n/a'})"))
    print("PASS" if not bad else f"FAILED ({bad} tensors)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
