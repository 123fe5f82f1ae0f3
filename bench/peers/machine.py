"""The machine a swinbench run measured on: CPU, memory and GPUs, and what else was using the CPUs
at the start and at the end (load average, busy processes)."""
from __future__ import annotations

import datetime as _dt
import os
import platform
import shutil
import subprocess
import time


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
