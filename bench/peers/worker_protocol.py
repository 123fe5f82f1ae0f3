"""The line protocol every Python peer of bench/peers/swinbench.py speaks (bench/peers/swinrun_worker.c
speaks it too): one JSON line {"event": "ready", ...} once the model is loaded, then per
stdin line
  run          -> {"event": "run", "seconds": S, "rss_hwm_kib": K}   one forward of the window
  save OUT.npy -> {"event": "saved", "path": ...}  the logits of the last run (float32)
  quit         -> exit 0
Errors: {"event": "error", "message": ...} then exit 1 (2 for bad arguments or commands).
"""
from __future__ import annotations

import json
import sys
import time


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def fail(msg: str, code: int = 1):
    emit({"event": "error", "message": " ".join(str(msg).split())})
    sys.exit(code)


def rss_kib():
    """(VmRSS, VmHWM) of this process in KiB, -1 where /proc does not say."""
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


def load_window(path: str):
    """The input window as a contiguous float32 (1, C, D, H, W) array; a 4-D file gets the batch axis."""
    import numpy as np
    try:
        x = np.ascontiguousarray(np.load(path, allow_pickle=False), dtype=np.float32)
    except Exception as e:
        fail(f"{path}: {e}", 2)
    return x[None] if x.ndim == 4 else x


def serve(config: str, run):
    """Answers the commands on stdin; run(x) is one forward pass returning the logits."""
    import numpy as np
    y = None
    for line in sys.stdin:
        cmd = line.strip()
        if cmd == "run":
            t0 = time.perf_counter()
            try:
                y = run()
            except Exception as e:
                fail(f"{config}: run failed: {e}")
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
