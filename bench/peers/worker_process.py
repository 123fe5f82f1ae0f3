"""Child processes and what they cost: a worker (one configuration in its own process, commands on
stdin, one JSON answer per line) and a one-shot process, each reaped with wait4() for its own
peak RSS (ru_maxrss)."""
from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time


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
