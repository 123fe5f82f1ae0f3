"""tools/export/make_test_data.sh's job pool, with a stand-in for the Python it runs.

The stand-in (SWINRUN_PYTHON) runs the script's inline Python for real and fakes the
generators: an export or a reference writes its files after a short sleep, logging when it
started and ended, and the export whose output path names $FAKE_FAIL fails. Checked:
- --jobs 2 runs two builds at once and never three; --jobs 1 one at a time;
- a derived case starts only after the case it rewrites has finished;
- a build that fails in a background job is named and the script exits 1; the others finish;
- --jobs 0 is refused (exit 2).
"""
import os
import pathlib
import stat
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = REPO / "tools" / "export" / "make_test_data.sh"

FAKE = r'''#!{python}
import json, os, pathlib, sys, time
args = sys.argv[1:]
if not args or args[0] in ("-", "-c"):
    os.execv({python!r}, [{python!r}] + args)
tool = os.path.basename(args[0])
log = os.environ["FAKE_LOG"]

def opt(name):
    return args[args.index(name) + 1]

def span(label, work):
    with open(log, "a") as fh:
        fh.write(f"start {{label}} {{time.monotonic():.3f}}\n")
    time.sleep(0.6)
    work()
    with open(log, "a") as fh:
        fh.write(f"end {{label}} {{time.monotonic():.3f}}\n")

if tool == "export_swin_unetr.py":
    out = pathlib.Path(opt("--out"))
    label = out.parent.name
    if label == os.environ.get("FAKE_FAIL"):
        print("export failed on purpose")
        sys.exit(1)
    def work():
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(b"onnx")
        (out.parent / "model.json").write_text(json.dumps({{"in_channels": 1}}))
        (out.parent / "export_check.json").write_text(json.dumps({{"weights_sha256": "0"}}))
    span(label, work)
elif tool == "transform_onnx.py":
    src, dst = pathlib.Path(args[2]), pathlib.Path(args[3])
    span(dst.parent.name, lambda: dst.write_bytes(src.read_bytes()))
elif tool == "ort_reference.py":
    for name in ("--save-input", "--out"):
        pathlib.Path(opt(name)).write_bytes(b"npy")
elif tool == "make_ckpt_data.py":
    if args[1:] != ["--list"]:
        for case in args[2:]:
            d = pathlib.Path(args[1]) / case
            d.mkdir(parents=True, exist_ok=True)
            (d / "logits.npy").write_bytes(b"npy")
    else:
        print("plain")
else:
    sys.exit(f"fake python: unexpected {{args}}")
'''

CASES = "f12_c32_ts,f12_c32_default,f12_c32_ts16,f12_c32_ts18,f12_c32_ts_onnxsim"


def run(tmp: pathlib.Path, jobs: str, fail: str = "") -> tuple[subprocess.CompletedProcess, list]:
    fake = tmp / "python"
    fake.write_text(FAKE.format(python=sys.executable))
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    log = tmp / f"spans_{jobs}.log"
    log.unlink(missing_ok=True)
    out = tmp / f"data_{jobs}"
    env = dict(os.environ, SWINRUN_PYTHON=str(fake), SWINRUN_NO_CACHE="1", FAKE_LOG=str(log),
               FAKE_FAIL=fail)
    proc = subprocess.run(["bash", str(SCRIPT), "--only", CASES, "--jobs", jobs, str(out)],
                          env=env, capture_output=True, text=True, timeout=120)
    spans = []
    if log.exists():
        for line in log.read_text().splitlines():
            kind, label, t = line.split()
            spans.append((float(t), 0 if kind == "end" else 1, label))
    return proc, sorted(spans)


def most_at_once(spans: list) -> int:
    running = peak = 0
    for _, starts, _ in spans:  # an end before a start at the same time
        running += 1 if starts else -1
        peak = max(peak, running)
    return peak


def main() -> int:
    failures = []
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        for jobs, want in (("2", 2), ("1", 1)):
            proc, spans = run(tmp, jobs, fail="f12_c32_ts18")
            peak = most_at_once(spans)
            print(f"--jobs {jobs}: rc {proc.returncode}, {len(spans) // 2} builds, at most {peak} at once")
            if proc.returncode != 1 or "FAILED cases: f12_c32_ts18" not in proc.stderr:
                failures.append(f"--jobs {jobs}: want exit 1 naming f12_c32_ts18, got {proc.returncode}: "
                                f"{proc.stderr.strip()[-300:]}")
            built = sorted(label for _, starts, label in spans if starts)
            want_built = ["f12_c32_default", "f12_c32_ts", "f12_c32_ts16", "f12_c32_ts_onnxsim"]
            if built != want_built:
                failures.append(f"--jobs {jobs}: built {built}, want {want_built}")
            if peak != want:
                failures.append(f"--jobs {jobs}: {peak} builds at once, want {want}")
            ends = {label: t for t, starts, label in spans if not starts}
            starts = {label: t for t, s, label in spans if s}
            if "f12_c32_ts_onnxsim" in starts and starts["f12_c32_ts_onnxsim"] < ends.get("f12_c32_ts", 1e30):
                failures.append(f"--jobs {jobs}: the derived case started before its base finished")
        proc = subprocess.run(["bash", str(SCRIPT), "--jobs", "0", str(tmp / "x")], capture_output=True,
                              text=True, env=dict(os.environ, SWINRUN_PYTHON=sys.executable))
        if proc.returncode != 2 or "--jobs" not in proc.stderr:
            failures.append(f"--jobs 0: want exit 2 with a message, got {proc.returncode}: {proc.stderr.strip()}")
    for f in failures:
        print("FAIL:", f)
    print("PASS" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
