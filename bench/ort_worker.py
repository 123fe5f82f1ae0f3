#!/usr/bin/env python3
"""ONNX Runtime side of bench/swinbench.py: one configuration per process.

  ort_worker.py MODEL.onnx IN.npy --config NAME [--threads N]

NAME is one of CONFIGS below. The process creates one InferenceSession, prints one JSON line
{"event": "ready", ...} and then answers commands read line by line on stdin, one JSON line
each on stdout (the same protocol as bench/swinrun_worker.c):
  run          -> {"event": "run", "seconds": S}   one sess.run() of the window
  save OUT.npy -> {"event": "saved", "path": ...}  the logits of the last run (float32)
  quit         -> exit 0
Errors: {"event": "error", "message": ...} then exit 1 (2 for bad arguments).
"""
from __future__ import annotations

import json
import sys
import time

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


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def fail(msg: str, code: int = 1):
    emit({"event": "error", "message": " ".join(str(msg).split())})
    sys.exit(code)


def rss_kib():
    now = peak = -1
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    now = int(line.split()[1])
                elif line.startswith("VmHWM:"):
                    peak = int(line.split()[1])
    except OSError:
        pass
    return now, peak


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
    import numpy as np
    import onnxruntime as ort
    try:
        x = np.ascontiguousarray(np.load(a.input, allow_pickle=False), dtype=np.float32)
    except Exception as e:
        fail(f"{a.input}: {e}", 2)
    if x.ndim == 4:
        x = x[None]
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
    y = None
    for line in sys.stdin:
        cmd = line.strip()
        if cmd == "run":
            t0 = time.perf_counter()
            try:
                y = sess.run(None, {name: x})[0]
            except Exception as e:
                fail(f"{a.config}: run failed: {e}")
            dt = time.perf_counter() - t0
            emit({"event": "run", "seconds": dt, "rss_hwm_kib": rss_kib()[1]})
        elif cmd.startswith("save "):
            if y is None:
                fail("save: no run yet")
            np.save(cmd[5:], np.ascontiguousarray(y, dtype=np.float32))
            emit({"event": "saved", "path": cmd[5:]})
        elif cmd == "quit":
            break
        else:
            fail(f"unknown command {cmd!r} (run, save PATH, quit)", 2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
