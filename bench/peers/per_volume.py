"""Whole-volume pairs on a NIfTI input, each run in a fresh process: MONAI's pipeline with ONNX Runtime
as the predictor (bench/peers/ort_volume.py), then `swinrun IN.nii.gz OUT.nii.gz`; seconds, peak
RSS and the agreement of the two label maps."""
from __future__ import annotations

import json
import os
import statistics
import sys

from agreement import label_agreement
from bench_common import HERE, log
from timing import stats
from worker_process import run_process


def volume_phase(a, model, cube, cli, configs, out_dir, failures) -> dict:
    """Pairs of whole-volume runs, each in a fresh process: the MONAI pipeline with ORT as the
    predictor (bench/peers/ort_volume.py), then `swinrun IN.nii.gz OUT.nii.gz`."""
    import nibabel as nib
    import numpy as np
    res = {"measured": True, "input": a.input, "runs": a.volume_runs, "pairs": [],
           "timing": "pipeline seconds: read .. write, model load / session creation excluded; wall: whole process",
           "ort": "bench/peers/ort_volume.py (MONAI Orientation RAS, Spacing 1.5 1.5 2.0, window -175..250, "
                  "sliding_window_inference overlap 0.5 constant, argmax, nearest back to the input grid)",
           "swinrun": "swinrun IN.nii.gz OUT.nii.gz --model M --threads N --json J -q"}
    pairs_for = [("ort-cpu", "swinrun-cpu", "cpu"), ("ort-cuda", "swinrun-cuda", "cuda")]
    for o, sw, dev in pairs_for:
        if o not in configs or sw not in configs:
            continue
        runs = []
        for r in range(a.volume_runs):
            po = os.path.join(out_dir, f"volume_{o}.nii.gz")
            ps = os.path.join(out_dir, f"volume_{sw}.nii.gz")
            pj = os.path.join(out_dir, f"volume_{sw}.json")
            argv_o = [sys.executable, os.path.join(HERE, "ort_volume.py"), model, a.input, po, "--cube",
                      *map(str, cube), "--config", o, "--threads", str(a.threads)]
            rc, out, wall_o, rss_o = run_process(argv_o, os.path.join(out_dir, f"volume_{o}.stderr.log"), a.timeout)
            msg = {}
            for line in out.splitlines():
                if line.startswith("{"):
                    try:
                        msg = json.loads(line)
                    except ValueError:
                        pass
            if rc != 0 or msg.get("event") != "volume":
                failures[f"volume {o}"] = f"exit {rc}: {msg.get('message', 'no result')}"
                log(f"volume {o}: FAILED: {failures[f'volume {o}']}")
                break
            argv_s = [cli, a.input, ps, "--model", model, "--threads", str(a.threads), "--json", pj, "-q"]
            if dev == "cuda":
                argv_s += ["--backend", "cuda"]
            rc, _, wall_s, rss_s = run_process(argv_s, os.path.join(out_dir, f"volume_{sw}.stderr.log"), a.timeout)
            try:
                js = json.load(open(pj))
                vs = js["volumes"][0]
            except (OSError, ValueError, KeyError, IndexError):
                js, vs = {}, {}
            if rc != 0 or vs.get("status") != "SWIN_OK":
                failures[f"volume {sw}"] = f"exit {rc}: {vs.get('error', 'see ' + pj)}"
                log(f"volume {sw}: FAILED: {failures[f'volume {sw}']}")
                break
            t_o, t_s = float(msg["seconds"]), float(vs["seconds"]["total"])
            runs.append({"ort_seconds": t_o, "ort_wall_seconds": wall_o, "ort_session_seconds": msg.get("session_seconds"),
                         "ort_peak_rss_bytes": rss_o, "ort_base_rss_bytes": msg.get("rss_imported_kib", 0) * 1024,
                         "swinrun_seconds": t_s, "swinrun_wall_seconds": wall_s,
                         "swinrun_model_load_seconds": js.get("model_load_seconds"), "swinrun_peak_rss_bytes": rss_s,
                         "swinrun_planned_total_bytes": js.get("planned_total_bytes"),
                         "windows": vs.get("windows"), "ort_windows": msg.get("windows"),
                         "grid": vs.get("grid_dim"), "ort_grid": msg.get("grid")})
            log(f"volume pair {r + 1}/{a.volume_runs}: {o} {t_o:.2f} s (wall {wall_o:.1f}), "
                f"{sw} {t_s:.2f} s (wall {wall_s:.1f})")
        if not runs:
            continue
        lab_o = np.asarray(nib.load(po).dataobj).astype(np.int64)
        lab_s = np.asarray(nib.load(ps).dataobj).astype(np.int64)
        classes = int(js.get("classes") or (max(lab_o.max(), lab_s.max()) + 1))
        agree = label_agreement(lab_s, lab_o, classes) if lab_o.shape == lab_s.shape else \
            {"error": f"label shapes {lab_s.shape} vs {lab_o.shape}"}
        ratios = [r_["swinrun_seconds"] / r_["ort_seconds"] for r_ in runs]
        res["pairs"].append({
            "ort": o, "swinrun": sw, "runs": runs, "time_ratios": ratios, "time_ratio_median": statistics.median(ratios),
            "ort_seconds": stats([r_["ort_seconds"] for r_ in runs]),
            "swinrun_seconds": stats([r_["swinrun_seconds"] for r_ in runs]),
            "ort_peak_rss_bytes": max(r_["ort_peak_rss_bytes"] for r_ in runs),
            "swinrun_peak_rss_bytes": max(r_["swinrun_peak_rss_bytes"] for r_ in runs),
            "labels": agree})
        if not a.keep_logits:
            for pth in (po, ps):
                try:
                    os.remove(pth)
                except OSError:
                    pass
    if not res["pairs"]:
        return {"measured": False, "reason": "no volume pair ran (see the failures)" if failures else
                "needs ort-cpu and swinrun-cpu (or the CUDA pair) among --configs"}
    return res

