#!/usr/bin/env python3
"""End-to-end test of bench/peers/swinbench.py on a small test model (CTest: bench_harness_e2e).

  test_swinbench.py --worker BUILD/bench/swinrun_bench_worker --swinrun BUILD/swinrun \
                    --case test-data/f12_c32_ts --out-dir DIR

Runs the harness with warm-up 1 and 2 timed runs of every CPU configuration, then checks the
JSON: every CPU configuration ran, its times and peak RSS are finite and positive, the swinrun
plan is present, each pair ratio is the median of its pair ratios, the agreement numbers meet the
project's criterion (tools/check_logits.compare, recomputed here from the kept logits), the
ORT reference equals the case's stored logits, the Markdown table and the PNG exist; and that
bad arguments give exit 2 with one error line. Prints 'N passed, N failed'.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tools", "export"))

CPU = ["ort-cpu", "ort-cpu-noarena", "ort-cpu-samereq", "swinrun-cpu"]
passed, failed = 0, 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print(f"FAIL: {what}")


def pos_finite(v):
    return isinstance(v, (int, float)) and math.isfinite(v) and v > 0


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--worker", required=True)
    p.add_argument("--swinrun", required=True)
    p.add_argument("--case", required=True)
    p.add_argument("--out-dir", required=True)
    p.add_argument("--volume", action="store_true",
                   help="instead: a small synthetic CT NIfTI, one window pair and one whole-volume pair")
    p.add_argument("--peers", action="store_true",
                   help="instead: OpenVINO (f32, default), PyTorch and swinrun bf16 beside swinrun and ORT, "
                        "with thread scaling")
    a = p.parse_args()
    if a.volume:
        return volume_test(a)
    if a.peers:
        return peers_test(a)
    import numpy as np
    from check_logits import compare

    model = os.path.join(a.case, "model.onnx")
    inp = os.path.join(a.case, "input.npy")
    if not (os.path.isfile(model) and os.path.isfile(inp)):
        print(f"FAIL: test case {a.case} missing (run tools/export/make_test_data.sh)")
        print("0 passed, 1 failed")
        return 1
    bench = [sys.executable, os.path.join(HERE, "swinbench.py")]
    cmd = bench + ["--model", model, "--input", inp, "--runs", "2", "--warmup", "1", "--configs", ",".join(CPU),
                   "--worker", a.worker, "--swinrun", a.swinrun, "--out-dir", a.out_dir, "--keep-logits"]
    print("running:", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True)
    sys.stdout.write(r.stdout)
    sys.stdout.write(r.stderr)
    check(r.returncode == 0, f"swinbench exit status {r.returncode}, expected 0")
    check("| swinrun-cpu |" in r.stdout and "| ort-cpu |" in r.stdout, "Markdown table rows on stdout")

    jpath = os.path.join(a.out_dir, "results.json")
    try:
        doc = json.load(open(jpath))
    except (OSError, ValueError) as e:
        check(False, f"cannot read {jpath}: {e}")
        print(f"{passed} passed, {failed} failed")
        return 1
    for k in ("model", "input", "runs", "warmup", "machine", "configs", "ratios", "per_volume", "criterion"):
        check(k in doc, f"JSON has '{k}'")
    check(doc.get("runs") == 2 and doc.get("warmup") == 1, "runs/warmup recorded")
    check(doc.get("model", {}).get("cube") == [32, 32, 32], "model cube [32, 32, 32]")
    cfgs = doc.get("configs", {})
    for c in CPU:
        e = cfgs.get(c, {})
        check(e.get("status") == "ok", f"{c} status ok (got {e.get('status')}: {e.get('error', '')})")
        t = e.get("time_per_window") or {}
        n = 2 if c.startswith("ort") else 2 * 3  # swinrun runs once per pair, 2 pairs per ORT configuration
        check(len(e.get("seconds", [])) == n and all(pos_finite(v) for v in e.get("seconds", [])),
              f"{c}: {n} finite positive run times (got {e.get('seconds')})")
        check(all(pos_finite(t.get(k)) for k in ("median", "min", "max")) and t.get("min") <= t.get("median") <= t.get("max"),
              f"{c}: median/min/max consistent")
        check(pos_finite(e.get("peak_rss_bytes")), f"{c}: peak RSS > 0")
        check(pos_finite(e.get("rss_base_bytes")) and e["rss_base_bytes"] <= e.get("peak_rss_bytes", 0),
              f"{c}: base RSS <= peak RSS")
    sw = cfgs.get("swinrun-cpu", {})
    pl = sw.get("planned") or {}
    check(all(pos_finite(pl.get(k)) for k in ("weight_bytes", "arena_bytes", "lower_bound", "total_bytes"))
          and pl["total_bytes"] == pl["weight_bytes"] + pl["arena_bytes"] and pl["lower_bound"] <= pl["arena_bytes"],
          f"swinrun planned bytes consistent: {pl}")
    # the process holds at least the weights it planned
    check(sw.get("peak_rss_bytes", 0) >= pl.get("weight_bytes", 1), "swinrun peak RSS >= planned weight bytes")
    ratios = {r["ort"]: r for r in doc.get("ratios", [])}
    for o in CPU[:3]:
        r = ratios.get(o)
        check(r is not None and r.get("swinrun") == "swinrun-cpu", f"pair {o}/swinrun-cpu present")
        if r:
            rs = [pp["swinrun_seconds"] / pp["ort_seconds"] for pp in r["pairs"]]
            check(len(rs) == 2 and all(pos_finite(v) for v in rs), f"{o}: 2 finite pair ratios")
            check(abs(float(np.median(rs)) - r["time_ratio_median"]) <= 1e-12 * max(1, r["time_ratio_median"]),
                  f"{o}: ratio is the median of the pair ratios")
            check(pos_finite(r.get("peak_rss_ratio")), f"{o}: RSS ratio finite")
    check(cfgs.get("ort-cpu", {}).get("agreement") == "reference", "ort-cpu is the reference")

    # agreement: recompute from the kept logits with the project's criterion
    ref_path = os.path.join(a.out_dir, "logits_ort-cpu.npy")
    ref = np.load(ref_path) if os.path.isfile(ref_path) else None
    check(ref is not None, "reference logits kept")
    if ref is not None:
        stored = np.load(os.path.join(a.case, "logits.npy"))
        check(stored.shape == ref.shape and float(np.abs(stored - ref).max()) <= 1e-5 * max(1.0, float(np.abs(stored).max())),
              "harness ORT reference equals the case's stored ORT logits")
        for c in CPU[1:]:
            ag = cfgs.get(c, {}).get("agreement")
            check(isinstance(ag, dict), f"{c}: agreement present")
            if not isinstance(ag, dict):
                continue
            got = np.load(os.path.join(a.out_dir, f"logits_{c}.npy"))
            ok, line = compare(got, ref)
            print(f"{c}: {line}")
            check(ok, f"{c}: check_logits criterion: {line}")
            check(ag.get("criterion_pass") is True, f"{c}: JSON criterion_pass")
            d = float(np.abs(got.astype(np.float64) - ref.astype(np.float64)).max())
            check(math.isfinite(ag.get("max_abs_diff", float("nan"))) and abs(ag["max_abs_diff"] - d) <= 1e-9,
                  f"{c}: JSON max_abs_diff {ag.get('max_abs_diff')} == recomputed {d}")
            check(ag["max_abs_diff"] <= 1e-3 * max(1.0, float(np.abs(ref).max())), f"{c}: within 1e-3 * max(1, max|ORT|)")
            same = float((got.argmax(1) == ref.argmax(1)).mean() * 100)
            check(abs(ag.get("same_label_pct", -1) - same) < 1e-9 and same >= 99.0, f"{c}: same-label % {same}")
            dice = ag.get("dice_per_class", [])
            check(len(dice) == ref.shape[1] and all(d is None or (0.0 <= d <= 1.0) for d in dice),
                  f"{c}: Dice per class, one per output channel, in [0, 1]")
            check(ag.get("dice_min") is not None and ag["dice_min"] >= 0.9, f"{c}: min Dice {ag.get('dice_min')} >= 0.9")
    png = os.path.join(a.out_dir, "results.png")
    check(os.path.isfile(png) and open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n", "results.png is a PNG")
    check(os.path.isfile(os.path.join(a.out_dir, "results.md")), "results.md written")

    # bad arguments: exit 2, one error line
    for bad in (["--model", model, "--runs", "0"], ["--model", "/nonexistent.onnx"],
                ["--model", model, "--configs", "ort-cpu,nope"], ["--model", model, "--input", "/nonexistent.npy"]):
        rb = subprocess.run(bench + bad, capture_output=True, text=True)
        lines = [ln for ln in rb.stderr.splitlines() if ln.strip()]
        check(rb.returncode == 2 and len(lines) == 1 and lines[0].startswith("swinbench: error:"),
              f"bad arguments {bad}: exit {rb.returncode}, stderr {lines}")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


def volume_test(a) -> int:
    """An 80 x 64 x 28 CT-like NIfTI (LPS-ish affine, 0.9 x 0.9 x 2.5 mm; several overlapping
    windows after resampling): swinbench runs one window pair and one whole-volume pair; the
    JSON's per-volume block must be there and agree."""
    import nibabel as nib
    import numpy as np
    from ort_reference import make_input
    os.makedirs(a.out_dir, exist_ok=True)
    v = make_input([1, 1, 28, 64, 80], 3)[0, 0]  # (z, y, x) in [0, 1]
    hu = (v * 1400 - 1000).astype(np.int16).transpose(2, 1, 0)  # file order (i = x, j = y, k = z)
    aff = np.diag([-0.9, -0.9, 2.5, 1.0])
    img = nib.Nifti1Image(hu, aff)
    img.header.set_qform(aff, 1)
    img.header.set_sform(aff, 1)
    ct = os.path.join(a.out_dir, "ct_small.nii.gz")
    nib.save(img, ct)
    model = os.path.join(a.case, "model.onnx")
    cmd = [sys.executable, os.path.join(HERE, "swinbench.py"), "--model", model, "--input", ct, "--runs", "1",
           "--warmup", "0", "--configs", "ort-cpu,swinrun-cpu", "--volume-runs", "1", "--worker", a.worker,
           "--swinrun", a.swinrun, "--out-dir", a.out_dir, "--no-chart"]
    print("running:", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True)
    sys.stdout.write(r.stdout)
    sys.stdout.write(r.stderr)
    check(r.returncode == 0, f"swinbench exit status {r.returncode}, expected 0")
    try:
        doc = json.load(open(os.path.join(a.out_dir, "results.json")))
    except (OSError, ValueError) as e:
        check(False, f"results.json: {e}")
        print(f"{passed} passed, {failed} failed")
        return 1
    check(doc.get("input", {}).get("kind") == "nifti", "input kind nifti")
    sw = doc.get("configs", {}).get("swinrun-cpu", {})
    check(isinstance(sw.get("agreement"), dict) and sw["agreement"].get("criterion_pass") is True,
          "window agreement passes the criterion")
    pv = doc.get("per_volume", {})
    check(pv.get("measured") is True, f"per-volume measured ({pv.get('reason')})")
    pairs = pv.get("pairs", [])
    check(len(pairs) == 1, "one volume pair (ort-cpu / swinrun-cpu)")
    if pairs:
        pr = pairs[0]
        run = pr["runs"][0]
        check(pos_finite(run.get("ort_seconds")) and pos_finite(run.get("swinrun_seconds")), "volume times > 0")
        check(pos_finite(pr.get("time_ratio_median")), "volume time ratio finite")
        check(pos_finite(pr.get("ort_peak_rss_bytes")) and pos_finite(pr.get("swinrun_peak_rss_bytes")), "volume peak RSS")
        check(run.get("windows") == run.get("ort_windows") and run.get("windows", 0) > 1,
              f"same window count ({run.get('windows')} swinrun, {run.get('ort_windows')} ORT pipeline)")
        check(run.get("grid") == run.get("ort_grid"), f"same resampled grid ({run.get('grid')} vs {run.get('ort_grid')})")
        lab = pr.get("labels", {})
        same = lab.get("same_label_pct", -1)
        check(isinstance(same, float) and same >= 99.0, f"volume labels: {same} % equal (>= 99)")
        dm = lab.get("dice_mean")
        check(dm is not None and dm >= 0.95, f"volume labels: mean Dice {dm} >= 0.95")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


PEERS = ["ort-cpu", "ov-cpu-f32", "ov-cpu-default", "torch-cpu"]
SWINRUNS = ["swinrun-cpu", "swinrun-cpu-bf16"]


def peers_test(a) -> int:
    """Every CPU peer beside both swinrun precisions, 2 rounds, then 1 thread each: the rounds
    pair each peer with each swinrun configuration, the ratios are the medians of the round
    ratios, the agreement numbers are recomputed from the kept logits (float32 configurations
    with the float32 criterion, the reduced-precision ones with the half criterion), the
    scaling block holds one 1-thread time per configuration and its speed-up, and the peers
    say what they ran (OpenVINO's precision, PyTorch's checked weights)."""
    import numpy as np
    from check_logits import compare
    model = os.path.join(a.case, "model.onnx")
    inp = os.path.join(a.case, "input.npy")
    cmd = [sys.executable, os.path.join(HERE, "swinbench.py"), "--model", model, "--input", inp, "--runs", "2",
           "--warmup", "1", "--configs", ",".join(PEERS + SWINRUNS), "--scaling-threads", "1", "--scaling-warmup", "0",
           "--worker", a.worker, "--swinrun", a.swinrun, "--out-dir", a.out_dir, "--keep-logits"]
    print("running:", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True)
    sys.stdout.write(r.stdout)
    sys.stdout.write(r.stderr)
    check(r.returncode == 0, f"swinbench exit status {r.returncode}, expected 0 (bf16 disagreement is not counted)")
    try:
        doc = json.load(open(os.path.join(a.out_dir, "results.json")))
    except (OSError, ValueError) as e:
        check(False, f"results.json: {e}")
        print(f"{passed} passed, {failed} failed")
        return 1
    cfgs = doc.get("configs", {})
    for c in PEERS + SWINRUNS:
        e = cfgs.get(c, {})
        check(e.get("status") == "ok", f"{c} status ok (got {e.get('status')}: {e.get('error', '')})")
        n = 2 if c in PEERS else 2 * len(PEERS)   # each swinrun configuration runs once per round
        check(len(e.get("seconds", [])) == n and all(pos_finite(v) for v in e.get("seconds", [])),
              f"{c}: {n} finite positive run times (got {e.get('seconds')})")
        check(pos_finite(e.get("peak_rss_bytes")), f"{c}: peak RSS > 0")
    check(cfgs.get("ov-cpu-f32", {}).get("inference_precision") == "f32", "ov-cpu-f32 runs f32")
    check(cfgs.get("ov-cpu-default", {}).get("inference_precision") in ("f32", "bf16", "f16"),
          f"ov-cpu-default names its precision ({cfgs.get('ov-cpu-default', {}).get('inference_precision')})")
    check((cfgs.get("torch-cpu", {}).get("initializers_checked") or 0) > 0, "torch-cpu checked its weights")
    bf = cfgs.get("swinrun-cpu-bf16", {})
    fp = cfgs.get("swinrun-cpu", {})
    check(bf.get("precision") == "bf16" and fp.get("precision") == "fp32", "swinrun precisions reported")
    wb, wf = (bf.get("planned") or {}).get("weight_bytes", 0), (fp.get("planned") or {}).get("weight_bytes", 0)
    check(0 < wb < 0.6 * wf, f"bf16 weight bytes {wb} about half of float32's {wf}")
    rat = {(x["ort"], x["swinrun"]): x for x in doc.get("ratios", [])}
    for o in PEERS:
        for sw in SWINRUNS:
            x = rat.get((o, sw))
            check(x is not None, f"pair {o}/{sw} present")
            if x:
                rs = [pp["swinrun_seconds"] / pp["ort_seconds"] for pp in x["pairs"]]
                check(len(rs) == 2 and abs(float(np.median(rs)) - x["time_ratio_median"]) <= 1e-12 * max(1, x["time_ratio_median"]),
                      f"{o}/{sw}: ratio is the median of 2 round ratios")
    ref = np.load(os.path.join(a.out_dir, "logits_ort-cpu.npy"))
    for c in PEERS[1:] + SWINRUNS:
        ag = cfgs.get(c, {}).get("agreement")
        check(isinstance(ag, dict), f"{c}: agreement present")
        if not isinstance(ag, dict):
            continue
        got = np.load(os.path.join(a.out_dir, f"logits_{c}.npy"))
        reduced = c in ("swinrun-cpu-bf16", "ov-cpu-default")
        ok, line = compare(got, ref, rel=1e-2, min_agreement=0.995) if reduced else compare(got, ref)
        check(ag.get("criterion_pass") is ok and ag.get("criterion_kind") == ("half" if reduced else "float32"),
              f"{c}: criterion {ag.get('criterion_kind')} {ag.get('criterion_pass')} == recomputed {ok} ({line})")
        d = float(np.abs(got.astype(np.float64) - ref.astype(np.float64)).max())
        check(abs(ag.get("max_rel_err", -1) - d / float(np.abs(ref).max())) <= 1e-12, f"{c}: max rel err recomputed")
        if not reduced:
            check(ok, f"{c}: float32 criterion: {line}")
    same = cfgs.get("swinrun-cpu-bf16", {}).get("agreement", {}).get("same_label_pct", 0)
    check(same >= 97.0, f"swinrun bf16: same label on {same} % (>= 97)")
    sc = doc.get("scaling", {})
    for c in PEERS + SWINRUNS:
        s = sc.get(c, {})
        t1 = (s.get("time_per_window") or {}).get("median")
        check(s.get("threads") == 1 and pos_finite(t1), f"{c}: 1-thread time ({s})")
        full = cfgs.get(c, {}).get("time_per_window", {}).get("median")
        if pos_finite(t1) and pos_finite(full):
            check(abs(s.get("speedup_all_threads", -1) - t1 / full) <= 1e-12, f"{c}: speed-up = t(1) / t(all)")
    md = open(os.path.join(a.out_dir, "results.md")).read()
    check("Thread scaling" in md and "| torch-cpu" in md and "| ov-cpu-default (OpenVINO" in md,
          "results.md has the peers and the scaling table")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
