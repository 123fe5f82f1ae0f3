"""Unload and reload against a real tritonserver: after the first load/unload cycle (which
brings in the backend's libraries), further cycles of load, infer, unload leave the server's
RSS within a few MiB of where it was; while loaded, the model's bytes do show in it.

    test_memory.py BACKEND_SO SWINRUN MAIN_PYTHON TEST_DATA WORK
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Server, check, infer_segment, infer_window, segment_config, swinrun_forward, test_args, \
    window_config, write_model  # noqa: E402

TOLERANCE_MIB = 4
CYCLES = 4
backend_so, swinrun, main_py, data, work, repo = test_args(sys.argv)
case_dir = os.path.join(data, "f12_c32_default")
write_model(repo, "w", case_dir, window_config((32, 32, 32), instances=2))
write_model(repo, "seg", case_dir, segment_config("TYPE_FP32"))
x = np.load(os.path.join(case_dir, "input.npy"))
ref = swinrun_forward(swinrun, case_dir, x, os.path.join(work, "forward.npy"))
volume = ((np.arange(24 * 40 * 36) % 500) - 250).astype(np.float32).reshape(24, 40, 36)
affine = np.diag([1.2, 1.2, 2.5, 1.0])


def wait_state(client, name, state, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        for m in client.get_model_repository_index():
            if m["name"] == name and m.get("state") == state:
                return
        time.sleep(0.2)
    raise AssertionError("%s never reached %s" % (name, state))


def cycle(s, c):
    """Loads both models, runs each once, unloads them; the RSS (KiB) while they were loaded."""
    c.load_model("w")
    c.load_model("seg")
    check(np.array_equal(infer_window(c, "w", x), ref), "w answers correctly")
    labels = infer_segment(c, "seg", volume, affine)
    check(labels.shape == volume.shape, "seg answers")
    loaded = s.rss_kib()
    c.unload_model("w")
    c.unload_model("seg")
    wait_state(c, "w", "UNAVAILABLE")
    wait_state(c, "seg", "UNAVAILABLE")
    time.sleep(1)
    return loaded


with Server(backend_so, repo, work, explicit=[]) as s:
    c = s.http()
    cycle(s, c)
    before = s.rss_kib()
    print("RSS after the first cycle: %.1f MiB" % (before / 1024))
    for i in range(CYCLES):
        loaded = cycle(s, c)
        after = s.rss_kib()
        print("cycle %d: RSS loaded %.1f MiB, unloaded %.1f MiB" % (i + 1, loaded / 1024, after / 1024))
    check((loaded - after) / 1024 > 20, "the loaded models show in the RSS (%.1f MiB more than unloaded)"
          % ((loaded - after) / 1024))
    check(abs(after - before) / 1024 <= TOLERANCE_MIB, "after %d more cycles the RSS is within %d MiB of before "
          "(%+.2f MiB)" % (CYCLES, TOLERANCE_MIB, (after - before) / 1024))
    check("successfully unloaded" in s.log_text(), "Triton logs the unloads")
print("PASS")
