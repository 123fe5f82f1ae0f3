#!/usr/bin/env python3
"""Rewrite an exported Swin UNETR ONNX the way users' post-processing tools do.

    transform_onnx.py KIND IN.onnx OUT.onnx

KIND (one per run; OUT gets OUT.data beside it when the weights are external):
  onnxsim          onnx-simplifier (PyPI onnxsim): constant folding and shape simplification
  onnxslim         onnxslim (PyPI): its default slimming passes
  ort-basic        ONNX Runtime's offline optimisation saved at the basic level (plain ONNX ops)
  ort-extended     ... at the extended level (ONNX Runtime's private com.microsoft fused ops)
  fp16-weights     every float32 initializer stored as float16, a Cast back to float32 after it
  bf16-weights     the same with bfloat16
  fp16-graph       the whole graph in float16 (input, weights, activations, output):
                   onnxconverter-common's float16 conversion (PyPI onnxconverter-common)
  far-data         weights moved to an external-data file at offsets past 2 GiB (a sparse file:
                   it claims over 2 GiB on disk listing but occupies only the weights' bytes)

Exit 0 on success, 1 when the tool fails, 2 on bad arguments.
"""
from __future__ import annotations

import os
import sys

KINDS = ("onnxsim", "onnxslim", "ort-basic", "ort-extended", "fp16-weights", "bf16-weights", "fp16-graph",
         "far-data")
FAR_OFFSET = 5 << 29   # 2.5 GiB


def die(msg: str, code: int = 2):
    print(f"transform_onnx: error: {msg}", file=sys.stderr)
    sys.exit(code)


def save(model, out: str, external: bool) -> None:
    import onnx
    data = os.path.basename(out) + ".data"
    if os.path.exists(out + ".data"):
        os.remove(out + ".data")
    if external:
        onnx.save_model(model, out, save_as_external_data=True, all_tensors_to_one_file=True, location=data,
                        size_threshold=1024)
    else:
        onnx.save_model(model, out)


def has_external(path: str) -> bool:
    import onnx
    m = onnx.load(path, load_external_data=False)
    return any(t.data_location == onnx.TensorProto.EXTERNAL for t in m.graph.initializer)


def ort_offline(src: str, out: str, level: str) -> None:
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = {"basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
                                   "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED}[level]
    so.optimized_model_filepath = out
    if has_external(src):
        so.add_session_config_entry("session.optimized_model_external_initializers_file_name",
                                    os.path.basename(out) + ".data")
        so.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")
    ort.InferenceSession(src, so, providers=["CPUExecutionProvider"])


def cast_weights(model, to: str):
    """Every float32 initializer becomes float16/bfloat16 plus a Cast(to=FLOAT) node feeding its
    old consumers under the old name (the form a 'store weights in half' tool writes)."""
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper
    g = model.graph
    new_inits, casts = [], []
    for t in g.initializer:
        if t.data_type != onnx.TensorProto.FLOAT:
            new_inits.append(t)
            continue
        a = numpy_helper.to_array(t)
        name = t.name + "_" + to
        if to == "fp16":
            nt = numpy_helper.from_array(a.astype(np.float16), name)
        else:
            import ml_dtypes
            nt = numpy_helper.from_array(a.astype(ml_dtypes.bfloat16), name)
        new_inits.append(nt)
        casts.append(helper.make_node("Cast", [name], [t.name], name="cast_" + t.name, to=onnx.TensorProto.FLOAT))
    del g.initializer[:]
    g.initializer.extend(new_inits)
    nodes = casts + list(g.node)
    del g.node[:]
    g.node.extend(nodes)
    return model


def fp16_graph(model):
    """onnxconverter-common's float16 conversion (keep_io_types=False: float16 input and output)."""
    from onnxconverter_common import float16
    return float16.convert_float_to_float16(model, keep_io_types=False)


def far_data(src: str, out: str) -> None:
    """Copies the weights into OUT.data at FAR_OFFSET + their packed offsets (a sparse file)."""
    import onnx
    from onnx.external_data_helper import set_external_data
    m = onnx.load(src, load_external_data=True)
    data = os.path.basename(out) + ".data"
    path = out + ".data"
    if os.path.exists(path):
        os.remove(path)
    off = FAR_OFFSET
    with open(path, "wb") as fh:
        for t in m.graph.initializer:
            if not t.HasField("raw_data") or len(t.raw_data) < 1024:
                continue
            raw = t.raw_data
            fh.seek(off)
            fh.write(raw)
            set_external_data(t, location=data, offset=off, length=len(raw))
            t.ClearField("raw_data")
            t.data_location = onnx.TensorProto.EXTERNAL
            off += (len(raw) + 4095) // 4096 * 4096
    onnx.save_model(m, out)


def main(argv=None) -> int:
    a = sys.argv[1:] if argv is None else argv
    if len(a) != 3 or a[0] not in KINDS:
        die(f"usage: transform_onnx.py {{{','.join(KINDS)}}} IN.onnx OUT.onnx")
    kind, src, out = a
    if not os.path.isfile(src):
        die(f"{src}: no such file")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    import onnx
    try:
        if kind in ("ort-basic", "ort-extended"):
            ort_offline(src, out, kind[4:])
        elif kind == "far-data":
            far_data(src, out)
        else:
            m = onnx.load(src)
            external = has_external(src)
            if kind == "onnxsim":
                import onnxsim
                m, ok = onnxsim.simplify(m)
                if not ok:
                    die("onnxsim could not validate the simplified model", 1)
            elif kind == "onnxslim":
                import onnxslim
                m = onnxslim.slim(m)
            elif kind in ("fp16-weights", "bf16-weights"):
                m = cast_weights(m, kind[:4])
            elif kind == "fp16-graph":
                m = fp16_graph(m)
            save(m, out, external)
    except SystemExit:
        raise
    except Exception as e:
        msg = " ".join(str(e).split())[:500]
        die(f"{kind} failed on {src}: {type(e).__name__}: {msg}", 1)
    size = os.path.getsize(out) + (os.path.getsize(out + ".data") if os.path.exists(out + ".data") else 0)
    print(f"transform_onnx: {kind}: {src} -> {out} ({size / 1e6:.1f} MB listed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
