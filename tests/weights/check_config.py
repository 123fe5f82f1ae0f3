#!/usr/bin/env python3
"""Compare the configuration swin_onnx_load detects (loader_dump's JSON) with a test case's
case.json / model.json (the configuration the model was exported with).

    check_config.py LOADER_DUMP CASE_DIR
Exit 0 when every field agrees; prints each mismatch otherwise."""
import json
import os
import subprocess
import sys


def provenance(want: dict) -> dict:
    """What `swinrun info` must say of how the file was made (tools/export/make_test_data.sh records
    the exporter and, for rewritten models, the tools/export/transform_onnx.py kind)."""
    exp = {"exporter": "dynamo exporter" if want.get("exporter") == "dynamo" else "TorchScript exporter"}
    derived = want.get("derived", "")
    exp["post"] = {"onnxsim": "onnx-simplifier", "ort-basic": "ONNX Runtime offline optimisation"}.get(derived, "")
    exp["weight_storage"] = {"fp16-weights": "float16 (", "bf16-weights": "bfloat16 (",
                             "fp16-graph": "float16 graph"}.get(derived, "float32")
    return exp


def main() -> int:
    dump, case = sys.argv[1], sys.argv[2]
    cfg_path = next((os.path.join(case, n) for n in ("case.json", "model.json") if os.path.isfile(os.path.join(case, n))), None)
    model = os.path.join(case, "model.onnx")
    if not cfg_path or not os.path.isfile(model):
        print(f"FAIL: {case} has no model.onnx + case.json (run tools/export/make_test_data.sh)")
        return 1
    want = json.load(open(cfg_path))
    r = subprocess.run([dump, model], capture_output=True, text=True)
    try:
        got = json.loads(r.stdout)
    except ValueError:
        print(f"FAIL: loader_dump printed no JSON (rc {r.returncode}): {r.stdout[:300]} {r.stderr[:300]}")
        return 1
    if got.get("status") != "SWIN_OK":
        print(f"FAIL: load failed: {got.get('status')}: {got.get('message')}")
        return 1
    f = want["feature_size"]
    expect = {
        "in_channels": want["in_channels"],
        "out_channels": want["out_channels"],
        "feature_size": f,
        "depths": want["depths"],
        "heads": want["heads"],
        "window": want["window"],
        "mlp_hidden": [int(f * 2 ** s * want.get("mlp_ratio", 4.0)) for s in range(4)],
        "qkv_bias": want["qkv_bias"],
        "normalize": want["normalize"],
        "patch_norm": want["patch_norm"],
        "use_v2": want["use_v2"],
        "instnorm_affine": want["instnorm_affine"],
        "batch_norm": want.get("norm") == "batch",
        "merge_kind": want["merge_order"],
        "cube": [0, 0, 0] if want.get("dynamic") else want["cube"],
    }
    if "params" in want and want.get("norm") != "batch":   # a folded batch norm keeps 1 of its 2 vectors
        expect["param_count"] = want["params"]
    if want.get("opset"):
        expect["opset"] = want["opset"]
    bad = 0
    for k, v in expect.items():
        ok = got.get(k) == v
        bad += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {k}: detected {got.get(k)!r}, exported {v!r}")
    for k, v in provenance(want).items():
        ok = (v in got.get(k, "")) if v else got.get(k) == ""
        bad += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {k}: detected {got.get(k)!r}, expected it to contain {v!r}")
    print("PASS" if not bad else f"FAILED ({bad} fields)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
