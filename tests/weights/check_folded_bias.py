#!/usr/bin/env python3
"""A Swin UNETR export whose relative-position biases are constant-folded must load with the
bias tables recovered: every table row the folded (1, heads, n, n) constants reach must equal
the original table, cfg.bias_tokens must give n per stage. ONNX Runtime's optimised model
itself (folded, MatMul+Add fused to Gemm, nodes re-sorted) must bind every other weight
exactly as the original export does; its folded shifted-window masks are checked against the
standard mask (one flipped entry must be refused).

    check_folded_bias.py LOADER_DUMP TS_MODEL WORKDIR
The folded model is made here: ONNX Runtime's basic optimisation folds the bias (and re-sorts
the nodes); its folded constants replace the bias computation in the original graph, which
keeps the exporter's node order; dead nodes (table Gathers, index buffers) are removed."""
import json
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper


def rel_index(w, n):
    t = np.arange(n)
    c = np.stack([t // (w[1] * w[2]), t // w[2] % w[1], t % w[2]], 1)
    d = c[:, None, :] - c[None, :, :] + np.array(w) - 1
    return d[..., 0] * (2 * w[1] - 1) * (2 * w[2] - 1) + d[..., 1] * (2 * w[2] - 1) + d[..., 2]


def main() -> int:
    dump, src, work = sys.argv[1:4]
    if not os.path.isfile(src):
        print(f"FAIL: {src} missing (run tools/export/make_test_data.sh)")
        return 1
    os.makedirs(work, exist_ok=True)
    opt, folded = os.path.join(work, "ort_basic.onnx"), os.path.join(work, "folded_bias.onnx")
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    so.optimized_model_filepath = opt
    ort.InferenceSession(src, so, providers=["CPUExecutionProvider"])

    m, o = onnx.load(src), onnx.load(opt)
    oinit = {t.name: t for t in o.graph.initializer}
    names = [n.input[1] for n in m.graph.node if n.op_type == "Add" and n.input[1] in oinit and len(oinit[n.input[1]].dims) == 4]
    m.graph.initializer.extend(oinit[x] for x in names)
    nodes = [n for n in m.graph.node if not set(n.output) & set(names)]
    while True:
        used = {x for n in nodes for x in n.input} | {x.name for x in m.graph.output}
        live = [n for n in nodes if any(x in used for x in n.output)]
        if len(live) == len(nodes):
            break
        nodes = live
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    used = {x for n in nodes for x in n.input}
    tables = [t for t in m.graph.initializer if t.name.endswith("relative_position_bias_table")]
    inits = [t for t in m.graph.initializer if t.name in used]
    del m.graph.initializer[:]
    m.graph.initializer.extend(inits)
    onnx.save(m, folded)
    print(f"{len(names)} folded biases; tables left in the graph: {sum(t.name in used for t in tables)}")

    cfg = json.loads(subprocess.run([dump, folded], capture_output=True, text=True).stdout)
    if cfg.get("status") != "SWIN_OK":
        print(f"FAIL: {cfg}")
        return 1
    w, depths = cfg["window"], cfg["depths"]
    bad = 0
    args = [dump, folded]
    slots = []
    for s in range(4):
        for b in range(depths[s]):
            slots.append((s, b, os.path.join(work, f"t{s}{b}.bin")))
            args += [f"stage{s}.block{b}.bias_table", slots[-1][2]]
    if subprocess.run(args, capture_output=True).returncode:
        print("FAIL: loader_dump could not write the tables")
        return 1
    orig = {t.name: numpy_helper.to_array(t) for t in tables}
    for s, b, path in slots:
        ref = orig[f"swinViT.layers{s + 1}.0.blocks.{b}.attn.relative_position_bias_table"]
        got = np.fromfile(path, np.float32).reshape(ref.shape)
        n = cfg["bias_tokens"][s]
        rows = np.unique(rel_index(w, n)) if n else np.arange(ref.shape[0])
        ok = n > 0 and np.array_equal(got[rows], ref[rows]) and not got[np.setdiff1d(np.arange(ref.shape[0]), rows)].any()
        bad += not ok
        print(f"{'ok  ' if ok else 'FAIL'} stage {s + 1} block {b}: bias_tokens {n}, {rows.size} of {ref.shape[0]} rows recovered")
    # the ORT-optimised (re-sorted) graph binds the same weights as the exporter's graph
    same = ["patch_w", "stage0.block0.qkv_w", "stage0.block1.fc1_w", "stage2.block1.proj_w", "stage3.merge_red_w",
            "encoder0.conv1_w", "encoder3.conv2_w", "encoder4.conv1_w", "decoder4.transp_w", "decoder2.res.conv3_w",
            "decoder0.res.conv1_w", "out_w", "out_b"]
    for which, model in (("a", src), ("b", opt)):
        args = [dump, model]
        for k in same:
            args += [k, os.path.join(work, f"{which}_{k}.bin")]
        if subprocess.run(args, capture_output=True).returncode:
            print(f"FAIL: loader_dump could not load {model}")
            return 1
    for k in same:
        ok = np.array_equal(np.fromfile(os.path.join(work, f"a_{k}.bin"), np.float32),
                            np.fromfile(os.path.join(work, f"b_{k}.bin"), np.float32))
        bad += not ok
        print(f"{'ok  ' if ok else 'FAIL'} ORT-optimised graph: {k} as in the export")
    # a folded mask with one entry flipped is refused
    o = onnx.load(opt)
    mask = next(t for t in o.graph.initializer if len(t.dims) == 5 and t.dims[0] == 1 and t.dims[-1] == t.dims[-2] > 1)
    a = numpy_helper.to_array(mask).copy()
    a.flat[1] = -100.0 if a.flat[1] == 0 else 0.0
    mask.CopyFrom(numpy_helper.from_array(a, mask.name))
    flipped = os.path.join(work, "mask_flipped.onnx")
    onnx.save(o, flipped)
    r = json.loads(subprocess.run([dump, flipped], capture_output=True, text=True).stdout)
    ok = r.get("status") == "SWIN_ERR_MODEL" and "shifted-window mask" in r.get("message", "")
    bad += not ok
    print(f"{'ok  ' if ok else 'FAIL'} a folded mask with one flipped entry is refused: {r.get('message', r)}")
    print("PASS" if not bad else "FAILED")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
