#!/usr/bin/env python3
"""The peers of bench/peers/swinbench.py other than ONNX Runtime: one configuration per process.

  peer_worker.py MODEL.onnx IN.npy --config NAME [--threads N] [--seed S]

NAME is one of CONFIGS below. The line protocol of bench/worker_protocol.py.

OpenVINO reads the ONNX file itself. PyTorch runs MONAI's SwinUNETR eagerly (on the CPU, or
on the GPU: the window goes up and the logits come back inside each timed run, as swinrun's
worker does; cuDNN's autotuning is left at PyTorch's default, off) with the
configuration of model.json next to the ONNX file (written by tools/export/export_swin_unetr.py)
and that export's randomised weights: tools/export/export_swin_unetr.py's randomize(seed) (seed from
--seed, else the --seed of the export's cmdline.txt, else 0), then checked against every ONNX
initializer whose name and shape match a parameter (the exporters keep most names); a
mismatch is an error, so the weights are the export's or the worker refuses to run.
"""
from __future__ import annotations

import json
import os
import re
import sys
import time

from worker_protocol import emit, fail, load_window, rss_kib, serve

CONFIGS = {
    "ov-cpu-f32": "OpenVINO CPU plugin, INFERENCE_PRECISION_HINT=f32",
    "ov-cpu-default": "OpenVINO CPU plugin, default precision (bf16 where the CPU has native bf16, else f32)",
    "torch-cpu": "PyTorch eager (MONAI SwinUNETR), float32, torch.inference_mode",
    "torch-cuda": "PyTorch eager on the GPU, float32 (TF32 off), torch.inference_mode",
    "torch-cuda-tf32": "PyTorch eager on the GPU, TF32 matmuls and convolutions",
    "torch-cuda-amp": "PyTorch eager on the GPU, torch.autocast float16 (AMP), logits float32",
}

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def export_seed(model: str, seed: int | None) -> int:
    """--seed, else the export's --seed from cmdline.txt next to the model, else 0."""
    if seed is not None:
        return seed
    try:
        txt = open(os.path.join(os.path.dirname(os.path.abspath(model)), "cmdline.txt")).read()
        first = txt.split("|")[0]
        m = re.search(r"--seed\s+(\d+)", first)
        return int(m.group(1)) if m else 0
    except OSError:
        return 0


def make_openvino(model: str, config: str, threads: int):
    import openvino as ov
    core = ov.Core()
    props = {}
    if config == "ov-cpu-f32":
        props["INFERENCE_PRECISION_HINT"] = "f32"
    if threads:
        props["INFERENCE_NUM_THREADS"] = threads
    compiled = core.compile_model(model, "CPU", props)
    req = compiled.create_infer_request()
    prec = compiled.get_property("INFERENCE_PRECISION_HINT")   # what the plugin picked
    info = {"ov_version": ov.get_version(),
            "inference_precision": prec.get_type_name() if hasattr(prec, "get_type_name") else str(prec),
            "num_threads": int(compiled.get_property("INFERENCE_NUM_THREADS")),
            "cpu_capabilities": " ".join(core.get_property("CPU", "OPTIMIZATION_CAPABILITIES"))}

    def run(x):
        req.infer({0: x})
        return req.get_output_tensor(0).data

    return run, info


def make_torch(model: str, config: str, threads: int, seed: int | None):
    import numpy as np
    import onnx
    import torch
    from onnx import numpy_helper
    sys.path.insert(0, os.path.join(REPO, "tools", "export"))
    import export_swin_unetr as ex
    cfg_path = os.path.join(os.path.dirname(os.path.abspath(model)), "model.json")
    try:
        cfg = json.load(open(cfg_path))
    except (OSError, ValueError) as e:
        fail(f"{config} needs the export's model.json next to the model ({cfg_path}): {e}", 1)
    if threads:
        torch.set_num_threads(threads)
    net = ex.build_model(cfg)
    s = export_seed(model, seed)
    ex.randomize(net, s)
    params = dict(net.named_parameters())
    g = onnx.load(model, load_external_data=True).graph
    checked = 0
    for init in g.initializer:
        p = params.get(init.name)
        if p is None:
            continue
        w = numpy_helper.to_array(init)
        if tuple(w.shape) != tuple(p.shape):
            continue
        if not np.array_equal(w.astype(np.float32), p.detach().numpy()):
            fail(f"{config}: parameter {init.name} differs from the ONNX initializer: the weights are not the "
                 f"export's (seed {s}); give --seed", 1)
        checked += 1
    del g
    if checked == 0:
        fail(f"{config}: no ONNX initializer matches a parameter by name: cannot check the weights", 1)
    info = {"torch_version": torch.__version__, "seed": s, "initializers_checked": checked,
            "params": len(params), "num_threads": torch.get_num_threads()}
    dev = "cuda" if config.startswith("torch-cuda") else "cpu"
    if dev == "cuda":
        if not torch.cuda.is_available():
            fail(f"{config}: torch sees no CUDA device", 1)
        net = net.cuda()
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = config == "torch-cuda-tf32"
        info.update(device=torch.cuda.get_device_name(), torch_cuda=torch.version.cuda)
    amp = config == "torch-cuda-amp"

    def run(x):
        with torch.inference_mode(), torch.autocast("cuda", dtype=torch.float16, enabled=amp):
            return net(torch.from_numpy(x).to(dev)).float().cpu().numpy()

    return run, info


def main(argv=None) -> int:
    import argparse
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("model")
    p.add_argument("input")
    p.add_argument("--config", required=True, choices=sorted(CONFIGS))
    p.add_argument("--threads", type=int, default=0, help="threads (0 = the runtime's default: every core)")
    p.add_argument("--seed", type=int, default=None, help="torch-*: the export's weight seed")
    a = p.parse_args(argv)
    rss_base, _ = rss_kib()
    x = load_window(a.input)
    if a.config.startswith("torch-"):
        import torch  # noqa: F401  (counted in the base RSS, as onnxruntime is for ort_worker.py)
    else:
        import openvino  # noqa: F401
    rss_imported, _ = rss_kib()
    t0 = time.perf_counter()
    try:
        run, info = make_torch(a.model, a.config, a.threads, a.seed) if a.config.startswith("torch-") \
            else make_openvino(a.model, a.config, a.threads)
    except SystemExit:
        raise
    except Exception as e:
        fail(f"{a.config}: cannot create the model: {e}")
    t_create = time.perf_counter() - t0
    rss_ready, _ = rss_kib()
    emit({"event": "ready", "config": a.config, "description": CONFIGS[a.config], "threads": a.threads,
          "create_seconds": t_create, "rss_base_kib": rss_base, "rss_imported_kib": rss_imported,
          "rss_ready_kib": rss_ready, **info})
    return serve(a.config, lambda: run(x))


if __name__ == "__main__":
    sys.exit(main())
