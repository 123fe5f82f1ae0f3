"""The GIL is released during forward passes and segmentations: two models of one thread each in
two Python threads take less wall time than one after the other, and a pure-Python thread keeps
running while a forward pass runs."""
import os
import threading
import time

import numpy as np
import pytest

import swinrun


def _work(model, x):
    for _ in range(2):
        model(x)


def _serial_and_parallel(a, b, x):
    t0 = time.monotonic()
    _work(a, x)
    _work(b, x)
    serial = time.monotonic() - t0
    threads = [threading.Thread(target=_work, args=(m, x)) for m in (a, b)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return serial, time.monotonic() - t0


def _busy_cpus() -> int:
    """Tasks running or runnable on the machine besides this one (least of a few samples of
    /proc/loadavg's instantaneous count)."""
    counts = []
    for _ in range(5):
        with open("/proc/loadavg") as f:
            counts.append(int(f.read().split()[3].split("/")[0]) - 1)
        time.sleep(0.05)
    return min(counts)


def test_two_models_in_two_threads(onnx_model):
    """Needs two free cores: skipped when other work occupies them; the best of three tries."""
    if (os.cpu_count() or 1) - _busy_cpus() < 2:
        pytest.skip(f"no two free cores ({_busy_cpus()} other tasks running on {os.cpu_count()} CPUs)")
    a = swinrun.Model(onnx_model, threads=1)
    b = swinrun.Model(onnx_model, threads=1)
    x = np.random.default_rng(0).random((2, 1, 32, 32, 32), np.float32)
    a(x), b(x)  # contexts created outside the timing
    tries = []
    for _ in range(3):
        serial, parallel = _serial_and_parallel(a, b, x)
        tries.append((parallel / serial, serial, parallel))
        print(f"one after the other {serial:.2f} s, two threads {parallel:.2f} s")
        if parallel < 0.8 * serial:
            break
    ratio, serial, parallel = min(tries)
    assert ratio < 0.8, f"two threads took {parallel:.2f} s, one after the other {serial:.2f} s"


def test_python_runs_during_forward(onnx_model):
    m = swinrun.Model(onnx_model, threads=1)
    x = np.zeros((4, 1, 32, 32, 32), np.float32)
    m(x[:1])
    ticks = 0
    done = threading.Event()

    def count():
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    t0 = time.monotonic()
    calls = 0
    while calls == 0 or time.monotonic() - t0 < 0.3:  # long enough for the counter, however fast the model
        m(x)
        calls += 1
    took = time.monotonic() - t0
    done.set()
    t.join()
    # with the GIL held during each forward the counter could only tick between batch items
    # (5 gaps a call at most)
    assert ticks > 0.2 * took * 1000 and ticks > 2 * 5 * calls, f"{ticks} ticks in {took:.2f} s, {calls} calls"
