#!/usr/bin/env python3
"""tools/gpu/gpu_check_report.py: a step killed after it started is named as started and not
finished, beside the steps that finished; the swinrun-vs-cuDNN/cuBLAS tables from a bench
result with known times carry the ratios computed here by hand; and, given the JSON that
bench_cuda_ops wrote (argument, when it exists), the tables render from the real schema.

    test_gpu_check_report.py [bench_cuda_ops.json ...]
"""
import json
import os
import subprocess
import sys
import tempfile

REPORT = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "gpu", "gpu_check_report.py")


def conv(name, side, cin, cout, uses, swin, cudnn):
    return {"name": name, "side": side, "cin": cin, "cout": cout, "k": 3, "stride": 1, "uses": uses,
            "swinrun_ms": swin, "cudnn_ms": cudnn, "ratio": None, "max_rel_diff": 1e-6, "cudnn_algo": "IMPLICIT_GEMM"}


def gemm(name, M, N, K, ms):
    return {"name": name, "M": M, "N": N, "K": K, "cublas_ms": ms}


def bench(mode):
    return {"device": "test GPU", "dtype": mode, "reps": 10, "div": 1, "reference": "cuDNN test", "timing": "events",
            "ops": [], "ok": True,
            # 2 x 2.0 + 1 x 3.0 = 7.0 against 2 x 0.5 + 1 x 2.0 = 3.0: 2.33
            "convs": [conv("a", 96, 48, 48, 2, 2.0, 0.5), conv("b", 48, 96, 48, 1, 3.0, 2.0),
                      conv("skipped", 3, 768, 768, 2, None, None)],
            "conv_total": {"swinrun_ms": 7.0, "cudnn_ms": 3.0, "ratio": 7.0 / 3.0},
            # attention 1.5 against qkv + proj = 0.25 + 0.125: 4.00; MLP 1.2 against 0.2 + 0.4: 2.00
            "swin": [{"stage": 0, "gemms": [gemm("qkv", 110592, 144, 48, 0.25), gemm("proj", 110592, 48, 48, 0.125),
                                            gemm("fc1", 110592, 192, 48, 0.2), gemm("fc2", 110592, 48, 192, 0.4)],
                      "swin_attention_ms": 1.5, "swin_mlp_ms": 1.2}]}


def render(result, tmp, status="passed"):
    """The Markdown gpu_check_report.py writes for a state folder holding one bench step."""
    state, out = os.path.join(tmp, "state"), os.path.join(tmp, "out")
    os.makedirs(state, exist_ok=True)
    json.dump(result, open(os.path.join(state, "bench.json"), "w"))
    open(os.path.join(state, "bench.status"), "w").write(status + "\n")
    subprocess.run([sys.executable, REPORT, state, out, "build bench"], check=True)
    json.load(open(os.path.join(out, "gpu_check.json")))   # parses
    return open(os.path.join(out, "gpu_check.md")).read()


def killed_step(tmp):
    """A step whose call was killed after it started: the report names it, and what finished."""
    state = os.path.join(tmp, "killed")
    os.makedirs(state)
    for step, status in (("env", "passed"), ("build", "started")):
        open(os.path.join(state, f"{step}.status"), "w").write(status + "\n")
    open(os.path.join(state, "build.log"), "w").write("[12/80] Building CUDA object conv3d.cu.o\n")
    subprocess.run([sys.executable, REPORT, state, os.path.join(tmp, "killed_out"), "env build tests"], check=True)
    md = open(os.path.join(tmp, "killed_out", "gpu_check.md")).read()
    want = ["| env | passed |", "| build | started, not finished", "| tests | not-run |", "conv3d.cu.o"]
    missing = [w for w in want if w not in md]
    print(("FAIL killed step: missing " + repr(missing)) if missing else "ok   killed step named")
    return not missing


def main():
    with tempfile.TemporaryDirectory() as tmp:
        ok = killed_step(tmp)
        md = render({"f32_rc": 0, "f16_rc": 0, "f32": bench("f32"), "f16": bench("f16"), "nsys": True}, tmp)
        lines = md.splitlines()
        want = [("| a | 96 | 48 | 48 | 3 | 2 | 2.000 | 0.500 | 4.00 |", "conv row ratio"),
                ("| skipped | 3 | 768 | 768 | 3 | 2 | - | - | - |", "skipped conv row"),
                ("| 7.000 | 3.000 | 2.33 |", "conv total"),
                ("swin_attention (qkv+proj) | 1.5000 | 0.3750 | 4.00 |", "attention ratio"),
                ("swin_mlp (fc1+fc2) | 1.2000 | 0.6000 | 2.00 |", "MLP ratio")]
        for text, what in want:
            n = sum(text in ln for ln in lines)
            if n != 2:  # once per mode
                print(f"FAIL {what}: '{text}' found {n} times, expected 2")
                ok = False
            else:
                print(f"ok   {what}")
        for p in sys.argv[1:]:
            if not os.path.exists(p):
                print(f"skip {p} (not written: run cuda_bench_smoke first)")
                continue
            b = json.load(open(p))
            md = render({"f32_rc": 0, "f16_rc": 0, b["dtype"]: b, "nsys": True}, tmp)
            rows = [ln for ln in md.splitlines()
                    if ln.startswith("| ") and any(a in ln for a in ("_GEMM |", "| GEMM |"))]
            if len(rows) < 1 or "every conv3d of one forward" not in md:
                print(f"FAIL {p}: no conv rows in the report")
                ok = False
            else:
                print(f"ok   {p}: {len(rows)} conv rows with a cuDNN algorithm")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
