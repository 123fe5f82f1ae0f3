#!/usr/bin/env python3
"""Throughput of the Triton backend on the CPU beside swinrun's CLI on the same work:
window logits (windows/s) and whole-CT segmentation (volumes/min), with 1 and 2 Triton
instances of one thread each and 1 and 2 CLI processes of one thread each.

    bench/peers/triton_bench.py BACKEND_SO SWINRUN MAIN_PYTHON TEST_DATA WORK [--windows N] [--volumes N]
                          [--out bench/results/triton_cpu.md]

Run with the Triton venv's python (tools/ci/setup_triton.sh --print-python). Triton's times run
from the first request sent to the last answer received, the model already loaded, with 4
concurrent HTTP clients; the CLI's from process start to exit (model loading included, about
0.3 s per process) and, for windows, also the sum of its forward passes alone ("steady").
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "apps", "triton", "tests"))
from harness import Server, infer_segment, infer_window, segment_config, window_config, write_model  # noqa: E402

CASE = "f12_c32_default"
CLIENTS = 4


def loadavg():
    with open("/proc/loadavg") as fh:
        return " ".join(fh.read().split()[:3])


def triton_run(s, model, jobs, fn):
    def worker(chunk):
        c = s.http()
        for job in chunk:
            fn(c, model, job)
    chunks = [jobs[i::CLIENTS] for i in range(CLIENTS)]
    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(CLIENTS) as ex:
        list(ex.map(worker, chunks))
    return time.time() - t0


def cli_parallel(cmds):
    """Runs the commands at once; (wall seconds, their stderr texts)."""
    t0 = time.time()
    procs = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for c in cmds]
    errs = [p.communicate()[1] for p in procs]
    wall = time.time() - t0
    for p, e in zip(procs, errs):
        if p.returncode:
            raise RuntimeError("CLI failed: %s" % e)
    return wall, errs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("backend_so")
    ap.add_argument("swinrun")
    ap.add_argument("main_python")
    ap.add_argument("test_data")
    ap.add_argument("work")
    ap.add_argument("--windows", type=int, default=24)
    ap.add_argument("--volumes", type=int, default=8)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    repo_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    case_dir = os.path.join(a.test_data, CASE)
    model = os.path.join(case_dir, "model.onnx")
    x = np.load(os.path.join(case_dir, "input.npy"))
    in_npy = os.path.join(a.work, "input.npy")
    np.save(in_npy, x)

    # the CTs: the phantom of the segmentation test, a different seed each
    cts = []
    for k in range(a.volumes):
        ct = os.path.join(a.work, "ct%d.nii.gz" % k)
        subprocess.run([a.main_python, os.path.join(repo_root, "tools", "export", "make_ct_phantom.py"), ct, "--shape", "56", "48",
                        "20", "--spacing", "1.3", "1.1", "2.5", "--seed", str(k)], check=True, stdout=subprocess.DEVNULL)
        cts.append(ct)
    subprocess.run([a.main_python, "-c", """
import sys, numpy as np, nibabel as nib
for ct in sys.argv[1:]:
    img = nib.load(ct)
    np.save(ct + '.vol.npy', np.ascontiguousarray(np.asarray(img.dataobj).T))
    np.save(ct + '.aff.npy', img.affine)
"""] + cts, check=True)
    vols = [(np.load(ct + ".vol.npy"), np.load(ct + ".aff.npy")) for ct in cts]

    rows = []
    start_load = loadavg()
    # swinrun's CLI, 1 and 2 processes of one thread
    for procs in (1, 2):
        n = a.windows // procs
        cmds = [[a.swinrun, "forward", model, in_npy, os.path.join(a.work, "cli_%d.npy" % p), "--backend", "cpu",
                 "--threads", "1", "--runs", str(n)] for p in range(procs)]
        wall, errs = cli_parallel(cmds)
        steady = max(sum(float(t) for t in re.findall(r"run \d+ of \d+: ([0-9.]+) s", e)) for e in errs)
        rows.append(("windows", "swinrun forward CLI", procs, n * procs, wall, n * procs / wall,
                     "steady %.2f windows/s" % (n * procs / steady)))
        share = [cts[p::procs] for p in range(procs)]
        for p in range(procs):
            os.makedirs(os.path.join(a.work, "cli_seg_%d" % p), exist_ok=True)
        cmds = [[a.swinrun, "segment", "--model", model, "--backend", "cpu", "--threads", "1", "-q", "--out-dir",
                 os.path.join(a.work, "cli_seg_%d" % p)] + share[p] for p in range(procs)]
        wall, _ = cli_parallel(cmds)
        rows.append(("volumes", "swinrun segment CLI", procs, len(cts), wall, 60 * len(cts) / wall, ""))

    # Triton, 1 and 2 instances of one thread
    for inst in (1, 2):
        repo = os.path.join(a.work, "repo%d" % inst)
        write_model(repo, "w", case_dir, window_config((32, 32, 32), instances=inst, threads=1))
        write_model(repo, "seg", case_dir, segment_config("TYPE_INT16").replace("count: 1", "count: %d" % inst))
        with Server(a.backend_so, repo, os.path.join(a.work, "server%d" % inst)) as s:
            c = s.http()
            infer_window(c, "w", x)  # first touch of each code path outside the timing
            infer_segment(c, "seg", *vols[0])
            wall = triton_run(s, "w", [x] * a.windows, lambda cl, m, j: infer_window(cl, m, j))
            rows.append(("windows", "Triton (swinrun backend)", inst, a.windows, wall, a.windows / wall, ""))
            wall = triton_run(s, "seg", vols, lambda cl, m, j: infer_segment(cl, m, *j))
            rows.append(("volumes", "Triton (swinrun backend)", inst, len(vols), wall, 60 * len(vols) / wall, ""))
    end_load = loadavg()

    commit = subprocess.run(["git", "-C", repo_root, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    lines = ["# Triton backend throughput on the CPU (bench/peers/triton_bench.py)", "",
             "Machine: %d cores, no GPU, **shared with other jobs** (load average %s at the start, %s at the end): "
             "absolute numbers are low and noisy; compare rows of one run only." % (os.cpu_count(), start_load, end_load),
             "Commit %s, %s, model test-data/%s (f=12, 32^3 cube), one CPU thread per instance or process, "
             "Triton driven by %d concurrent HTTP clients; CT: 56 x 48 x 20 phantom, 1.3 x 1.1 x 2.5 mm "
             "(tools/export/make_ct_phantom.py)." % (commit, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), CASE, CLIENTS),
             "Command: `%s`" % " ".join(["bench/peers/triton_bench.py"] + sys.argv[1:]),
             "", "| work | runner | instances / processes | items | wall s | throughput | note |",
             "|---|---|---|---|---|---|---|"]
    for work, runner, n, items, wall, tput, note in rows:
        unit = "windows/s" if work == "windows" else "volumes/min"
        lines.append("| %s | %s | %d | %d | %.2f | %.2f %s | %s |" % (work, runner, n, items, wall, tput, unit, note))
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
