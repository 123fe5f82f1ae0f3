#!/usr/bin/env python3
"""swinrun segment --out-dir with CUDA (swinrun_emu): each next volume is read and preprocessed
on a thread while the current one's cubes run (apps/cli/prefetch.c). Three inputs, the last
not a NIfTI file:

  - with prefetching (the default) and with --no-prefetch: the same two label maps and
    previews, byte for byte; the bad input reported in its turn (its name on stderr, status
    in the JSON), "1 of 3 volumes failed", exit 1, no output of it;
  - the JSON says which volumes were prepared ahead (all but the first; none with
    --no-prefetch), and the planned pipeline bytes with prefetching count the two good
    volumes held at once (b prepared while a runs); without, the larger alone.

    test_prefetch_cli.py SWINRUN_EMU MODEL WORK
Exit status 0 when every check passes."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PHANTOM = os.path.join(HERE, "..", "..", "tools", "export", "make_ct_phantom.py")

failures = []


def check(what, cond):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def main():
    exe, model, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    inputs = []
    for name, shape in (("a", (24, 20, 14)), ("b", (20, 22, 12))):
        path = os.path.join(work, f"{name}.nii.gz")
        subprocess.run([sys.executable, PHANTOM, path, "--shape", *map(str, shape), "--spacing", "1.5", "1.5", "2.0",
                        "--seed", str(len(inputs))], check=True, capture_output=True)
        inputs.append(path)
    bad = os.path.join(work, "bad.nii.gz")
    with open(bad, "wb") as f:
        f.write(b"not a NIfTI file at all" * 20)
    inputs.append(bad)
    out = {}
    for mode, extra in (("prefetch", []), ("serial", ["--no-prefetch"])):
        d = os.path.join(work, mode)
        os.makedirs(d, exist_ok=True)
        js = os.path.join(d, "run.json")
        r = subprocess.run([exe, "segment", "--model", model, "--backend", "cuda", "-q", "--out-dir", d,
                            "--with-preview", "--json", js, *extra, *inputs], capture_output=True, text=True)
        check(f"{mode}: exit 1, '1 of 3 volumes failed', the bad input named: {r.stderr.strip()[-300:]}",
              r.returncode == 1 and "1 of 3 volumes failed" in r.stderr and "bad.nii.gz" in r.stderr)
        check(f"{mode}: nothing written for the bad input",
              not any(f.startswith("bad") for f in os.listdir(d)))
        out[mode] = (d, json.load(open(js)))
    for name in ("a", "b"):
        for suffix in ("_seg.nii.gz", "_preview.png"):
            p, s = (os.path.join(out[m][0], name + suffix) for m in ("prefetch", "serial"))
            same = os.path.exists(p) and os.path.exists(s) and open(p, "rb").read() == open(s, "rb").read()
            check(f"{name}{suffix}: the same bytes with and without prefetching", same)
    vp, vs = out["prefetch"][1]["volumes"], out["serial"][1]["volumes"]
    check("statuses in input order: ok, ok, failed",
          [v["status"] for v in vp[:2]] == ["SWIN_OK", "SWIN_OK"] and vp[2]["status"] != "SWIN_OK")
    check("prepared ahead: all but the first with prefetching, none without",
          [v["prefetched"] for v in vp] == [False, True, True] and not any(v["prefetched"] for v in vs))
    pb = [v.get("planned_pipeline_bytes", 0) for v in vp if v["status"] == "SWIN_OK"]
    planned = out["prefetch"][1]["planned_pipeline_bytes"]
    check(f"planned pipeline bytes with prefetching count a and b held at once: {planned} >= {max(pb)} + {min(pb)}",
          planned >= max(pb) + min(pb) and out["serial"][1]["planned_pipeline_bytes"] == max(pb))
    print("FAILED: %d" % len(failures) if failures else "PASS")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
