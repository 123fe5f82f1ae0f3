#!/usr/bin/env python3
"""ONNX Runtime side of bench/peers/swinbench.py: one configuration per process.

  ort_worker.py MODEL.onnx IN.npy --config NAME [--threads N]

NAME is one of CONFIGS below. The process creates one InferenceSession and then speaks the
line protocol of bench/peers/worker_protocol.py ("run" is one sess.run() of the window).
"""
from __future__ import annotations

import sys
import time

from worker_protocol import emit, fail, load_window, rss_kib, serve

# name -> (provider, description). The memory-saving settings are the ones ONNX Runtime's
# maintainers recommend for lower peak memory: no CPU arena, or an arena that grows by
# exactly what is requested (kSameAsRequested); on CUDA, no max cuDNN workspace + kSameAsRequested.
CONFIGS = {
    "ort-cpu": ("cpu", "CPU provider, defaults (arena on, kNextPowerOfTwo)"),
    "ort-cpu-noarena": ("cpu", "CPU provider, enable_cpu_mem_arena=False"),
    "ort-cpu-samereq": ("cpu", "CPU provider, arena_extend_strategy kSameAsRequested (env allocator)"),
    "ort-cuda": ("cuda", "CUDA provider, defaults"),
    "ort-cuda-lowmem": ("cuda", "CUDA provider, cudnn_conv_use_max_workspace=0 + arena kSameAsRequested"),
}


def make_session(ort, model: str, config: str, threads: int):
    so = ort.SessionOptions()
    if threads:
        so.intra_op_num_threads = threads
    if config == "ort-cpu":
        providers = ["CPUExecutionProvider"]
    elif config == "ort-cpu-noarena":
        so.enable_cpu_mem_arena = False
        providers = ["CPUExecutionProvider"]
    elif config == "ort-cpu-samereq":
        # The CPU provider takes no arena options of its own: register a CPU arena with
        # kSameAsRequested (1) in the environment and make the session use it.
        mi = ort.OrtMemoryInfo("Cpu", ort.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, ort.OrtMemType.DEFAULT)
        ort.create_and_register_allocator(mi, ort.OrtArenaCfg(0, 1, -1, -1))
        so.add_session_config_entry("session.use_env_allocators", "1")
        providers = ["CPUExecutionProvider"]
    elif config == "ort-cuda":
        providers = ["CUDAExecutionProvider"]
    elif config == "ort-cuda-lowmem":
        providers = [("CUDAExecutionProvider",
                      {"cudnn_conv_use_max_workspace": "0", "arena_extend_strategy": "kSameAsRequested"})]
    else:
        fail(f"unknown --config {config!r} (one of {', '.join(CONFIGS)})", 2)
    if CONFIGS[config][0] == "cuda" and "CUDAExecutionProvider" not in ort.get_available_providers():
        fail("this onnxruntime has no CUDAExecutionProvider (install onnxruntime-gpu)", 1)
    sess = ort.InferenceSession(model, so, providers=providers)
    if CONFIGS[config][0] == "cuda" and sess.get_providers()[0] != "CUDAExecutionProvider":
        fail(f"CUDA provider did not load (session providers {sess.get_providers()})", 1)
    return sess


def main(argv=None) -> int:
    import argparse
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("model")
    p.add_argument("input")
    p.add_argument("--config", required=True, choices=sorted(CONFIGS))
    p.add_argument("--threads", type=int, default=0, help="intra-op threads (0 = ORT default: every core)")
    a = p.parse_args(argv)
    rss_base, _ = rss_kib()
    import onnxruntime as ort
    x = load_window(a.input)
    rss_imported, _ = rss_kib()
    t0 = time.perf_counter()
    try:
        sess = make_session(ort, a.model, a.config, a.threads)
    except Exception as e:
        fail(f"{a.config}: cannot create the session: {e}")
    t_create = time.perf_counter() - t0
    name = sess.get_inputs()[0].name
    rss_ready, _ = rss_kib()
    emit({"event": "ready", "config": a.config, "providers": sess.get_providers(), "ort_version": ort.__version__,
          "description": CONFIGS[a.config][1], "threads": a.threads, "create_seconds": t_create,
          "rss_base_kib": rss_base, "rss_imported_kib": rss_imported, "rss_ready_kib": rss_ready})
    return serve(a.config, lambda: sess.run(None, {name: x})[0])


if __name__ == "__main__":
    sys.exit(main())
