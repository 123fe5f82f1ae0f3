"""The configurations of bench/peers/swinbench.py: which runtime and device each is, the command
line of its worker process, and which of them can run on this machine (Python packages, GPU,
ONNX Runtime's CUDA provider, a built swinrun_bench_worker)."""
from __future__ import annotations

import os
import subprocess
import sys

from bench_common import HERE, REPO

ORT_CONFIGS = ["ort-cpu", "ort-cpu-noarena", "ort-cpu-samereq", "ort-cuda", "ort-cuda-lowmem"]
PEER_CONFIGS = ["ov-cpu-f32", "ov-cpu-default", "torch-cpu", "torch-cuda", "torch-cuda-tf32",
                "torch-cuda-amp"]                                # bench/peers/peer_worker.py
SW_CONFIGS = ["swinrun-cpu", "swinrun-cpu-bf16", "swinrun-cuda", "swinrun-cuda-fp16"]
OTHER_CONFIGS = ORT_CONFIGS + PEER_CONFIGS                      # everything swinrun is paired with
ALL_CONFIGS = OTHER_CONFIGS + SW_CONFIGS
DEVICE = {"ort-cpu": "cpu", "ort-cpu-noarena": "cpu", "ort-cpu-samereq": "cpu", "ort-cuda": "cuda",
          "ort-cuda-lowmem": "cuda", "ov-cpu-f32": "cpu", "ov-cpu-default": "cpu", "torch-cpu": "cpu",
          "torch-cuda": "cuda", "torch-cuda-tf32": "cuda", "torch-cuda-amp": "cuda",
          "swinrun-cpu": "cpu", "swinrun-cpu-bf16": "cpu", "swinrun-cuda": "cuda", "swinrun-cuda-fp16": "cuda"}
SW_PRECISION = {"swinrun-cpu": "fp32", "swinrun-cpu-bf16": "bf16", "swinrun-cuda": "fp32", "swinrun-cuda-fp16": "fp16"}


def runtime_of(c: str) -> str:
    if c in ORT_CONFIGS:
        return "onnxruntime"
    if c.startswith("ov-"):
        return "openvino"
    if c.startswith("torch-"):
        return "pytorch"
    return "swinrun"


def worker_argv(c: str, model: str, in_path: str, threads: int, worker_bin: str | None, swin_model: str = None) -> list:
    """The command line of configuration c's worker process (swin_model: what swinrun's workers load,
    default the peers' model)."""
    if c in ORT_CONFIGS:
        return [sys.executable, os.path.join(HERE, "ort_worker.py"), model, in_path, "--config", c,
                "--threads", str(threads)]
    if c in PEER_CONFIGS:
        return [sys.executable, os.path.join(HERE, "peer_worker.py"), model, in_path, "--config", c,
                "--threads", str(threads)]
    return [worker_bin, swin_model or model, in_path, "--threads", str(threads), "--backend", DEVICE[c],
            "--precision", SW_PRECISION[c]]



def peer_missing(c: str) -> str | None:
    """Why configuration c cannot run here (its Python package is not installed), else None."""
    import importlib.util
    mod = "openvino" if c.startswith("ov-") else "torch"
    if importlib.util.find_spec(mod) is None:
        return f"the Python package {mod} is not installed in {sys.executable}'s environment"
    if c.startswith("torch-") and importlib.util.find_spec("monai") is None:
        return f"the Python package monai is not installed in {sys.executable}'s environment"
    return None


def find_swinrun(build: str | None):
    """(swinrun CLI, swinrun_bench_worker) paths, either may be None."""
    dirs = [build] if build else [os.path.join(REPO, d) for d in ("build-bench", "build")]
    for d in dirs:
        cli = os.path.join(d, "swinrun")
        worker = os.path.join(d, "bench", "swinrun_bench_worker")
        if os.path.isfile(worker) or os.path.isfile(cli):
            return (cli if os.path.isfile(cli) else None), (worker if os.path.isfile(worker) else None)
    return None, None


def swinrun_volume_support(cli: str | None) -> str | None:
    """None when `swinrun --help` shows a NIfTI volume path, else why not."""
    if not cli:
        return "no swinrun CLI found"
    try:
        h = subprocess.run([cli, "--help"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"swinrun --help failed ({e})"
    if ".nii" in h:
        return None
    return "this swinrun has no NIfTI volume path (`swinrun --help` lists no .nii usage)"


def runnable(wanted: list, gpus: list, worker_bin: str | None):
    """(the configurations among wanted that can run here, {configuration: why it is skipped})."""
    skipped = {}
    configs = []
    ort_cuda = None
    for c in wanted:
        if DEVICE[c] == "cuda" and not gpus:
            skipped[c] = "no NVIDIA GPU on this machine (nvidia-smi missing or lists none)"
            continue
        if c in PEER_CONFIGS:
            why = peer_missing(c)
            if why:
                skipped[c] = why
                continue
        if DEVICE[c] == "cuda" and c in ORT_CONFIGS:
            if ort_cuda is None:
                import onnxruntime as ort
                ort_cuda = "CUDAExecutionProvider" in ort.get_available_providers()
            if not ort_cuda:
                skipped[c] = "this onnxruntime has no CUDAExecutionProvider (the onnxruntime-gpu package provides it)"
                continue
        configs.append(c)
    for c in [c for c in configs if c in SW_CONFIGS]:
        if not worker_bin or not os.path.isfile(worker_bin):
            skipped[c] = ("swinrun_bench_worker not built (cmake --build BUILD --target swinrun_bench_worker; "
                          "or give --build/--worker)")
            configs.remove(c)
    return configs, skipped
