#!/usr/bin/env python3
"""Write broken variants of valid Swin UNETR exports for the loader's bad-file tests.

    make_bad_models.py TEST_DATA_DIR OUTDIR
from the cases f12_c32_ts (TorchScript), f12_c64_dynamo (external data), f12_c32_default
(today's default export: GELU as one Gelu node), f12_c32_flash_dynamo23 (opset 23's
Attention) and f12_w454_flash_dynamo21 (a relative-position bias and shifted-window mask folded
into one constant). Each variant changes one thing; tests/weights/CMakeLists.txt lists the status and message
each must produce."""
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper


def init(m, name):
    return next(t for t in m.graph.initializer if t.name == name)


def producer(m, name):
    return next(n for n in m.graph.node if name in n.output)


def save(m, out, name):
    onnx.save(m, os.path.join(out, name))


def main() -> int:
    data, out = sys.argv[1:3]
    src = os.path.join(data, "f12_c32_ts", "model.onnx")
    dyn_dir, default_dir, flash_dir = (os.path.join(data, c) for c in ("f12_c64_dynamo", "f12_c32_default",
                                                                        "f12_c32_flash_dynamo23"))
    w4 = os.path.join(data, "f12_w454_flash_dynamo21", "model.onnx")
    for p in (src, os.path.join(dyn_dir, "model.onnx"), os.path.join(dyn_dir, "model.onnx.data"),
              os.path.join(default_dir, "model.onnx"), os.path.join(flash_dir, "model.onnx"), w4):
        if not os.path.isfile(p):
            print(f"FAIL: {p} missing (run tools/export/make_test_data.sh)")
            return 1
    os.makedirs(out, exist_ok=True)

    # a conv weight with the right number of elements but the wrong shape
    m = onnx.load(src)
    t = init(m, "encoder2.layer.conv2.conv.weight")
    t.dims[:] = [t.dims[0] // 2, t.dims[1] * 2] + list(t.dims[2:])
    save(m, out, "wrong_shape_conv.onnx")

    # the first qkv weight (C, 3C) stored as (3C, C)
    m = onnx.load(src)
    mm = next(n for n in m.graph.node if n.op_type == "MatMul" and n.input[1].startswith("onnx::MatMul"))
    t = init(m, mm.input[1])
    t.dims[:] = [t.dims[1], t.dims[0]]
    save(m, out, "wrong_shape_linear.onnx")

    # dims that do not match the payload length
    m = onnx.load(src)
    init(m, "out.conv.conv.bias").dims[0] += 1
    save(m, out, "payload_mismatch.onnx")

    # two conv weights of equal shape that swap names (structure and names disagree)
    m = onnx.load(src)
    a, b = "encoder2.layer.conv1.conv.weight", "encoder2.layer.conv2.conv.weight"
    init(m, a).name, init(m, b).name = "tmp_swap", a
    init(m, "tmp_swap").name = b
    for n in m.graph.node:
        n.input[:] = [{a: b, b: a}.get(x, x) for x in n.input]
    save(m, out, "swapped_names.onnx")

    # patch_size 4: the patch-embedding conv with kernel = stride = 4
    m = onnx.load(src)
    t = init(m, "swinViT.patch_embed.proj.weight")
    w = np.zeros((t.dims[0], t.dims[1], 4, 4, 4), np.float32)
    t.CopyFrom(numpy_helper.from_array(w, t.name))
    conv = next(n for n in m.graph.node if n.op_type == "Conv")
    for at in conv.attribute:
        if at.name in ("kernel_shape", "strides"):
            at.ints[:] = [4, 4, 4]
    save(m, out, "patch4.onnx")

    # stage 2's patch merging concatenates two sub-grids in another order than stage 1's
    m = onnx.load(src)
    ln = next(n for n in m.graph.node if "swinViT.layers2.0.downsample.norm.weight" in n.input)
    cat = producer(m, ln.input[0])
    cat.input[1], cat.input[2] = cat.input[2], cat.input[1]
    save(m, out, "merge_order_mixed.onnx")

    # an unsupported operator in the middle of the graph
    m = onnx.load(src)
    i = next(k for k, n in enumerate(m.graph.node) if n.op_type == "Erf")
    m.graph.node[i].op_type = "Tanh"
    m.graph.node[i].name = "gelu_as_tanh"
    save(m, out, "tanh_gelu.onnx")

    # a ReduceMean that is no part of a decomposed LayerNormalization
    m = onnx.load(src)
    ln = next(n for n in m.graph.node if n.op_type == "LayerNormalization")
    ln.op_type = "ReduceMean"
    del ln.attribute[:]
    del ln.input[1:]
    save(m, out, "stray_reducemean.onnx")

    # an InstanceNorm affine applied as a separate Mul after a plain InstanceNormalization
    m = onnx.load(src)
    i, inn = next((k, n) for k, n in enumerate(m.graph.node) if n.op_type == "InstanceNormalization")
    c = next(t for t in m.graph.initializer if t.name == "encoder1.layer.conv1.conv.weight").dims[0]
    m.graph.initializer.append(numpy_helper.from_array(np.full((c, 1, 1, 1), 1.5, np.float32), "in_gamma"))
    out_name = inn.output[0]
    inn.output[0] = out_name + "_plain"
    m.graph.node.insert(i + 1, helper.make_node("Mul", [inn.output[0], "in_gamma"], [out_name], name="in_affine_mul"))
    save(m, out, "in_affine_mul.onnx")

    # dynamo export: external data truncated to half, and missing
    for name, cut in (("dyn_trunc_data", True), ("dyn_missing_data", False)):
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        shutil.copy(os.path.join(dyn_dir, "model.onnx"), d)
        data = os.path.join(d, "model.onnx.data")
        if os.path.exists(data):
            os.remove(data)
        if cut:
            shutil.copy(os.path.join(dyn_dir, "model.onnx.data"), data)
            with open(data, "r+b") as fh:
                fh.truncate(os.path.getsize(data) // 2)
    # external data outside the model's folder: a parent-relative and an absolute location
    for name, loc in (("ext_parent", "../model.onnx.data"), ("ext_absolute", "/etc/passwd")):
        m = onnx.load(os.path.join(dyn_dir, "model.onnx"), load_external_data=False)
        for t in m.graph.initializer:
            for e in t.external_data:
                if e.key == "location":
                    e.value = loc
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        onnx.save(m, os.path.join(d, "model.onnx"))

    # opset 20's Gelu node with the tanh approximation
    m = onnx.load(os.path.join(default_dir, "model.onnx"))
    gelu = next(n for n in m.graph.node if n.op_type == "Gelu")
    del gelu.attribute[:]   # the exporter writes approximate='none'
    gelu.attribute.append(helper.make_attribute("approximate", "tanh"))
    d = os.path.join(out, "gelu_tanh")
    os.makedirs(d, exist_ok=True)
    onnx.save_model(m, os.path.join(d, "model.onnx"), save_as_external_data=True, location="model.onnx.data")

    # opset 23's Attention with another scale than MONAI's 1/sqrt(head dim)
    m = onnx.load(os.path.join(flash_dir, "model.onnx"))
    att = next(n for n in m.graph.node if n.op_type == "Attention")
    for a in att.attribute:
        if a.name == "scale":
            a.f *= 1.5
    d = os.path.join(out, "attention_scale")
    os.makedirs(d, exist_ok=True)
    onnx.save_model(m, os.path.join(d, "model.onnx"), save_as_external_data=True, location="model.onnx.data")

    # a LeakyReLU of another slope than MONAI's 0.01 (the kernels apply 0.01)
    m = onnx.load(src)
    lr = next(n for n in m.graph.node if n.op_type == "LeakyRelu")
    del lr.attribute[:]
    lr.attribute.append(helper.make_attribute("alpha", 0.2))
    save(m, out, "leaky_slope.onnx")

    # an attention spelled out (MatMul, Add, Softmax) whose logits are scaled other than by
    # 1/sqrt(head dim) = 0.5 (f=12: head dim 4): q's Mul by 0.25; TorchScript's decomposed SDPA
    # scaling q and k by sqrt(0.5) each, k's made 0.5; a Mul by 2 after the product; a Mul by 0
    def scale_variant(case, name, edit):
        m = onnx.load(os.path.join(os.path.dirname(os.path.dirname(src)), case, "model.onnx"))
        sm = next(n for n in m.graph.node if n.op_type == "Softmax")
        edit(m, sm)
        save(m, out, name)

    def scalar_of(m, mul):
        v = next(i for i in mul.input if i not in {o for n in m.graph.node if n.op_type != "Constant" for o in n.output})
        return next((t for t in m.graph.initializer if t.name == v), None) or \
            next(n for n in m.graph.node if n.op_type == "Constant" and v in n.output).attribute[0].t

    def product_of(m, sm):   # q k^T: back from the Softmax through the views and the bias and mask Adds
        made = {o: n for n in m.graph.node for o in n.output}

        def find(v):
            n = made.get(v)
            if n is None or n.op_type == "Constant":
                return None
            if n.op_type == "MatMul":
                return n
            if n.op_type in ("Reshape", "Unsqueeze", "Cast"):
                return find(n.input[0])
            if n.op_type == "Add":
                return find(n.input[0]) or find(n.input[1])
            return None
        return find(sm.input[0])

    def set_scalar(m, mul, value):
        t = scalar_of(m, mul)
        t.CopyFrom(numpy_helper.from_array(np.array(value, np.float32).reshape(numpy_helper.to_array(t).shape), t.name))

    def q_mul(m, sm, operand=0):
        n = producer(m, product_of(m, sm).input[operand])
        while n.op_type != "Mul":
            n = producer(m, n.input[0])
        return n

    def post_mul(m, sm):
        mm = product_of(m, sm)
        m.graph.initializer.append(numpy_helper.from_array(np.array(2, np.float32), "post_scale"))
        i = list(m.graph.node).index(mm)
        m.graph.node.insert(i + 1, helper.make_node("Mul", [mm.output[0] + "_x2", "post_scale"], [mm.output[0]]))
        mm.output[0] += "_x2"
    scale_variant("f12_c32_ts", "qk_scale_quarter.onnx", lambda m, sm: set_scalar(m, q_mul(m, sm), 0.25))
    scale_variant("f12_c32_flash_ts", "qk_scale_sdpa.onnx", lambda m, sm: set_scalar(m, q_mul(m, sm, 1), 0.5))
    scale_variant("f12_c32_ts", "qk_scale_post.onnx", post_mul)
    scale_variant("f12_c32_ts", "qk_scale_zero.onnx", lambda m, sm: set_scalar(m, q_mul(m, sm), 0))

    # the folded bias + mask (windows, heads, n, n) of a shifted block with window 1's mask
    # dropped where it is -100: bias plus a mask, but not the standard one
    m = onnx.load(w4)
    t = next(t for t in m.graph.initializer if len(t.dims) == 4 and t.dims[0] > 1 and t.dims[2] == t.dims[3] > 1)
    a = numpy_helper.to_array(t).copy()
    a[1] = np.where(a[1] < a[0] - 50, a[0], a[1])
    t.CopyFrom(numpy_helper.from_array(a, t.name))
    save(m, out, "folded_bias_mask.onnx")

    # saved by ONNX Runtime at the extended level (its contrib FusedMatMul and Gelu, which swinrun
    # reads), then one fused operator it does not: a FusedMatMul given a transpose, and the Gelu
    # made FastGelu (the tanh approximation)
    tool = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "export", "transform_onnx.py")
    ext = os.path.join(out, "ort_extended", "model.onnx")
    subprocess.run([sys.executable, tool, "ort-extended", src, ext], check=True, stdout=subprocess.DEVNULL)
    for name, op, change in (("ort_fused_transposed", "FusedMatMul", "transB"), ("ort_fast_gelu", "Gelu", "FastGelu"),
                             ("ort_fused_alpha", "FusedMatMul", "alpha")):
        m = onnx.load(ext)
        n = next(n for n in m.graph.node if n.domain == "com.microsoft" and n.op_type == op)
        if change == "alpha":   # q k^T with the 0.5 folded into alpha: made 1
            for a in n.attribute:
                if a.name == "alpha":
                    a.f = 1.0
        elif change == "transB":
            kept = [a for a in n.attribute if a.name != "transB"]
            del n.attribute[:]
            n.attribute.extend(kept + [helper.make_attribute("transB", 1)])
        else:
            n.op_type = change
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        onnx.save_model(m, os.path.join(d, "model.onnx"), save_as_external_data=True, location="model.onnx.data")

    # int8-quantized by ONNX Runtime (quantize_dynamic: DynamicQuantizeLinear, MatMulInteger)
    from onnxruntime.quantization import QuantType, quantize_dynamic
    quantize_dynamic(src, os.path.join(out, "quantized_dynamic.onnx"), weight_type=QuantType.QInt8)
    print("ok", out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
