"""results.md: the results document as Markdown (the table per configuration, thread scaling, device
memory, per-volume pairs, Dice per class), also printed on stdout."""
from __future__ import annotations

import os

MiB = 1024.0 * 1024.0


def fmt_mib(b):
    return "-" if not b else f"{b / MiB:,.0f}"


def machine_line(m: dict) -> str:
    cpu = m.get("cpu_model", "?")
    if m.get("cpu_family"):
        cpu += f" (family {m['cpu_family']} model {m.get('cpu_model_number')})"
    s = f"{cpu}, {m.get('cpus_online')} CPUs, {m.get('mem_total_mib', 0) / 1024:.0f} GiB"
    s += ", GPU: " + ("; ".join(m["gpus"]) if m.get("gpus") else "none")
    return s


def config_note(e: dict) -> str:
    """What a configuration ran in, where the worker said: OpenVINO's chosen precision,
    swinrun's precision."""
    if e.get("inference_precision"):
        return f" (OpenVINO {e.get('ov_version', '').split('-')[0]}, runs {e['inference_precision']})"
    if e.get("torch_version"):
        return f" (torch {e['torch_version']})"
    if e.get("precision") and e.get("precision") != "fp32":
        return f" ({e['precision']})"
    return ""


def markdown(doc: dict) -> str:
    cube = "x".join(map(str, doc["model"]["cube"]))
    f = doc["model"].get("feature_size")
    L = []
    L.append(f"### swinrun vs ONNX Runtime, OpenVINO, PyTorch: {os.path.basename(os.path.dirname(doc['model']['path']))}/"
             f"{os.path.basename(doc['model']['path'])}" + (f" (f={f})" if f else "") + f", window {cube}")
    L.append("")
    L.append(f"Machine: {machine_line(doc['machine'])}. Threads: {doc['threads'] or 'all'}. "
             f"Warm-up {doc['warmup']}, {doc['runs']} timed runs per configuration, alternating peer/swinrun. "
             f"Input: {doc['input']['kind']}" + (f" (seed {doc['input']['seed']})" if "seed" in doc["input"] else "")
             + f". Load average before/after: "
             f"{doc['load_before'].get('loadavg')} / {doc['load_after'].get('loadavg')}.")
    b0, b1 = doc["load_before"].get("busy_processes"), doc["load_after"].get("busy_processes")
    if b0 is not None or b1 is not None:
        L.append("")
        L.append("Other processes using >= 10% of a CPU (1 s samples): at the start " + (", ".join(b0 or []) or "none")
                 + "; at the end " + (", ".join(b1 or []) or "none") + ".")
    L.append("")
    L.append("| configuration | s/window median | min | max | swinrun/this time (median of rounds) | peak RSS MiB "
             "| base RSS MiB | swinrun planned MiB | max abs diff vs ref | max rel err | criterion | same label % "
             "| Dice min / mean |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    ratios_of = {}
    for r in doc["ratios"]:
        ratios_of.setdefault(r["ort"], []).append(r)
    for c, e in doc["configs"].items():
        if e["status"] == "skipped":
            L.append(f"| {c} | skipped: {e['reason']} ||||||||||||")
            continue
        t = e.get("time_per_window")
        row = [c + config_note(e)]
        if t:
            row += [f"{t['median']:.3f}", f"{t['min']:.3f}", f"{t['max']:.3f}"]
        else:
            row += ["FAILED", "", ""]
        rl = ratios_of.get(c)
        if rl:
            parts = []
            for r in rl:
                mr = f" (RSS {r['peak_rss_ratio']:.2f})" if r.get("peak_rss_ratio") else ""
                parts.append(f"{r['swinrun']}: {r['time_ratio_median']:.2f}{mr}")
            row.append("; ".join(parts))
        else:
            row.append("-")
        row.append(fmt_mib(e.get("peak_rss_bytes")))
        row.append(fmt_mib(e.get("rss_base_bytes")))
        pl = e.get("planned")
        row.append(f"{pl['total_bytes'] / MiB:,.0f} (w {pl['weight_bytes'] / MiB:,.0f} + arena "
                   f"{pl['arena_bytes'] / MiB:,.0f})" if pl and pl.get("total_bytes") else "-")
        ag = e.get("agreement")
        if ag == "reference":
            row += ["reference", "-", "-", "-", "-"]
        elif isinstance(ag, dict) and "max_abs_diff" in ag:
            dm = ag.get("dice_min")
            row += [f"{ag['max_abs_diff']:.2e} (bound {ag['bound']:.1e})", f"{ag.get('max_rel_err', float('nan')):.1e}",
                    ("PASS" if ag["criterion_pass"] else "FAIL") + (" (half)" if ag.get("criterion_kind") == "half" else ""),
                    f"{ag['same_label_pct']:.4f}",
                    "-" if dm is None else f"{dm:.4f} / {ag['dice_mean']:.4f}"]
        elif isinstance(ag, dict):
            row += [ag.get("error", "?"), "-", "FAIL", "-", "-"]
        else:
            row += ["-", "-", "-", "-", "-"]
        if e["status"] == "failed":
            row[0] += f" (FAILED: {e.get('error', '')[:120]})"
        L.append("| " + " | ".join(row) + " |")
    L.append("")
    L.append("Peak RSS: the process's ru_maxrss (wait4), each configuration in its own process; an ORT process's "
             "base is Python + numpy + onnxruntime before the session, swinrun's base is the bare process. "
             "The ratio column is swinrun / that ORT configuration, from back-to-back pairs; "
             "(RSS r) is swinrun's peak RSS / that configuration's. Ratios < 1 mean swinrun is faster / smaller. "
             "max rel err = max|logit - ref| / max|ref|. Criterion: float32 (max|d| <= 1e-3 max(1, max|ref|), "
             "labels equal where the reference's top-2 gap > 1e-3); (half): the CUDA half-mode criterion "
             "(max|d| <= 1e-2 max(1, max|ref|), same label on >= 99.5 % of voxels), for configurations that may "
             "run in reduced precision (reported, not counted in the exit status).")
    sc = doc.get("scaling") or {}
    if sc:
        n = next(iter(sc.values())).get("threads")
        L.append("")
        L.append(f"Thread scaling: each configuration in a fresh process with {n} thread(s) "
                 f"(after {next(iter(sc.values())).get('warmup')} warm-up), against its median with "
                 f"{doc['threads'] or 'all'} threads above:")
        L.append("")
        L.append(f"| configuration | s/window, {n} thread(s) | s/window, {doc['threads'] or 'all'} threads "
                 f"| speed-up | peak RSS MiB, {n} thread(s) |")
        L.append("|---|---|---|---|---|")
        for c, s in sc.items():
            if not s.get("time_per_window"):
                L.append(f"| {c} | {s.get('error', 'FAILED')} | | | |")
                continue
            full = s.get("all_threads_median")
            L.append(f"| {c} | {s['time_per_window']['median']:.3f} | " + ("-" if full is None else f"{full:.3f}")
                     + " | " + ("-" if full is None else f"{s['speedup_all_threads']:.2f}x") + " | "
                     + fmt_mib(s.get("peak_rss_bytes")) + " |")
    for c, e in doc["configs"].items():
        if e.get("device_peak_bytes") is not None:
            L.append(f"Device memory {c}: {fmt_mib(e['device_peak_bytes'])} MiB peak ({e.get('device_memory_source')}).")
    pv = doc["per_volume"]
    if not pv.get("measured"):
        L.append(f"Per volume: not measured: {pv.get('reason')}.")
    else:
        L.append("")
        L.append(f"Per volume ({pv['input']}; {pv['timing']}):")
        L.append("")
        L.append("| pair | ORT s/volume median | swinrun s/volume median | swinrun/ORT (median of pairs) | windows "
                 "| ORT peak RSS MiB | swinrun peak RSS MiB | same label % | Dice min / mean |")
        L.append("|---|---|---|---|---|---|---|---|---|")
        for pr in pv["pairs"]:
            lab = pr["labels"]
            dm = lab.get("dice_min")
            L.append(f"| {pr['ort']} / {pr['swinrun']} | {pr['ort_seconds']['median']:.2f} | "
                     f"{pr['swinrun_seconds']['median']:.2f} | {pr['time_ratio_median']:.2f} | {pr['runs'][0]['windows']} | "
                     f"{fmt_mib(pr['ort_peak_rss_bytes'])} | {fmt_mib(pr['swinrun_peak_rss_bytes'])} | "
                     f"{lab.get('same_label_pct', float('nan')):.4f} | "
                     + ("-" if dm is None else f"{dm:.4f} / {lab['dice_mean']:.4f}") + " |")
    for c, e in doc["configs"].items():
        ag = e.get("agreement")
        if isinstance(ag, dict) and ag.get("dice_per_class"):
            L.append(f"Dice per class {c}: " + " ".join("-" if d is None else f"{d:.4f}" for d in ag["dice_per_class"]))
    return "\n".join(L) + "\n"
