"""The order in which swinbench runs its worker processes. Per device, the swinrun processes live
throughout; the peers run one after the other, each alive only during its own phase: warm-up, then
--runs rounds peer, each swinrun configuration, peer, ... (the times of one round make a ratio).
Thread scaling afterwards runs every configuration again in a fresh process with fewer threads."""
from __future__ import annotations

import os

from bench_common import log
from bench_configs import DEVICE, OTHER_CONFIGS, SW_CONFIGS, worker_argv
from timing import stats
from worker_process import Worker


class Schedule:
    """The worker processes of one benchmark and what they left: seconds (in each Worker), logits
    files, failures, the rounds' (peer, swinrun) time pairs and the thread-scaling runs."""

    def __init__(self, a, model: str, in_path: str, worker_bin: str | None, out_dir: str, swin_model: str = None):
        self.a = a
        self.model = model
        self.swin_model = swin_model or model  # a bundle folder for swinrun's workers, its ONNX twin for the peers
        self.in_path = in_path
        self.worker_bin = worker_bin
        self.out_dir = out_dir
        self.workers = {}   # configuration -> live Worker
        self.finished = {}  # configuration -> reaped Worker
        self.failures = {}
        self.logits = {}
        self.pairs = {}     # (ort, swinrun) -> [(t_ort, t_swinrun), ...]
        self.scaling = {}

    def start(self, c, threads=None, tag=""):
        a = self.a
        argv = worker_argv(c, self.model, self.in_path, a.threads if threads is None else threads, self.worker_bin,
                           self.swin_model)
        w = Worker(c, argv, os.path.join(self.out_dir, f"{c}{tag}.stderr.log"), a.timeout)
        try:
            w.wait_ready()
            self.workers[c] = w
            log(f"{c}: ready")
            return w
        except RuntimeError as e:
            self.failures[c] = str(e)
            log(f"{c}: FAILED to start: {e}")
            w.kill()
            w.finish()
            self.finished[c] = w
            return None

    def one(self, c, warm):
        w = self.workers.get(c)
        if w is None:
            return None
        try:
            return w.run(warm)
        except RuntimeError as e:
            self.failures[c] = str(e)
            log(f"{c}: FAILED: {e}")
            w.kill()
            w.finish()
            self.finished[c] = w
            del self.workers[c]
            return None

    def stop(self, c):
        """save the logits of the last run, quit, reap (peak RSS)."""
        w = self.workers.pop(c, None)
        if w is None:
            return
        path = os.path.join(self.out_dir, f"logits_{c}.npy")
        try:
            w.save(path)
            self.logits[c] = path
        except RuntimeError as e:
            self.failures[c] = str(e)
        w.finish()
        self.finished[c] = w

    def alternate(self, configs: list):
        """Per device, the swinrun configurations beside each peer in turn."""
        a, workers, pairs = self.a, self.workers, self.pairs
        for dev in ("cpu", "cuda"):
            sws = [c for c in configs if DEVICE[c] == dev and c in SW_CONFIGS]
            others = [c for c in configs if DEVICE[c] == dev and c in OTHER_CONFIGS]
            for sw in sws:
                if self.start(sw):
                    for _ in range(a.warmup):
                        self.one(sw, True)
            if not others:
                for _ in range(a.runs):
                    for sw in sws:
                        self.one(sw, False)
                for sw in sws:
                    if sw in workers:
                        log(f"{sw}: " + ", ".join(f"{t:.3f}" for t in workers[sw].times) + " s")
            for o in others:
                if not self.start(o):
                    continue
                for _ in range(a.warmup):
                    self.one(o, True)
                for _ in range(a.runs):
                    to = self.one(o, False)
                    for sw in sws:
                        ts = self.one(sw, False) if sw in workers else None
                        if to is not None and ts is not None:
                            pairs.setdefault((o, sw), []).append((to, ts))
                ow = workers.get(o) or self.finished.get(o)
                msg = f"{o}: " + ", ".join(f"{t:.3f}" for t in ow.times) + " s"
                for sw in sws:
                    if (o, sw) in pairs:
                        msg += f"; {sw} alongside: " + ", ".join(f"{ts:.3f}" for _, ts in pairs[(o, sw)]) + " s"
                log(msg)
                self.stop(o)
            for sw in sws:
                self.stop(sw)

    def thread_scaling(self, configs: list):
        """Every configuration that has not failed again, in a fresh process with --scaling-threads."""
        a = self.a
        for c in configs:
            if c in self.failures:
                continue
            w = self.start(c, threads=a.scaling_threads, tag=f"_t{a.scaling_threads}")
            if w is None:
                self.failures.pop(c, None)
                self.scaling[c] = {"threads": a.scaling_threads, "error": "did not start"}
                continue
            for _ in range(a.scaling_warmup):
                self.one(c, True)
            for _ in range(a.scaling_runs):
                self.one(c, False)
            ts = list(w.times)
            self.workers.pop(c, None)
            w.finish()
            self.scaling[c] = {"threads": a.scaling_threads, "warmup": a.scaling_warmup, "seconds": ts,
                               "time_per_window": stats(ts),
                               "peak_rss_bytes": w.maxrss_kib * 1024 if w.maxrss_kib else None}
            log(f"{c} with {a.scaling_threads} thread(s): " + ", ".join(f"{t:.3f}" for t in ts) + " s")
