"""The results document of a swinbench run (results.json; results.md and results.png are drawn from
it): per configuration its seconds, peak and base RSS, swinrun's planned bytes, device memory and
agreement; the round ratios, thread scaling, per-volume pairs, the machine and its load."""
from __future__ import annotations

import os
import sys

from agreement import CRITERION
from bench_common import HERE
from bench_configs import DEVICE, ORT_CONFIGS, PEER_CONFIGS, SW_CONFIGS, runtime_of
from timing import pair_ratios, stats


def config_results(wanted: list, skipped: dict, sched, agree: dict, reference: str, poller) -> dict:
    """{configuration: its entry}, in the order asked for; sched is the bench_schedule.Schedule that ran."""
    finished, failures, logits = sched.finished, sched.failures, sched.logits
    results = {}
    for c in wanted:
        if c in skipped:
            results[c] = {"status": "skipped", "reason": skipped[c], "device": DEVICE[c]}
            continue
        w = finished.get(c)
        e = {"status": "failed" if c in failures else "ok", "device": DEVICE[c], "runtime": runtime_of(c)}
        if c in failures:
            e["error"] = failures[c]
        if w is not None:
            e["seconds"] = w.times
            e["warmup_seconds"] = w.warmup_times
            e["time_per_window"] = stats(w.times)
            e["peak_rss_bytes"] = w.maxrss_kib * 1024 if w.maxrss_kib else None
            e["exit_code"] = w.exit_code
            rd = w.ready or {}
            e["rss_base_bytes"] = (rd.get("rss_base_kib") or 0) * 1024 if c in SW_CONFIGS \
                else (rd.get("rss_imported_kib") or 0) * 1024
            if c in PEER_CONFIGS:
                e["description"] = rd.get("description")
                for k in ("ov_version", "inference_precision", "num_threads", "cpu_capabilities", "torch_version",
                          "seed", "initializers_checked"):
                    if k in rd:
                        e[k] = rd[k]
            e["rss_ready_bytes"] = (rd.get("rss_ready_kib") or 0) * 1024
            e["create_seconds"] = rd.get("create_seconds")
            if c in ORT_CONFIGS:
                e["providers"] = rd.get("providers")
                e["description"] = rd.get("description")
                e["ort_version"] = rd.get("ort_version")
            elif rd:
                e["planned"] = {k: rd.get(k) for k in ("weight_bytes", "arena_bytes", "lower_bound", "total_bytes")}
                e["precision"] = rd.get("precision")
                e["precision_note"] = rd.get("precision_note")
                e["load_seconds"] = rd.get("load_seconds")
            if poller is not None:
                e["device_peak_bytes"] = poller.peak.get(w.proc.pid)
                e["device_memory_source"] = poller.source
        if c in agree:
            e["agreement"] = agree[c]
        elif c == reference and c in logits:
            e["agreement"] = "reference"
        results[c] = e
    return results


def document(a, model: str, cube: list, in_ch: int, feature, input_info: dict, machine: dict, before: dict,
             after: dict, bench_seconds: float, results: dict, sched, per_volume: dict, skipped: dict) -> dict:
    """The whole of results.json; a is swinbench's parsed command line."""
    finished, pairs, scaling = sched.finished, sched.pairs, sched.scaling
    ratios = pair_ratios(pairs, results)
    for c, s in scaling.items():
        full = (results.get(c) or {}).get("time_per_window")
        if full and s.get("time_per_window"):
            s["all_threads_median"] = full["median"]
            s["speedup_all_threads"] = s["time_per_window"]["median"] / full["median"]
    doc = {
        "tool": "bench/peers/swinbench.py",
        "command": " ".join([sys.executable, os.path.join(HERE, "swinbench.py"), *a.argv_used]),
        "date_utc": before["time"],
        "model": {"path": os.path.abspath(model), "file_bytes": os.path.getsize(model), "cube": cube,
                  "in_channels": in_ch, "feature_size": feature},
        "input": input_info,
        "runs": a.runs, "warmup": a.warmup, "threads": a.threads, "reference": a.reference,
        "machine": machine, "load_before": before, "load_after": after,
        "bench_seconds": bench_seconds,
        "configs": results,
        "ratios": ratios,
        "scaling": scaling,
        "per_volume": per_volume,
        "skipped": skipped,
        "criterion": CRITERION,
    }
    for c, e in results.items():
        info = finished[c].ready if c in finished else None
        if e.get("runtime") == "swinrun" and info:
            doc["model"]["feature_size"] = info.get("feature_size")
            doc["model"]["params"] = info.get("params")
            doc["model"]["out_channels"] = info.get("out_channels")
    return doc
