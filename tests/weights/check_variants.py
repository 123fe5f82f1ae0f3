#!/usr/bin/env python3
"""Exporter variations the loader must bind exactly like the plain export:
  gemm:   a Linear as Gemm(transB=1) with an (out, in) weight and its bias as input C
  shared: one initializer feeding two LayerNorms (exporters de-duplicate identical values)
  constant: weights held by Constant nodes instead of initializers
  decomposed: every LayerNormalization written out as opset < 17 exporters do
              (ReduceMean, Sub, Pow, ReduceMean, Add eps, Sqrt, Div, Mul gamma, Add beta)

    check_variants.py LOADER_DUMP TS_MODEL WORKDIR"""
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper


def dump(dump_bin, model, slots, tag, work):
    args = [dump_bin, model]
    for k in slots:
        args += [k, os.path.join(work, f"{tag}_{k}.bin")]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode:
        print(f"FAIL: {model}: {r.stdout.strip()} {r.stderr.strip()}")
        return None
    return {k: np.fromfile(os.path.join(work, f"{tag}_{k}.bin"), np.float32) for k in slots}


def main() -> int:
    dump_bin, src, work = sys.argv[1:4]
    if not os.path.isfile(src):
        print(f"FAIL: {src} missing (run tools/export/make_test_data.sh)")
        return 1
    os.makedirs(work, exist_ok=True)
    bad = 0

    # gemm: stage 1 block 0 qkv MatMul + Add -> Gemm(x, W^T, b, transB=1)
    m = onnx.load(src)
    g = m.graph
    inits = {t.name: t for t in g.initializer}
    mm = next(n for n in g.node if n.op_type == "MatMul" and n.input[1] in inits)
    add = next(n for n in g.node if n.op_type == "Add" and mm.output[0] in n.input)
    bias = next(x for x in add.input if x in inits)
    w = numpy_helper.to_array(inits[mm.input[1]])
    g.initializer.append(numpy_helper.from_array(np.ascontiguousarray(w.T), "qkv_weight_out_in"))
    gemm = helper.make_node("Gemm", [mm.input[0], "qkv_weight_out_in", bias], [add.output[0]], name="qkv_as_gemm", transB=1)
    i = list(g.node).index(mm)
    g.node.remove(add)
    g.node.remove(mm)
    g.node.insert(i, gemm)
    path = os.path.join(work, "gemm.onnx")
    onnx.save(m, path)
    slots = ["stage0.block0.qkv_w", "stage0.block0.qkv_b", "stage0.block0.proj_w"]
    a, b = dump(dump_bin, src, slots, "orig", work), dump(dump_bin, path, slots, "gemm", work)
    if a is None or b is None:
        return 1
    for k in slots:
        ok = np.array_equal(a[k], b[k])
        bad += not ok
        print(f"{'ok  ' if ok else 'FAIL'} gemm(transB=1) variant: {k}")

    # shared: stage 1 block 1's norm1 reads block 0's norm1 initializers
    m = onnx.load(src)
    for n in m.graph.node:
        if n.op_type == "LayerNormalization" and n.input[1] == "swinViT.layers1.0.blocks.1.norm1.weight":
            n.input[1] = "swinViT.layers1.0.blocks.0.norm1.weight"
            n.input[2] = "swinViT.layers1.0.blocks.0.norm1.bias"
    path = os.path.join(work, "shared.onnx")
    onnx.save(m, path)
    slots = ["stage0.block0.norm1_w", "stage0.block1.norm1_w"]
    b = dump(dump_bin, path, slots, "shared", work)
    if b is None:
        return 1
    ok = np.array_equal(b[slots[0]], b[slots[1]]) and np.array_equal(
        b[slots[0]], numpy_helper.to_array(next(t for t in m.graph.initializer if t.name == "swinViT.layers1.0.blocks.0.norm1.weight")))
    bad += not ok
    print(f"{'ok  ' if ok else 'FAIL'} one initializer feeding two LayerNorms binds to both")
    # constant: two weights moved from initializers into Constant nodes at the top of the graph
    m = onnx.load(src)
    names = ["swinViT.layers1.0.blocks.0.norm1.weight", "encoder2.layer.conv1.conv.weight"]
    for name in names:
        t = next(t for t in m.graph.initializer if t.name == name)
        m.graph.initializer.remove(t)
        m.graph.node.insert(0, helper.make_node("Constant", [], [name], value=t))
    path = os.path.join(work, "constant.onnx")
    onnx.save(m, path)
    slots = ["stage0.block0.norm1_w", "encoder1.conv1_w", "encoder1.conv2_w"]
    a, b = dump(dump_bin, src, slots, "orig", work), dump(dump_bin, path, slots, "const", work)
    if a is None or b is None:
        return 1
    for k in slots:
        ok = np.array_equal(a[k], b[k])
        bad += not ok
        print(f"{'ok  ' if ok else 'FAIL'} weights in Constant nodes: {k}")
    # decomposed: the opset-16 LayerNormalization pattern, in place of each LayerNormalization
    m = onnx.load(src)
    g = m.graph
    nodes = []
    for k, n in enumerate(g.node):
        if n.op_type != "LayerNormalization":
            nodes.append(n)
            continue
        p = f"ln{k}_"
        x, y = n.input[0], n.output[0]
        nodes += [helper.make_node("ReduceMean", [x], [p + "m"], axes=[-1]),
                  helper.make_node("Sub", [x, p + "m"], [p + "d"]),
                  helper.make_node("Constant", [], [p + "two"], value=numpy_helper.from_array(np.array(2, np.float32))),
                  helper.make_node("Pow", [p + "d", p + "two"], [p + "d2"]),
                  helper.make_node("ReduceMean", [p + "d2"], [p + "v"], axes=[-1]),
                  helper.make_node("Constant", [], [p + "eps"], value=numpy_helper.from_array(np.array(1e-5, np.float32))),
                  helper.make_node("Add", [p + "v", p + "eps"], [p + "ve"]),
                  helper.make_node("Sqrt", [p + "ve"], [p + "s"])]
        affine = len(n.input) > 2 and n.input[2]
        nodes.append(helper.make_node("Div", [p + "d", p + "s"], [p + "n" if affine else y]))
        if affine:
            nodes += [helper.make_node("Mul", [p + "n", n.input[1]], [p + "g"]), helper.make_node("Add", [p + "g", n.input[2]], [y])]
    del g.node[:]
    g.node.extend(nodes)
    path = os.path.join(work, "decomposed.onnx")
    onnx.save(m, path)
    slots = ["stage0.block0.norm1_w", "stage0.block1.norm2_b", "stage2.merge_norm_w", "stage3.merge_norm_b",
             "stage1.merge_red_w", "stage3.block1.fc2_w", "decoder4.transp_w"]
    a, b = dump(dump_bin, src, slots, "orig", work), dump(dump_bin, path, slots, "decomp", work)
    if a is None or b is None:
        return 1
    cfg_a = json.loads(subprocess.run([dump_bin, src], capture_output=True, text=True).stdout)
    cfg_b = json.loads(subprocess.run([dump_bin, path], capture_output=True, text=True).stdout)
    ok = cfg_a == cfg_b
    bad += not ok
    print(f"{'ok  ' if ok else 'FAIL'} decomposed LayerNorms: same configuration")
    for k in slots:
        ok = np.array_equal(a[k], b[k])
        bad += not ok
        print(f"{'ok  ' if ok else 'FAIL'} decomposed LayerNorms: {k}")
    print("PASS" if not bad else "FAILED")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
