#!/usr/bin/env python3
"""Tests of the tools themselves. Run:  $VENV/bin/python tools/export/test_tools.py  (or python -m pytest tools/export/test_tools.py)
Exits nonzero on the first failure."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
warnings.filterwarnings("ignore")

import check_logits  # noqa: E402


def _cli(script, *args):
    r = subprocess.run([sys.executable, os.path.join(HERE, script), *map(str, args)],
                       capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    return r.returncode, r.stdout + r.stderr


def test_check_logits():
    rng = np.random.default_rng(0)
    ref = (rng.standard_normal((1, 5, 6, 7, 8)) * 4).astype(np.float32)
    with tempfile.TemporaryDirectory() as d:
        def save(name, a):
            p = os.path.join(d, name)
            np.save(p, a)
            return p
        r = save("ref.npy", ref)
        rc, out = _cli("check_logits.py", save("same.npy", ref.copy()), r)
        assert rc == 0 and out.startswith("PASS"), out
        # within bound, tiny noise
        rc, out = _cli("check_logits.py", save("tiny.npy", ref + 1e-6), r)
        assert rc == 0, out
        # one value off by a lot
        bad = ref.copy(); bad[0, 2, 3, 3, 3] += 0.5
        rc, out = _cli("check_logits.py", save("bad.npy", bad), r)
        assert rc == 1 and out.startswith("FAIL"), out
        # NaN fails
        nan = ref.copy(); nan[0, 0, 0, 0, 0] = np.nan
        rc, out = _cli("check_logits.py", save("nan.npy", nan), r)
        assert rc == 1, out
        # label flip within the value bound fails on labels
        ref2 = np.zeros((1, 3, 2, 2, 2), np.float32); ref2[0, 0] = 10.0; ref2[0, 1, 0, 0, 0] = 10.005
        got2 = ref2.copy(); got2[0, 1, 0, 0, 0] = 9.998  # diff 7e-3 <= bound 1e-2, gap 5e-3 > 1e-3
        rc, out = _cli("check_logits.py", save("got2.npy", got2), save("ref2.npy", ref2))
        assert rc == 1 and "mismatches 1" in out, out
        # ...but a flip where the reference top-2 gap is <= 1e-3 is tolerated
        ref3 = ref2.copy(); ref3[0, 1, 0, 0, 0] = 10.0005
        got3 = ref3.copy(); got3[0, 1, 0, 0, 0] = 9.9995
        rc, out = _cli("check_logits.py", save("got3.npy", got3), save("ref3.npy", ref3))
        assert rc == 0, out
        # the half-precision criterion: 1 flipped label of 8 voxels is 87.5 % agreement
        half_args = ["--atol-rel", "1e-2", "--min-label-agreement", "0.995"]
        rc, out = _cli("check_logits.py", save("got2h.npy", got2), save("ref2h.npy", ref2), *half_args)
        assert rc == 1 and "87.500 %" in out, out
        rc, out = _cli("check_logits.py", save("got2o.npy", got2), save("ref2o.npy", ref2), "--atol-rel", "1e-2",
                       "--min-label-agreement", "0.875")
        assert rc == 0, out
        # bad input -> 2
        rc, out = _cli("check_logits.py", save("short.npy", ref[:, :4]), r)
        assert rc == 2, out
        rc, out = _cli("check_logits.py", os.path.join(d, "missing.npy"), r)
        assert rc == 2, out


def test_exporter_bad_args():
    for args in (["--size", "33", "32", "32"], ["--feature-size", "13"], ["--heads", "3,6,12"],
                 ["--downsample", "mergingv2", "--merge-order", "pre15"]):
        rc, out = _cli("export_swin_unetr.py", *args, "--out", "/nonexistent/x.onnx")
        assert rc != 0 and "error:" in out and len(out.strip().splitlines()) <= 3, (args, out)


def test_input_generator():
    import ort_reference
    a = ort_reference.make_input([1, 1, 32, 64, 32], 3)
    b = ort_reference.make_input([1, 1, 32, 64, 32], 3)
    assert a.dtype == np.float32 and a.shape == (1, 1, 32, 64, 32)
    assert np.array_equal(a, b) and a.min() >= 0 and a.max() <= 1 and a.std() > 0.05


def test_merge_order():
    import torch
    import export_swin_unetr as ex
    from monai.networks.nets import SwinUNETR
    torch.set_num_threads(2)
    args = ex.parse_args(["--feature-size", "12", "--size", "32", "32", "32", "--seed", "5"])
    m15, cfg = ex.make_model(args)
    assert cfg["params"] == 4078220, cfg["params"]  # docs/forward.md §1
    # randomisation touched every parameter (no all-zero / all-one tensors left)
    for n, p in m15.named_parameters():
        assert not torch.all(p == 0) and not torch.all(p == 1), n
    # v15 == MONAI's own forward, built independently
    ref = SwinUNETR(in_channels=1, out_channels=14, feature_size=12).eval()
    ref.load_state_dict(m15.state_dict())
    x = torch.from_numpy(__import__("ort_reference").make_input([1, 1, 32, 32, 32], 0))
    with torch.no_grad():
        y15, yref = m15(x), ref(x)
    assert torch.equal(y15, yref), float((y15 - yref).abs().max())
    # pre15 patch changes the output
    args = ex.parse_args(["--feature-size", "12", "--size", "32", "32", "32", "--seed", "5", "--merge-order", "pre15"])
    mpre, _ = ex.make_model(args)
    assert ex.weights_digest(mpre) == ex.weights_digest(m15)
    with torch.no_grad():
        ypre = mpre(x)
    d = float((ypre - y15).abs().max())
    assert d > 1e-2, d
    # the patched merge uses exactly the old offsets
    seen = _merge_offsets(mpre.swinViT.layers1[0].downsample)
    assert seen == [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 0, 1), (0, 1, 0), (0, 0, 1), (1, 1, 1)], seen


def _merge_offsets(pm):
    import torch
    t = torch.arange(4 * 4 * 4, dtype=torch.float32).reshape(1, 4, 4, 4, 1)
    saved = pm.norm, pm.reduction
    pm.norm, pm.reduction = torch.nn.Identity(), torch.nn.Identity()
    try:
        cat = pm(t)[0, 0, 0, 0]
    finally:
        pm.norm, pm.reduction = saved
    return [(int(v) // 16, (int(v) // 4) % 4, int(v) % 4) for v in cat.tolist()]


def test_monai_merge_orders_match_spec():
    """MONAI 1.6.1 'merging' = the 1.5 order of docs/forward.md §3.5; 'mergingv2' = lexicographic, W fastest."""
    from monai.networks.nets.swin_unetr import PatchMerging, PatchMergingV2
    assert _merge_offsets(PatchMerging(1)) == [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1),
                                                (1, 1, 0), (1, 0, 1), (0, 1, 1), (1, 1, 1)]
    assert _merge_offsets(PatchMergingV2(1)) == [(a, b, c) for a in (0, 1) for b in (0, 1) for c in (0, 1)]


def test_checkpoint_roundtrip():
    import torch
    import export_swin_unetr as ex
    base = ["--feature-size", "12", "--depths", "1,1,1,1", "--seed", "7"]
    m, _ = ex.make_model(ex.parse_args(base))
    with tempfile.TemporaryDirectory() as d:
        for wrap in ("plain", "state_dict", "model", "module"):
            sd = m.state_dict()
            if wrap == "module":
                obj = {"state_dict": {"module." + k: v for k, v in sd.items()}}
            elif wrap == "plain":
                obj = sd
            else:
                obj = {wrap: sd, "epoch": 3}
            p = os.path.join(d, f"{wrap}.pt")
            torch.save(obj, p)
            m2, _ = ex.make_model(ex.parse_args(base[:4] + ["--seed", "99", "--checkpoint", p]))
            assert ex.weights_digest(m2) == ex.weights_digest(m), wrap
        # wrong config -> clear error
        rc, out = _cli("export_swin_unetr.py", "--feature-size", "24", "--checkpoint", os.path.join(d, "plain.pt"),
                       "--out", os.path.join(d, "x", "model.onnx"))
        assert rc != 0 and "error:" in out and "checkpoint" in out, out


def test_export_roundtrip():
    """torchscript export of a tiny config runs in ORT and matches torch."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "m", "model.onnx")
        rc, log = _cli("export_swin_unetr.py", "--feature-size", "12", "--depths", "1,1,1,1", "--size", "32", "32", "64",
                       "--merge-order", "pre15", "--exporter", "torchscript", "--check", "--out", out)
        assert rc == 0, log
        import json
        chk = json.load(open(os.path.join(d, "m", "export_check.json")))["torch_vs_ort"]
        assert chk["max_abs_diff"] <= 1e-4 * max(1, chk["max_abs_torch"]), chk
        cfg = json.load(open(os.path.join(d, "m", "model.json")))
        assert cfg["merge_order"] == "pre15" and cfg["cube"] == [32, 32, 64] and cfg["depths"] == [1, 1, 1, 1]
        import onnx
        import onnx_summary
        orders = onnx_summary.merge_orders(onnx.load(out))
        assert len(orders) == 4 and all(onnx_summary.classify(o) == "pre15" for _, o in orders), orders
        rc, log = _cli("ort_reference.py", out, "--shape", 1, 1, 32, 32, 64, "--save-input",
                       os.path.join(d, "in.npy"), "--out", os.path.join(d, "y.npy"))
        assert rc == 0, log
        rc, log = _cli("check_logits.py", os.path.join(d, "y.npy"), os.path.join(d, "y.npy"))
        assert rc == 0, log
        _check_transforms(out, os.path.join(d, "in.npy"), os.path.join(d, "y.npy"), d)


def _check_transforms(model, x_path, y_path, d):
    """transform_onnx.py: 16-bit weights keep the graph's numbers (up to their rounding), with the
    weights really stored in 16 bits and read through Casts; far data lands past 2 GiB."""
    import numpy as np
    import onnx
    y = np.load(y_path)
    for kind, dtype, tol in (("fp16-weights", onnx.TensorProto.FLOAT16, 2e-2), ("bf16-weights", onnx.TensorProto.BFLOAT16, 1e-1)):
        out = os.path.join(d, kind, "model.onnx")
        rc, log = _cli("transform_onnx.py", kind, model, out)
        assert rc == 0, log
        m = onnx.load(out)
        big = [t for t in m.graph.initializer if len(t.dims) >= 2 and t.data_type not in (onnx.TensorProto.INT64,
                                                                                            onnx.TensorProto.INT32)]
        assert big and all(t.data_type == dtype for t in big), kind
        assert {t.name for t in big} <= {n.input[0] for n in m.graph.node if n.op_type == "Cast"}, kind
        rc, log = _cli("ort_reference.py", out, "--input", x_path, "--out", os.path.join(d, kind + ".npy"))
        assert rc == 0, log
        err = float(np.abs(np.load(os.path.join(d, kind + ".npy")) - y).max())
        assert 0 < err <= tol * max(1.0, float(np.abs(y).max())), (kind, err)
    out = os.path.join(d, "far", "model.onnx")
    rc, log = _cli("transform_onnx.py", "far-data", model, out)
    assert rc == 0, log
    m = onnx.load(out, load_external_data=False)
    offs = [int(e.value) for t in m.graph.initializer for e in t.external_data if e.key == "offset"]
    assert offs and min(offs) >= 2 ** 31, offs


if __name__ == "__main__":
    fails = 0
    for name, fn in list(globals().items()):
        if name.startswith("test_") and callable(fn):
            try:
                fn()
                print(f"ok   {name}")
            except Exception as e:  # noqa: BLE001
                fails += 1
                import traceback
                traceback.print_exc()
                print(f"FAIL {name}: {e}")
    print("all passed" if not fails else f"{fails} failed")
    sys.exit(1 if fails else 0)
