#!/usr/bin/env python3
"""swinbench: swinrun against ONNX Runtime, OpenVINO and PyTorch on the same ONNX file and input, in one run.

  PY=$(tools/ci/setup_env.sh --print-python)
  $PY bench/peers/swinbench.py --export --feature-size 48 --cube 96 96 96 --runs 3
  $PY bench/peers/swinbench.py --model test-data/f12_c32_ts/model.onnx --input test-data/f12_c32_ts/input.npy

Configurations (each in its own process, so that peak RSS does not mix):
  ort-cpu           ONNX Runtime CPU provider, defaults
  ort-cpu-noarena   ONNX Runtime CPU provider, enable_cpu_mem_arena=False
  ort-cpu-samereq   ONNX Runtime CPU provider, arena_extend_strategy kSameAsRequested
  ort-cuda          ONNX Runtime CUDA provider, defaults                        (GPU only)
  ort-cuda-lowmem   CUDA provider, cudnn_conv_use_max_workspace=0 + kSameAsRequested (GPU only)
  ov-cpu-f32        OpenVINO CPU plugin, INFERENCE_PRECISION_HINT=f32            (bench/peers/peer_worker.py)
  ov-cpu-default    OpenVINO CPU plugin, its default precision (bf16 on CPUs with native bf16;
                    the results name what the compiled model picked)
  torch-cpu         PyTorch eager, MONAI SwinUNETR with the export's weights   (bench/peers/peer_worker.py)
  torch-cuda        the same on the GPU, float32 with TF32 off                   (GPU only)
  torch-cuda-tf32   the same with TF32 matmuls and convolutions                  (GPU only)
  torch-cuda-amp    the same under torch.autocast float16 (AMP)                  (GPU only)
  swinrun-cpu       swinrun's CPU backend (bench/peers/swinrun_worker.c on the C API)
  swinrun-cpu-bf16  swinrun's CPU backend, --precision bf16
  swinrun-cuda      swinrun's CUDA backend                                       (GPU only)
  swinrun-cuda-fp16 swinrun's CUDA backend, --precision fp16                     (GPU only)
Without an NVIDIA GPU (nvidia-smi -L lists none) the GPU configurations are skipped and the
output says so.

Schedule, per device: the swinrun processes (one per swinrun configuration) start first and make
--warmup untimed runs; then the peers (ONNX Runtime, OpenVINO, PyTorch configurations) take
turns, each in a process alive only during its own phase: --warmup untimed runs, then --runs
rounds run back to back, the peer then each swinrun configuration. Each swinrun/peer time ratio
is taken within such a round (a noisy machine slows both); the reported ratio is the median of
the round ratios. swinrun's own time per window is over all its timed runs (--runs per peer).
Thread scaling (--scaling-threads N): afterwards every configuration runs again in a fresh
process with N threads (--warmup untimed runs, --scaling-runs timed), reported next to its
all-threads median.

Reported per configuration: median/min/max seconds per window; peak RSS of its process (KiB
from wait4(), i.e. the OS's ru_maxrss; an ORT process includes the Python interpreter, numpy
and onnxruntime, whose RSS before the session is reported as its base); swinrun's planned bytes
(weights + arena); device memory (NVML or nvidia-smi polling) on a GPU; agreement of the logits
with the reference configuration (ort-cpu unless --reference): max |logit diff|, the project's
criterion (tools/export/check_logits.py: max|d| <= 1e-3 * max(1, max|ref|) and labels equal where the
reference's top-2 gap > 1e-3), % voxels with the same label, Dice per class of the labels.

Input: --input X.npy (float32 (1, C, D, H, W)), --input X.nii[.gz] (a NIfTI volume: the window
is its centre cube, HU clipped to [-175, 250] and scaled to [0, 1] when it looks like CT, else
min-max scaled), or nothing: a deterministic CT-like cube from tools/export/ort_reference.py (--seed).
Per-volume timing of a NIfTI (swinrun IN.nii.gz OUT.nii.gz) is reported only when the swinrun
CLI has a volume path; otherwise the output says it was not measured.

Output: a Markdown table on stdout, and in --out-dir (default bench/out/<model>_<cube>): results.json,
results.md and results.png (time and memory per configuration). Exit status: 0 all ran and every
configuration meets the agreement criterion, 1 a configuration failed or disagreed, 2 bad arguments.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import queue
import shutil
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tools", "export"))

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
MiB = 1024.0 * 1024.0


def runtime_of(c: str) -> str:
    if c in ORT_CONFIGS:
        return "onnxruntime"
    if c.startswith("ov-"):
        return "openvino"
    if c.startswith("torch-"):
        return "pytorch"
    return "swinrun"


def worker_argv(c: str, model: str, in_path: str, threads: int, worker_bin: str | None) -> list:
    """The command line of configuration c's worker process."""
    if c in ORT_CONFIGS:
        return [sys.executable, os.path.join(HERE, "ort_worker.py"), model, in_path, "--config", c,
                "--threads", str(threads)]
    if c in PEER_CONFIGS:
        return [sys.executable, os.path.join(HERE, "peer_worker.py"), model, in_path, "--config", c,
                "--threads", str(threads)]
    return [worker_bin, model, in_path, "--threads", str(threads), "--backend", DEVICE[c],
            "--precision", SW_PRECISION[c]]


def pair_ratios(pairs: dict, results: dict) -> list:
    """Per (peer, swinrun configuration): the round ratios swinrun/peer and their median."""
    out = []
    for (o, sw), lst in pairs.items():
        rs = [ts / to for to, ts in lst]
        mo = results.get(o, {}).get("peak_rss_bytes")
        ms = results.get(sw, {}).get("peak_rss_bytes")
        out.append({"ort": o, "peer": o, "swinrun": sw,
                    "pairs": [{"ort_seconds": to, "peer_seconds": to, "swinrun_seconds": ts} for to, ts in lst],
                    "time_ratios": rs, "time_ratio_median": statistics.median(rs),
                    "peak_rss_ratio": (ms / mo) if (mo and ms) else None})
    return out


class BadArgs(Exception):
    pass


def die(msg: str, code: int = 2):
    print(f"swinbench: error: {msg}", file=sys.stderr)
    sys.exit(code)


def log(msg: str):
    print(f"swinbench: {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# machine


def machine_info() -> dict:
    info = {"hostname": platform.node(), "cpus_online": os.cpu_count(), "kernel": platform.release()}
    try:
        with open("/proc/cpuinfo") as f:
            txt = f.read()
        first = txt.split("\n\n")[0]
        kv = {}
        for line in first.splitlines():
            if ":" in line:
                k, v = line.split(":", 1)
                kv[k.strip()] = v.strip()
        info["cpu_model"] = kv.get("model name", "?")
        info["cpu_family"] = kv.get("cpu family")
        info["cpu_model_number"] = kv.get("model")
        info["cpu_mhz"] = float(kv.get("cpu MHz", "0") or 0)
        flags = set(kv.get("flags", "").split())
        info["simd"] = [f for f in ("avx512f", "avx2", "fma", "avx") if f in flags]
    except OSError:
        pass
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    info["mem_total_mib"] = int(line.split()[1]) // 1024
    except OSError:
        pass
    info["gpus"] = detect_gpus()
    return info


def detect_gpus() -> list:
    exe = shutil.which("nvidia-smi")
    if not exe:
        return []
    try:
        out = subprocess.run([exe, "-L"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if out.returncode != 0:
        return []
    return [ln.strip() for ln in out.stdout.splitlines() if ln.strip().startswith("GPU ")]


def load_snapshot() -> dict:
    """Load average and the processes using CPU right now (what else was running)."""
    snap = {"time": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    try:
        snap["loadavg"] = [float(v) for v in open("/proc/loadavg").read().split()[:3]]
    except OSError:
        pass
    # CPU use of every process over one second (from /proc/<pid>/stat utime + stime)
    def ticks():
        t = {}
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/stat") as f:
                    st = f.read()
                comm = st[st.index("(") + 1:st.rindex(")")]
                rest = st[st.rindex(")") + 2:].split()
                t[pid] = (comm, int(rest[11]) + int(rest[12]))
            except (OSError, ValueError, IndexError):
                continue
        return t
    try:
        hz = os.sysconf("SC_CLK_TCK")
        t0 = ticks()
        time.sleep(1.0)
        t1 = ticks()
        use = sorted(((100.0 * (v[1] - t0[k][1]) / hz, v[0]) for k, v in t1.items()
                      if k in t0 and k != str(os.getpid())), reverse=True)
        snap["busy_processes"] = [f"{comm} {pct:.0f}%" for pct, comm in use if pct >= 10.0][:10]
    except (OSError, ValueError):
        pass
    return snap


# ---------------------------------------------------------------------------------------------
# GPU memory


class GpuMemPoller:
    """Peak device memory per pid, polled from NVML (pynvml) or nvidia-smi every 0.2 s."""

    def __init__(self):
        self.peak = {}
        self.source = None
        self._stop = threading.Event()
        self._nvml = None
        try:
            import pynvml  # type: ignore
            pynvml.nvmlInit()
            self._nvml = pynvml
            self.source = "NVML (pynvml)"
        except Exception:
            self.source = "nvidia-smi --query-compute-apps" if shutil.which("nvidia-smi") else None
        self._t = threading.Thread(target=self._loop, daemon=True)
        if self.source:
            self._t.start()

    def _sample(self):
        if self._nvml:
            n = self._nvml
            for i in range(n.nvmlDeviceGetCount()):
                h = n.nvmlDeviceGetHandleByIndex(i)
                for p in n.nvmlDeviceGetComputeRunningProcesses(h):
                    if p.usedGpuMemory is not None:
                        yield p.pid, int(p.usedGpuMemory)
        else:
            out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
                                 capture_output=True, text=True, timeout=10).stdout
            for line in out.splitlines():
                try:
                    pid, mib = [int(v) for v in line.split(",")]
                    yield pid, mib * 1024 * 1024
                except ValueError:
                    continue

    def _loop(self):
        while not self._stop.is_set():
            try:
                for pid, b in self._sample():
                    self.peak[pid] = max(self.peak.get(pid, 0), b)
            except Exception:
                pass
            self._stop.wait(0.2)

    def stop(self):
        self._stop.set()


# ---------------------------------------------------------------------------------------------
# workers


class Worker:
    """One configuration in its own process, speaking the line protocol of ort_worker.py /
    swinrun_worker.c (commands on stdin, one JSON line per answer on stdout)."""

    def __init__(self, name: str, argv: list, errlog: str, timeout: float):
        self.name = name
        self.argv = argv
        self.timeout = timeout
        self.errlog_path = errlog
        self.errlog = open(errlog, "w")
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errlog,
                                     text=True, bufsize=1)
        self.lines = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.ready = None
        self.times = []
        self.warmup_times = []
        self.maxrss_kib = None
        self.exit_code = None
        self.error = None

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _answer(self, what: str) -> dict:
        deadline = time.monotonic() + self.timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RuntimeError(f"{self.name}: no answer to '{what}' within {self.timeout:.0f} s")
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                self.finish()
                rc = self.exit_code
                how = f"killed by signal {-rc}" if rc < 0 else f"exit status {rc}"
                raise RuntimeError(f"{self.name}: process {how} during '{what}'{self._stderr_tail()}")
            line = line.strip()
            if not line.startswith("{"):
                continue  # library noise on stdout
            try:
                msg = json.loads(line)
            except json.JSONDecodeError:
                continue
            if msg.get("event") == "error":
                raise RuntimeError(f"{self.name}: {msg.get('message')}")
            return msg

    def _stderr_tail(self) -> str:
        try:
            if not self.errlog.closed:
                self.errlog.flush()
            with open(self.errlog_path) as f:
                tail = [ln.strip() for ln in f.read().splitlines() if ln.strip()][-3:]
            return (": " + " | ".join(tail)) if tail else ""
        except OSError:
            return ""

    def wait_ready(self):
        self.ready = self._answer("start")
        if self.ready.get("event") != "ready":
            raise RuntimeError(f"{self.name}: unexpected first line {self.ready}")

    def run(self, warm: bool = False) -> float:
        self.proc.stdin.write("run\n")
        self.proc.stdin.flush()
        msg = self._answer("run")
        t = float(msg["seconds"])
        (self.warmup_times if warm else self.times).append(t)
        return t

    def save(self, path: str):
        self.proc.stdin.write(f"save {path}\n")
        self.proc.stdin.flush()
        self._answer("save")

    def finish(self):
        """quit, then reap with wait4() for the process's own peak RSS."""
        try:
            if self.proc.poll() is None:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            pass
        if self.exit_code is not None:
            return
        deadline = time.monotonic() + 60
        while True:
            try:
                pid, status, ru = os.wait4(self.proc.pid, os.WNOHANG)
            except ChildProcessError:  # already reaped by Popen.wait(): no rusage left
                self.exit_code = self.proc.returncode
                self.errlog.close()
                return
            if pid:
                break
            if time.monotonic() > deadline:
                self.proc.kill()
                pid, status, ru = os.wait4(self.proc.pid, 0)
                break
            time.sleep(0.05)
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        self.exit_code = self.proc.returncode
        self.maxrss_kib = int(ru.ru_maxrss)  # KiB on Linux
        self.errlog.close()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()


# ---------------------------------------------------------------------------------------------
# input and model


def read_input(path: str, cube, seed: int, in_channels: int):
    import numpy as np
    from ort_reference import make_input
    if path is None:
        if cube is None:
            raise BadArgs("no --input and no cube: give --cube D H W (or a model with a static cube)")
        return make_input([1, in_channels, *cube], seed), {"kind": "generated", "seed": seed,
                                                           "generator": "tools/export/ort_reference.py make_input"}
    if not os.path.isfile(path):
        raise BadArgs(f"{path}: no such file")
    low = path.lower()
    if low.endswith(".npy"):
        try:
            x = np.load(path, allow_pickle=False)
        except Exception as e:
            raise BadArgs(f"{path}: not a readable .npy ({' '.join(str(e).split())})")
        if x.ndim == 4:
            x = x[None]
        if x.ndim != 5 or x.shape[0] != 1:
            raise BadArgs(f"{path}: expected shape (1, C, D, H, W), got {tuple(x.shape)}")
        if cube is not None and list(x.shape[2:]) != list(cube):
            raise BadArgs(f"{path}: cube {list(x.shape[2:])} differs from --cube/model cube {list(cube)}")
        return np.ascontiguousarray(x, dtype=np.float32), {"kind": "npy", "path": path}
    if low.endswith(".nii") or low.endswith(".nii.gz"):
        if cube is None:
            raise BadArgs("a NIfTI input needs --cube D H W (or a model with a static cube) for the window")
        import nibabel as nib
        try:
            img = nib.load(path)
            v = np.asarray(img.dataobj, dtype=np.float32)
        except Exception as e:
            raise BadArgs(f"{path}: not a readable NIfTI ({' '.join(str(e).split())})")
        if v.ndim == 4 and v.shape[3] == 1:
            v = v[..., 0]
        if v.ndim != 3:
            raise BadArgs(f"{path}: expected a 3-D volume, got shape {v.shape}")
        lo, hi = float(v.min()), float(v.max())
        if lo < -100.0:  # looks like CT in HU
            v = (np.clip(v, -175.0, 250.0) + 175.0) / 425.0
            scaling = "HU clipped to [-175, 250], scaled to [0, 1]"
        else:
            v = (v - lo) / (hi - lo) if hi > lo else np.zeros_like(v)
            scaling = "min-max scaled to [0, 1]"
        # NIfTI arrays are (x, y, z); the window is (D, H, W) = (z, y, x) as MONAI's loaders
        # would give after a transpose; take the centre cube, padding with 0 where smaller.
        v = np.ascontiguousarray(v.transpose(2, 1, 0))
        out = np.zeros(cube, dtype=np.float32)
        src, dst = [], []
        for k in range(3):
            n, c = v.shape[k], cube[k]
            if n >= c:
                s = (n - c) // 2
                src.append(slice(s, s + c)); dst.append(slice(0, c))
            else:
                s = (c - n) // 2
                src.append(slice(0, n)); dst.append(slice(s, s + n))
        out[tuple(dst)] = v[tuple(src)]
        x = np.repeat(out[None, None], in_channels, axis=1)
        return x, {"kind": "nifti", "path": path, "volume_shape_dhw": list(v.shape), "scaling": scaling,
                   "window": "centre cube"}
    raise BadArgs(f"{path}: --input takes .npy, .nii or .nii.gz")


def model_cube_and_channels(model: str):
    """(cube or None when dynamic, in_channels) from the ONNX graph's input."""
    import onnx
    try:
        m = onnx.load(model, load_external_data=False)
    except Exception as e:
        raise BadArgs(f"{model}: not a readable ONNX file ({' '.join(str(e).split())})")
    inits = {i.name for i in m.graph.initializer}
    inputs = [i for i in m.graph.input if i.name not in inits]
    if not inputs:
        raise BadArgs(f"{model}: the graph has no input")
    dims = inputs[0].type.tensor_type.shape.dim
    if len(dims) != 5:
        raise BadArgs(f"{model}: expected a 5-D input (N, C, D, H, W), got {len(dims)}-D")
    vals = [d.dim_value if d.HasField("dim_value") else None for d in dims]
    cube = vals[2:] if all(v for v in vals[2:]) else None
    feature = None  # best effort: the patch-embedding conv weight is (f, Ci, 2, 2, 2)
    for i in m.graph.initializer:
        if "patch_embed" in i.name and len(i.dims) == 5:
            feature = int(i.dims[0])
            break
    return cube, vals[1] or 1, feature


def export_model(feature_size: int, cube, exporter: str) -> str:
    name = f"f{feature_size}_{'x'.join(str(c) for c in cube)}" if len(set(cube)) > 1 else f"f{feature_size}_{cube[0]}"
    if exporter != "torchscript":
        name += f"_{exporter}"
    out_dir = os.path.join(HERE, "models", name)
    path = os.path.join(out_dir, "model.onnx")
    if os.path.isfile(path):
        log(f"using the exported model {os.path.relpath(path, REPO)} (delete it to export again)")
        return path
    os.makedirs(out_dir, exist_ok=True)
    cmd = [sys.executable, os.path.join(REPO, "tools", "export", "export_swin_unetr.py"), "--feature-size", str(feature_size),
           "--size", *[str(c) for c in cube], "--exporter", exporter, "--out", path]
    log(f"exporting: {' '.join(cmd)}")
    t0 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        tail = " | ".join(r.stderr.strip().splitlines()[-3:])
        die(f"export failed (exit {r.returncode}): {tail}", 1)
    log(f"exported in {time.time() - t0:.0f} s")
    return path


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


# ---------------------------------------------------------------------------------------------
# agreement


# Configurations that may compute in a reduced precision: judged by the half-precision
# criterion of the project's CUDA half mode (within 1e-2 of max(1, max|ref|), the same label on
# at least 99.5 % of all voxels), reported, and not counted in the exit status.
REDUCED = {"swinrun-cpu-bf16", "ov-cpu-default", "swinrun-cuda-fp16", "torch-cuda-tf32", "torch-cuda-amp"}
HALF_CRITERION = {"rel": 1e-2, "min_agreement": 0.995}


def agreement(got, ref, reduced: bool = False) -> dict:
    import numpy as np
    from check_logits import compare
    ok, line = compare(got, ref, **HALF_CRITERION) if reduced else compare(got, ref)
    g = got.astype(np.float64, copy=False)
    r = ref.astype(np.float64, copy=False)
    finite = bool(np.isfinite(g).all())
    diff = float(np.abs(g - r).max()) if finite else float("nan")
    lab_r = r.argmax(axis=1)
    lab_g = g.argmax(axis=1)
    same = float((lab_r == lab_g).mean() * 100.0)
    dice = []
    for c in range(ref.shape[1]):
        a = lab_r == c
        b = lab_g == c
        s = int(a.sum()) + int(b.sum())
        dice.append(None if s == 0 else 2.0 * int((a & b).sum()) / s)
    present = [d for d in dice if d is not None]
    ref_max = float(np.abs(r).max())
    rel = HALF_CRITERION["rel"] if reduced else 1e-3
    return {"max_abs_diff": diff, "max_abs_ref": ref_max,
            "max_rel_err": diff / ref_max if ref_max > 0 else diff,
            "criterion_kind": "half" if reduced else "float32",
            "bound": rel * max(1.0, ref_max), "criterion_pass": bool(ok), "criterion": line,
            "same_label_pct": same, "dice_per_class": dice, "dice_min": min(present) if present else None,
            "dice_mean": sum(present) / len(present) if present else None, "finite": finite}


# ---------------------------------------------------------------------------------------------
# per volume


def run_process(argv: list, log_path: str, timeout: float):
    """(exit code, stdout, wall seconds, peak RSS bytes from wait4)."""
    with open(log_path, "w") as errf:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=errf, text=True)
        out = []
        reader = threading.Thread(target=lambda: out.append(proc.stdout.read()), daemon=True)
        reader.start()
        deadline = time.monotonic() + timeout
        while True:
            pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                pid, status, ru = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
        wall = time.perf_counter() - t0
        reader.join(10)
        proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, (out[0] if out else ""), wall, int(ru.ru_maxrss) * 1024


def label_agreement(got, ref, classes: int) -> dict:
    same = float((got == ref).mean() * 100.0)
    dice = []
    for c in range(classes):
        a_, b_ = ref == c, got == c
        s_ = int(a_.sum()) + int(b_.sum())
        dice.append(None if s_ == 0 else 2.0 * int((a_ & b_).sum()) / s_)
    present = [d for d in dice if d is not None]
    return {"same_label_pct": same, "dice_per_class": dice, "dice_min": min(present) if present else None,
            "dice_mean": sum(present) / len(present) if present else None}


def volume_phase(a, model, cube, cli, configs, out_dir, failures) -> dict:
    """Pairs of whole-volume runs, each in a fresh process: the MONAI pipeline with ORT as the
    predictor (bench/peers/ort_volume.py), then `swinrun IN.nii.gz OUT.nii.gz`."""
    import nibabel as nib
    import numpy as np
    res = {"measured": True, "input": a.input, "runs": a.volume_runs, "pairs": [],
           "timing": "pipeline seconds: read .. write, model load / session creation excluded; wall: whole process",
           "ort": "bench/peers/ort_volume.py (MONAI Orientation RAS, Spacing 1.5 1.5 2.0, window -175..250, "
                  "sliding_window_inference overlap 0.5 constant, argmax, nearest back to the input grid)",
           "swinrun": "swinrun IN.nii.gz OUT.nii.gz --model M --threads N --json J -q"}
    pairs_for = [("ort-cpu", "swinrun-cpu", "cpu"), ("ort-cuda", "swinrun-cuda", "cuda")]
    for o, sw, dev in pairs_for:
        if o not in configs or sw not in configs:
            continue
        runs = []
        for r in range(a.volume_runs):
            po = os.path.join(out_dir, f"volume_{o}.nii.gz")
            ps = os.path.join(out_dir, f"volume_{sw}.nii.gz")
            pj = os.path.join(out_dir, f"volume_{sw}.json")
            argv_o = [sys.executable, os.path.join(HERE, "ort_volume.py"), model, a.input, po, "--cube",
                      *map(str, cube), "--config", o, "--threads", str(a.threads)]
            rc, out, wall_o, rss_o = run_process(argv_o, os.path.join(out_dir, f"volume_{o}.stderr.log"), a.timeout)
            msg = {}
            for line in out.splitlines():
                if line.startswith("{"):
                    try:
                        msg = json.loads(line)
                    except ValueError:
                        pass
            if rc != 0 or msg.get("event") != "volume":
                failures[f"volume {o}"] = f"exit {rc}: {msg.get('message', 'no result')}"
                log(f"volume {o}: FAILED: {failures[f'volume {o}']}")
                break
            argv_s = [cli, a.input, ps, "--model", model, "--threads", str(a.threads), "--json", pj, "-q"]
            if dev == "cuda":
                argv_s += ["--backend", "cuda"]
            rc, _, wall_s, rss_s = run_process(argv_s, os.path.join(out_dir, f"volume_{sw}.stderr.log"), a.timeout)
            try:
                js = json.load(open(pj))
                vs = js["volumes"][0]
            except (OSError, ValueError, KeyError, IndexError) as e:
                js, vs = {}, {}
            if rc != 0 or vs.get("status") != "SWIN_OK":
                failures[f"volume {sw}"] = f"exit {rc}: {vs.get('error', 'see ' + pj)}"
                log(f"volume {sw}: FAILED: {failures[f'volume {sw}']}")
                break
            t_o, t_s = float(msg["seconds"]), float(vs["seconds"]["total"])
            runs.append({"ort_seconds": t_o, "ort_wall_seconds": wall_o, "ort_session_seconds": msg.get("session_seconds"),
                         "ort_peak_rss_bytes": rss_o, "ort_base_rss_bytes": msg.get("rss_imported_kib", 0) * 1024,
                         "swinrun_seconds": t_s, "swinrun_wall_seconds": wall_s,
                         "swinrun_model_load_seconds": js.get("model_load_seconds"), "swinrun_peak_rss_bytes": rss_s,
                         "swinrun_planned_total_bytes": js.get("planned_total_bytes"),
                         "windows": vs.get("windows"), "ort_windows": msg.get("windows"),
                         "grid": vs.get("grid_dim"), "ort_grid": msg.get("grid")})
            log(f"volume pair {r + 1}/{a.volume_runs}: {o} {t_o:.2f} s (wall {wall_o:.1f}), "
                f"{sw} {t_s:.2f} s (wall {wall_s:.1f})")
        if not runs:
            continue
        lab_o = np.asarray(nib.load(po).dataobj).astype(np.int64)
        lab_s = np.asarray(nib.load(ps).dataobj).astype(np.int64)
        classes = int(js.get("classes") or (max(lab_o.max(), lab_s.max()) + 1))
        agree = label_agreement(lab_s, lab_o, classes) if lab_o.shape == lab_s.shape else \
            {"error": f"label shapes {lab_s.shape} vs {lab_o.shape}"}
        ratios = [r_["swinrun_seconds"] / r_["ort_seconds"] for r_ in runs]
        res["pairs"].append({
            "ort": o, "swinrun": sw, "runs": runs, "time_ratios": ratios, "time_ratio_median": statistics.median(ratios),
            "ort_seconds": stats([r_["ort_seconds"] for r_ in runs]),
            "swinrun_seconds": stats([r_["swinrun_seconds"] for r_ in runs]),
            "ort_peak_rss_bytes": max(r_["ort_peak_rss_bytes"] for r_ in runs),
            "swinrun_peak_rss_bytes": max(r_["swinrun_peak_rss_bytes"] for r_ in runs),
            "labels": agree})
        if not a.keep_logits:
            for pth in (po, ps):
                try:
                    os.remove(pth)
                except OSError:
                    pass
    if not res["pairs"]:
        return {"measured": False, "reason": "no volume pair ran (see the failures)" if failures else
                "needs ort-cpu and swinrun-cpu (or the CUDA pair) among --configs"}
    return res


# ---------------------------------------------------------------------------------------------
# the run


def stats(ts):
    if not ts:
        return None
    return {"median": statistics.median(ts), "min": min(ts), "max": max(ts), "n": len(ts)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="swinbench.py", description=__doc__.split("\n")[0],
                                epilog="Details: the module docstring (head -60 bench/peers/swinbench.py).",
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_argument_group("model (one of)")
    g.add_argument("--model", help="an existing Swin UNETR ONNX file")
    g.add_argument("--export", action="store_true",
                   help="export one with tools/export/export_swin_unetr.py into bench/models/f<F>_<cube>/ (kept; reused)")
    p.add_argument("--feature-size", type=int, default=48, help="with --export (default 48)")
    p.add_argument("--exporter", default="torchscript", choices=["torchscript", "dynamo"], help="with --export")
    p.add_argument("--cube", type=int, nargs=3, metavar=("D", "H", "W"),
                   help="window; default: the model's export cube (required for --export or a dynamic model)")
    p.add_argument("--input", help="X.npy (1, C, D, H, W) or a NIfTI X.nii[.gz]; default: a generated CT-like cube")
    p.add_argument("--seed", type=int, default=0, help="seed of the generated input (default 0)")
    p.add_argument("--runs", type=int, default=3, help="timed runs per configuration (default 3)")
    p.add_argument("--warmup", type=int, default=1, help="untimed runs per configuration first (default 1)")
    p.add_argument("--threads", type=int, default=0, help="CPU threads for every runtime (default 0 = every core)")
    p.add_argument("--scaling-threads", type=int, default=None, metavar="N",
                   help="afterwards run every configuration again with N threads (thread scaling; e.g. 1)")
    p.add_argument("--scaling-runs", type=int, default=1, help="timed runs per configuration with --scaling-threads")
    p.add_argument("--scaling-warmup", type=int, default=None,
                   help="untimed runs first with --scaling-threads (default: --warmup)")
    p.add_argument("--configs", default="all",
                   help=f"comma-separated subset of: {', '.join(ALL_CONFIGS)} (default all; GPU ones skipped without a GPU)")
    p.add_argument("--reference", default="ort-cpu", help="configuration whose logits are the reference (default ort-cpu)")
    p.add_argument("--build", help="swinrun build folder with swinrun and bench/swinrun_bench_worker "
                                   "(default: build-bench, then build)")
    p.add_argument("--worker", help="path of swinrun_bench_worker (overrides --build)")
    p.add_argument("--swinrun", help="path of the swinrun CLI (overrides --build)")
    p.add_argument("--out-dir", help="where results.json/.md/.png go (default bench/out/<model>_<cube>)")
    p.add_argument("--no-chart", action="store_true", help="skip the PNG")
    p.add_argument("--keep-logits", action="store_true", help="keep each configuration's logits .npy in --out-dir")
    p.add_argument("--volume-runs", type=int, default=1,
                   help="with a NIfTI --input: pairs of whole-volume runs (ORT pipeline, swinrun CLI) (default 1; 0 = none)")
    p.add_argument("--timeout", type=float, default=1800, help="seconds to wait for one answer of a worker (default 1800)")
    a = p.parse_args(argv)
    a.argv_used = list(sys.argv[1:] if argv is None else argv)

    try:
        return run(a)
    except BadArgs as e:
        die(str(e), 2)


def run(a) -> int:
    import numpy as np
    if a.runs < 1:
        raise BadArgs("--runs must be >= 1")
    if a.volume_runs < 0:
        raise BadArgs("--volume-runs must be >= 0")
    if a.warmup < 0:
        raise BadArgs("--warmup must be >= 0")
    if a.threads < 0:
        raise BadArgs("--threads must be >= 0")
    if a.scaling_threads is not None and a.scaling_threads < 1:
        raise BadArgs("--scaling-threads must be >= 1")
    if a.scaling_runs < 1:
        raise BadArgs("--scaling-runs must be >= 1")
    if a.scaling_warmup is None:
        a.scaling_warmup = a.warmup
    if a.scaling_warmup < 0:
        raise BadArgs("--scaling-warmup must be >= 0")
    if bool(a.model) == bool(a.export):
        raise BadArgs("give exactly one of --model FILE or --export")
    if a.cube and any(c <= 0 or c % 32 for c in a.cube):
        raise BadArgs(f"--cube takes positive multiples of 32, got {a.cube}")
    wanted = ALL_CONFIGS if a.configs == "all" else [c.strip() for c in a.configs.split(",") if c.strip()]
    bad = [c for c in wanted if c not in ALL_CONFIGS]
    if bad:
        raise BadArgs(f"unknown configuration(s) {', '.join(bad)} (known: {', '.join(ALL_CONFIGS)})")
    if a.reference not in wanted:
        raise BadArgs(f"--reference {a.reference} is not among the configurations run")

    if a.export:
        if not a.cube:
            raise BadArgs("--export needs --cube D H W")
        model = export_model(a.feature_size, a.cube, a.exporter)
    else:
        model = a.model
        if not os.path.isfile(model):
            raise BadArgs(f"{model}: no such file")
    mcube, in_ch, feature = model_cube_and_channels(model)
    cube = list(a.cube) if a.cube else mcube
    if mcube and cube != mcube:
        raise BadArgs(f"{model} is exported for cube {mcube} (static); --cube {cube} would not run in ONNX Runtime")
    x, input_info = read_input(a.input, cube, a.seed, in_ch)
    cube = list(x.shape[2:])

    machine = machine_info()
    gpus = machine["gpus"]
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

    cli, worker_bin = find_swinrun(a.build)
    if a.worker:
        worker_bin = a.worker
    if a.swinrun:
        cli = a.swinrun
    for c in [c for c in configs if c in SW_CONFIGS]:
        if not worker_bin or not os.path.isfile(worker_bin):
            skipped[c] = ("swinrun_bench_worker not built (cmake --build BUILD --target swinrun_bench_worker; "
                          "or give --build/--worker)")
            configs.remove(c)

    tag = os.path.basename(os.path.dirname(os.path.abspath(model))) if os.path.basename(model) == "model.onnx" \
        else os.path.splitext(os.path.basename(model))[0]
    out_dir = a.out_dir or os.path.join(HERE, "out", f"{tag}_{'x'.join(map(str, cube))}")
    os.makedirs(out_dir, exist_ok=True)
    in_path = os.path.join(out_dir, "input.npy")
    np.save(in_path, x)

    before = load_snapshot()
    log(f"model {model}, cube {cube}, configurations {', '.join(configs)}"
        + (f"; skipped {', '.join(skipped)}" if skipped else ""))

    poller = GpuMemPoller() if gpus else None
    workers = {}   # configuration -> live Worker
    finished = {}  # configuration -> reaped Worker
    failures = {}
    logits = {}
    pairs = {}     # (ort, swinrun) -> [(t_ort, t_swinrun), ...]

    def start(c, threads=None, tag=""):
        argv = worker_argv(c, model, in_path, a.threads if threads is None else threads, worker_bin)
        w = Worker(c, argv, os.path.join(out_dir, f"{c}{tag}.stderr.log"), a.timeout)
        try:
            w.wait_ready()
            workers[c] = w
            log(f"{c}: ready")
            return w
        except RuntimeError as e:
            failures[c] = str(e)
            log(f"{c}: FAILED to start: {e}")
            w.kill()
            w.finish()
            finished[c] = w
            return None

    def one(c, warm):
        w = workers.get(c)
        if w is None:
            return None
        try:
            return w.run(warm)
        except RuntimeError as e:
            failures[c] = str(e)
            log(f"{c}: FAILED: {e}")
            w.kill()
            w.finish()
            finished[c] = w
            del workers[c]
            return None

    def stop(c):
        """save the logits of the last run, quit, reap (peak RSS)."""
        w = workers.pop(c, None)
        if w is None:
            return
        path = os.path.join(out_dir, f"logits_{c}.npy")
        try:
            w.save(path)
            logits[c] = path
        except RuntimeError as e:
            failures[c] = str(e)
        w.finish()
        finished[c] = w

    # Per device: the swinrun processes live throughout; the peers run one after the other,
    # each alive only during its own phase: warm-up, then --runs rounds peer, each swinrun
    # configuration, peer, ...
    t_start = time.time()
    for dev in ("cpu", "cuda"):
        sws = [c for c in configs if DEVICE[c] == dev and c in SW_CONFIGS]
        others = [c for c in configs if DEVICE[c] == dev and c in OTHER_CONFIGS]
        for sw in sws:
            if start(sw):
                for _ in range(a.warmup):
                    one(sw, True)
        if not others:
            for _ in range(a.runs):
                for sw in sws:
                    one(sw, False)
            for sw in sws:
                if sw in workers:
                    log(f"{sw}: " + ", ".join(f"{t:.3f}" for t in workers[sw].times) + " s")
        for o in others:
            if not start(o):
                continue
            for _ in range(a.warmup):
                one(o, True)
            for _ in range(a.runs):
                to = one(o, False)
                for sw in sws:
                    ts = one(sw, False) if sw in workers else None
                    if to is not None and ts is not None:
                        pairs.setdefault((o, sw), []).append((to, ts))
            ow = workers.get(o) or finished.get(o)
            msg = f"{o}: " + ", ".join(f"{t:.3f}" for t in ow.times) + " s"
            for sw in sws:
                if (o, sw) in pairs:
                    msg += f"; {sw} alongside: " + ", ".join(f"{ts:.3f}" for _, ts in pairs[(o, sw)]) + " s"
            log(msg)
            stop(o)
        for sw in sws:
            stop(sw)
    scaling = {}
    if a.scaling_threads is not None:
        for c in configs:
            if c in failures:
                continue
            w = start(c, threads=a.scaling_threads, tag=f"_t{a.scaling_threads}")
            if w is None:
                failures.pop(c, None)
                scaling[c] = {"threads": a.scaling_threads, "error": "did not start"}
                continue
            for _ in range(a.scaling_warmup):
                one(c, True)
            for _ in range(a.scaling_runs):
                one(c, False)
            ts = list(w.times)
            workers.pop(c, None)
            w.finish()
            scaling[c] = {"threads": a.scaling_threads, "warmup": a.scaling_warmup, "seconds": ts,
                          "time_per_window": stats(ts),
                          "peak_rss_bytes": w.maxrss_kib * 1024 if w.maxrss_kib else None}
            log(f"{c} with {a.scaling_threads} thread(s): " + ", ".join(f"{t:.3f}" for t in ts) + " s")
    bench_seconds = time.time() - t_start
    if poller:
        poller.stop()
    after = load_snapshot()

    # agreement against the reference
    agree = {}
    if a.reference in logits:
        ref = np.load(logits[a.reference])
        for c, path in logits.items():
            if c == a.reference:
                continue
            got = np.load(path)
            if got.shape != ref.shape:
                agree[c] = {"error": f"shape {list(got.shape)} vs reference {list(ref.shape)}", "criterion_pass": False}
            else:
                agree[c] = agreement(got, ref, reduced=c in REDUCED)
    elif a.reference not in skipped:
        failures.setdefault(a.reference, "no logits")
    if not a.keep_logits:
        for path in logits.values():
            try:
                os.remove(path)
            except OSError:
                pass
        try:
            os.remove(in_path)
        except OSError:
            pass

    results = {}
    for c in wanted:
        if c in skipped:
            results[c] = {"status": "skipped", "reason": skipped[c], "device": DEVICE[c]}
            continue
        w = finished.get(c)
        e = {"status": "failed" if c in failures else "ok", "device": DEVICE[c], "runtime": runtime_of(c)}
        if c in failures:
            e["error"] = failures[c]
        if w is not None:
            e["seconds"] = w.times
            e["warmup_seconds"] = w.warmup_times
            e["time_per_window"] = stats(w.times)
            e["peak_rss_bytes"] = w.maxrss_kib * 1024 if w.maxrss_kib else None
            e["exit_code"] = w.exit_code
            rd = w.ready or {}
            e["rss_base_bytes"] = (rd.get("rss_base_kib") or 0) * 1024 if c in SW_CONFIGS \
                else (rd.get("rss_imported_kib") or 0) * 1024
            if c in PEER_CONFIGS:
                e["description"] = rd.get("description")
                for k in ("ov_version", "inference_precision", "num_threads", "cpu_capabilities", "torch_version",
                          "seed", "initializers_checked"):
                    if k in rd:
                        e[k] = rd[k]
            e["rss_ready_bytes"] = (rd.get("rss_ready_kib") or 0) * 1024
            e["create_seconds"] = rd.get("create_seconds")
            if c in ORT_CONFIGS:
                e["providers"] = rd.get("providers")
                e["description"] = rd.get("description")
                e["ort_version"] = rd.get("ort_version")
            elif rd:
                e["planned"] = {k: rd.get(k) for k in ("weight_bytes", "arena_bytes", "lower_bound", "total_bytes")}
                e["precision"] = rd.get("precision")
                e["precision_note"] = rd.get("precision_note")
                e["load_seconds"] = rd.get("load_seconds")
            if poller is not None:
                e["device_peak_bytes"] = poller.peak.get(w.proc.pid)
                e["device_memory_source"] = poller.source
        if c in agree:
            e["agreement"] = agree[c]
        elif c == a.reference and c in logits:
            e["agreement"] = "reference"
        results[c] = e

    ratios = pair_ratios(pairs, results)
    for c, s in scaling.items():
        full = (results.get(c) or {}).get("time_per_window")
        if full and s.get("time_per_window"):
            s["all_threads_median"] = full["median"]
            s["speedup_all_threads"] = s["time_per_window"]["median"] / full["median"]

    per_volume = {"measured": False}
    if input_info["kind"] != "nifti":
        per_volume["reason"] = "input is not a NIfTI volume"
    elif a.volume_runs == 0:
        per_volume["reason"] = "--volume-runs 0"
    else:
        why = swinrun_volume_support(cli)
        if why:
            per_volume["reason"] = why
        else:
            per_volume = volume_phase(a, model, cube, cli, configs, out_dir, failures)
    doc = {
        "tool": "bench/peers/swinbench.py",
        "command": " ".join([sys.executable, os.path.join(HERE, "swinbench.py"), *a.argv_used]),
        "date_utc": before["time"],
        "model": {"path": os.path.abspath(model), "file_bytes": os.path.getsize(model), "cube": cube,
                  "in_channels": in_ch, "feature_size": feature},
        "input": input_info,
        "runs": a.runs, "warmup": a.warmup, "threads": a.threads, "reference": a.reference,
        "machine": machine, "load_before": before, "load_after": after,
        "bench_seconds": bench_seconds,
        "configs": results,
        "ratios": ratios,
        "scaling": scaling,
        "per_volume": per_volume,
        "skipped": skipped,
        "criterion": "max|logit - ref| <= 1e-3 * max(1, max|ref|) and equal labels where the reference's "
                     "top-2 gap > 1e-3 (tools/export/check_logits.py)",
    }
    for c, e in results.items():
        info = finished[c].ready if c in finished else None
        if e.get("runtime") == "swinrun" and info:
            doc["model"]["feature_size"] = info.get("feature_size")
            doc["model"]["params"] = info.get("params")
            doc["model"]["out_channels"] = info.get("out_channels")
    json_path = os.path.join(out_dir, "results.json")
    with open(json_path, "w") as f:
        json.dump(doc, f, indent=1, allow_nan=True)
    md = markdown(doc)
    with open(os.path.join(out_dir, "results.md"), "w") as f:
        f.write(md)
    print(md)
    if not a.no_chart:
        try:
            png = chart(doc, os.path.join(out_dir, "results.png"))
            log(f"chart {png}")
        except Exception as e:  # a missing matplotlib must not lose the numbers
            log(f"no chart: {e}")
    log(f"results {json_path}")

    bad = dict(failures)
    for c, why in skipped.items():
        if DEVICE[c] == "cpu":  # only the GPU configurations may be skipped quietly
            bad[c] = f"skipped: {why}"
    for c, e in agree.items():
        if not e.get("criterion_pass"):
            if c in REDUCED:
                log(f"{c} (reduced precision, not counted): agreement: {e.get('criterion', e.get('error', '?'))}")
                continue
            bad[c] = "agreement: " + e.get("criterion", e.get("error", "?"))
    for c, msg in bad.items():
        log(f"{c}: {msg}")
    return 1 if bad else 0


# ---------------------------------------------------------------------------------------------
# output


def fmt_mib(b):
    return "-" if not b else f"{b / MiB:,.0f}"


def machine_line(m: dict) -> str:
    cpu = m.get("cpu_model", "?")
    if m.get("cpu_family"):
        cpu += f" (family {m['cpu_family']} model {m.get('cpu_model_number')})"
    s = f"{cpu}, {m.get('cpus_online')} CPUs, {m.get('mem_total_mib', 0) / 1024:.0f} GiB"
    s += ", GPU: " + ("; ".join(m["gpus"]) if m.get("gpus") else "none")
    return s


def config_note(e: dict) -> str:
    """What a configuration ran in, where the worker said: OpenVINO's chosen precision,
    swinrun's precision."""
    if e.get("inference_precision"):
        return f" (OpenVINO {e.get('ov_version', '').split('-')[0]}, runs {e['inference_precision']})"
    if e.get("torch_version"):
        return f" (torch {e['torch_version']})"
    if e.get("precision") and e.get("precision") != "fp32":
        return f" ({e['precision']})"
    return ""


def markdown(doc: dict) -> str:
    cube = "x".join(map(str, doc["model"]["cube"]))
    f = doc["model"].get("feature_size")
    L = []
    L.append(f"### swinrun vs ONNX Runtime, OpenVINO, PyTorch: {os.path.basename(os.path.dirname(doc['model']['path']))}/"
             f"{os.path.basename(doc['model']['path'])}" + (f" (f={f})" if f else "") + f", window {cube}")
    L.append("")
    L.append(f"Machine: {machine_line(doc['machine'])}. Threads: {doc['threads'] or 'all'}. "
             f"Warm-up {doc['warmup']}, {doc['runs']} timed runs per configuration, alternating peer/swinrun. "
             f"Input: {doc['input']['kind']}" + (f" (seed {doc['input']['seed']})" if "seed" in doc["input"] else "")
             + f". Load average before/after: "
             f"{doc['load_before'].get('loadavg')} / {doc['load_after'].get('loadavg')}.")
    b0, b1 = doc["load_before"].get("busy_processes"), doc["load_after"].get("busy_processes")
    if b0 is not None or b1 is not None:
        L.append("")
        L.append("Other processes using >= 10% of a CPU (1 s samples): at the start " + (", ".join(b0 or []) or "none")
                 + "; at the end " + (", ".join(b1 or []) or "none") + ".")
    L.append("")
    L.append("| configuration | s/window median | min | max | swinrun/this time (median of rounds) | peak RSS MiB "
             "| base RSS MiB | swinrun planned MiB | max abs diff vs ref | max rel err | criterion | same label % "
             "| Dice min / mean |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    ratios_of = {}
    for r in doc["ratios"]:
        ratios_of.setdefault(r["ort"], []).append(r)
    for c, e in doc["configs"].items():
        if e["status"] == "skipped":
            L.append(f"| {c} | skipped: {e['reason']} ||||||||||||")
            continue
        t = e.get("time_per_window")
        row = [c + config_note(e)]
        if t:
            row += [f"{t['median']:.3f}", f"{t['min']:.3f}", f"{t['max']:.3f}"]
        else:
            row += ["FAILED", "", ""]
        rl = ratios_of.get(c)
        if rl:
            parts = []
            for r in rl:
                mr = f" (RSS {r['peak_rss_ratio']:.2f})" if r.get("peak_rss_ratio") else ""
                parts.append(f"{r['swinrun']}: {r['time_ratio_median']:.2f}{mr}")
            row.append("; ".join(parts))
        else:
            row.append("-")
        row.append(fmt_mib(e.get("peak_rss_bytes")))
        row.append(fmt_mib(e.get("rss_base_bytes")))
        pl = e.get("planned")
        row.append(f"{pl['total_bytes'] / MiB:,.0f} (w {pl['weight_bytes'] / MiB:,.0f} + arena "
                   f"{pl['arena_bytes'] / MiB:,.0f})" if pl and pl.get("total_bytes") else "-")
        ag = e.get("agreement")
        if ag == "reference":
            row += ["reference", "-", "-", "-", "-"]
        elif isinstance(ag, dict) and "max_abs_diff" in ag:
            dm = ag.get("dice_min")
            row += [f"{ag['max_abs_diff']:.2e} (bound {ag['bound']:.1e})", f"{ag.get('max_rel_err', float('nan')):.1e}",
                    ("PASS" if ag["criterion_pass"] else "FAIL") + (" (half)" if ag.get("criterion_kind") == "half" else ""),
                    f"{ag['same_label_pct']:.4f}",
                    "-" if dm is None else f"{dm:.4f} / {ag['dice_mean']:.4f}"]
        elif isinstance(ag, dict):
            row += [ag.get("error", "?"), "-", "FAIL", "-", "-"]
        else:
            row += ["-", "-", "-", "-", "-"]
        if e["status"] == "failed":
            row[0] += f" (FAILED: {e.get('error', '')[:120]})"
        L.append("| " + " | ".join(row) + " |")
    L.append("")
    L.append("Peak RSS: the process's ru_maxrss (wait4), each configuration in its own process; an ORT process's "
             "base is Python + numpy + onnxruntime before the session, swinrun's base is the bare process. "
             "The ratio column is swinrun / that ORT configuration, from back-to-back pairs; "
             "(RSS r) is swinrun's peak RSS / that configuration's. Ratios < 1 mean swinrun is faster / smaller. "
             "max rel err = max|logit - ref| / max|ref|. Criterion: float32 (max|d| <= 1e-3 max(1, max|ref|), "
             "labels equal where the reference's top-2 gap > 1e-3); (half): the CUDA half-mode criterion "
             "(max|d| <= 1e-2 max(1, max|ref|), same label on >= 99.5 % of voxels), for configurations that may "
             "run in reduced precision (reported, not counted in the exit status).")
    sc = doc.get("scaling") or {}
    if sc:
        n = next(iter(sc.values())).get("threads")
        L.append("")
        L.append(f"Thread scaling: each configuration in a fresh process with {n} thread(s) "
                 f"(after {next(iter(sc.values())).get('warmup')} warm-up), against its median with "
                 f"{doc['threads'] or 'all'} threads above:")
        L.append("")
        L.append(f"| configuration | s/window, {n} thread(s) | s/window, {doc['threads'] or 'all'} threads "
                 f"| speed-up | peak RSS MiB, {n} thread(s) |")
        L.append("|---|---|---|---|---|")
        for c, s in sc.items():
            if not s.get("time_per_window"):
                L.append(f"| {c} | {s.get('error', 'FAILED')} | | | |")
                continue
            full = s.get("all_threads_median")
            L.append(f"| {c} | {s['time_per_window']['median']:.3f} | " + ("-" if full is None else f"{full:.3f}")
                     + " | " + ("-" if full is None else f"{s['speedup_all_threads']:.2f}x") + " | "
                     + fmt_mib(s.get("peak_rss_bytes")) + " |")
    for c, e in doc["configs"].items():
        if e.get("device_peak_bytes") is not None:
            L.append(f"Device memory {c}: {fmt_mib(e['device_peak_bytes'])} MiB peak ({e.get('device_memory_source')}).")
    pv = doc["per_volume"]
    if not pv.get("measured"):
        L.append(f"Per volume: not measured: {pv.get('reason')}.")
    else:
        L.append("")
        L.append(f"Per volume ({pv['input']}; {pv['timing']}):")
        L.append("")
        L.append("| pair | ORT s/volume median | swinrun s/volume median | swinrun/ORT (median of pairs) | windows "
                 "| ORT peak RSS MiB | swinrun peak RSS MiB | same label % | Dice min / mean |")
        L.append("|---|---|---|---|---|---|---|---|---|")
        for pr in pv["pairs"]:
            lab = pr["labels"]
            dm = lab.get("dice_min")
            L.append(f"| {pr['ort']} / {pr['swinrun']} | {pr['ort_seconds']['median']:.2f} | "
                     f"{pr['swinrun_seconds']['median']:.2f} | {pr['time_ratio_median']:.2f} | {pr['runs'][0]['windows']} | "
                     f"{fmt_mib(pr['ort_peak_rss_bytes'])} | {fmt_mib(pr['swinrun_peak_rss_bytes'])} | "
                     f"{lab.get('same_label_pct', float('nan')):.4f} | "
                     + ("-" if dm is None else f"{dm:.4f} / {lab['dice_mean']:.4f}") + " |")
    for c, e in doc["configs"].items():
        ag = e.get("agreement")
        if isinstance(ag, dict) and ag.get("dice_per_class"):
            L.append(f"Dice per class {c}: " + " ".join("-" if d is None else f"{d:.4f}" for d in ag["dice_per_class"]))
    return "\n".join(L) + "\n"


def chart(doc: dict, path: str) -> str:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = [(c, e) for c, e in doc["configs"].items() if e["status"] != "skipped" and e.get("time_per_window")]
    if not rows:
        raise RuntimeError("no configuration ran")
    names = [c for c, _ in rows]
    palette = {"onnxruntime": "#1f77b4", "openvino": "#2ca02c", "pytorch": "#9467bd", "swinrun": "#ff7f0e"}
    colors = [palette.get(e["runtime"], "#7f7f7f") for _, e in rows]
    pv = doc.get("per_volume", {})
    vol = pv.get("pairs", []) if pv.get("measured") else []
    if vol:
        fig, axes = plt.subplots(1, 3, figsize=(18, 0.6 * len(rows) + 2.8), gridspec_kw={"width_ratios": [3, 3, 2]})
        ax1, ax2, ax3 = axes
    else:
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 0.6 * len(rows) + 2.8))
    med = [e["time_per_window"]["median"] for _, e in rows]
    lo = [m - e["time_per_window"]["min"] for m, (_, e) in zip(med, rows)]
    hi = [e["time_per_window"]["max"] - m for m, (_, e) in zip(med, rows)]
    y = list(range(len(rows)))
    ax1.barh(y, med, xerr=[lo, hi], color=colors, capsize=4)
    ratio_of = {}
    for r in doc["ratios"]:
        ratio_of.setdefault(r["ort"], []).append(f"{r['swinrun'].replace('swinrun-cpu', 'sw').replace('-', ' ')} "
                                                 f"{r['time_ratio_median']:.2f}")
    for i, (c, e) in enumerate(rows):
        txt = f"{med[i]:.2f} s"
        if c in ratio_of:
            txt += "  (swinrun/this: " + ", ".join(ratio_of[c]) + ")"
        ax1.text(med[i] + hi[i], i, " " + txt, va="center", fontsize=8)
    from matplotlib.patches import Patch
    ax1.legend(handles=[Patch(color=palette[k], label=lab) for k, lab in
                        (("onnxruntime", "ONNX Runtime"), ("openvino", "OpenVINO"), ("pytorch", "PyTorch"),
                         ("swinrun", "swinrun")) if k in {e["runtime"] for _, e in rows}],
               fontsize=8, loc="lower right")
    ax1.set_yticks(y, names)
    ax1.invert_yaxis()
    ax1.set_xlabel("seconds per window (median; whiskers min-max)")
    ax1.set_title("time per window")
    ax1.set_xlim(0, max(m + h for m, h in zip(med, hi)) * 2.0)
    rss = [(e.get("peak_rss_bytes") or 0) / MiB for _, e in rows]
    base = [(e.get("rss_base_bytes") or 0) / MiB for _, e in rows]
    ax2.barh(y, rss, color=colors, label="peak RSS (process)")
    ax2.barh(y, base, color="none", edgecolor="black", hatch="//", label="base RSS (interpreter/libraries)")
    for i, (c, e) in enumerate(rows):
        pl = e.get("planned")
        if pl and pl.get("total_bytes"):
            ax2.plot([pl["total_bytes"] / MiB], [i], marker="D", color="black", linestyle="none",
                     label="swinrun planned (weights + arena)")
        ax2.text(rss[i], i, f" {rss[i]:,.0f} MiB", va="center", fontsize=9)
    h, l = ax2.get_legend_handles_labels()
    seen = {}
    for hh, ll in zip(h, l):
        seen.setdefault(ll, hh)
    ax2.legend(seen.values(), seen.keys(), fontsize=8, loc="lower right")
    ax2.set_yticks(y, names)
    ax2.invert_yaxis()
    ax2.set_xlabel("MiB")
    ax2.set_title("peak memory")
    ax2.set_xlim(0, max(rss) * 1.35)
    if vol:
        names3, vals3, cols3, rss3 = [], [], [], []
        for pr in vol:
            for who, key, col in ((pr["ort"] + " (MONAI+ORT)", "ort", "#1f77b4"), (pr["swinrun"], "swinrun", "#ff7f0e")):
                names3.append(who)
                vals3.append(pr[f"{key}_seconds"]["median"])
                rss3.append(pr[f"{key}_peak_rss_bytes"] / MiB)
                cols3.append(col)
        y3 = list(range(len(names3)))
        ax3.barh(y3, vals3, color=cols3)
        for i in y3:
            ax3.text(vals3[i], i, f" {vals3[i]:.1f} s, {rss3[i]:,.0f} MiB", va="center", fontsize=9)
        ax3.set_yticks(y3, names3)
        ax3.invert_yaxis()
        ax3.set_xlim(0, max(vals3) * 1.7)
        ax3.set_xlabel("seconds per volume (median; labels: peak RSS)")
        ax3.set_title(f"whole volume ({vol[0]['runs'][0]['windows']} windows)")
    m = doc["model"]
    f = m.get("feature_size")
    ortv = next((e.get("ort_version") for e in doc["configs"].values() if e.get("ort_version")), "")
    la = doc["load_before"].get("loadavg") or ["?"]
    fig.suptitle(f"Swin UNETR{f' f={f}' if f else ''}, window {'x'.join(map(str, m['cube']))}: swinrun vs ONNX Runtime "
                 f"{ortv}, OpenVINO, PyTorch (CPU threads: {doc['threads'] or 'all'}; {doc['runs']} runs after {doc['warmup']} warm-up)\n"
                 f"{machine_line(doc['machine'])}; load average {la[0]} at start - {doc['date_utc']}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


if __name__ == "__main__":
    sys.exit(main())
