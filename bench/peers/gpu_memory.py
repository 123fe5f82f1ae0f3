"""Peak device memory of each worker process on a GPU, polled in a thread while the benchmark runs."""
from __future__ import annotations

import shutil
import subprocess
import threading


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
