#!/usr/bin/env python3
"""The report of tools/gpu/gpu_check.sh (standard library only):

    gpu_check_report.py STATE_DIR OUT_DIR "STEP STEP ..."

reads each step's <step>.status (started, passed, failed, timed-out), .seconds, .started
and .json (its result) from STATE_DIR, and writes OUT_DIR/gpu_check.json and
OUT_DIR/gpu_check.md (each by rename, so a reader never sees half a file). gpu_check.sh
calls it when a step starts and when it ends: a step killed with the whole call shows as
"started, not finished". Every number in it was measured on the machine that ran the steps.
"""
import json
import os
import sys


def mib(b):
    return f"{b / 1048576:.1f} MiB"


def forward_table(fw):
    out = ["## Whole f=48 96^3 window (random weights; per forward(), upload and download included: "
           "host wall clock, and CUDA events on the backend stream)", "",
           "| mode | median ms | min ms | max ms | events median ms | events min ms | warm-up ms | "
           "plan: weights + scratch + arena | cudaMemGetInfo used by swinrun | context + other (total - free at start) |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for mode in ("f32", "f16"):
        r = fw.get(mode)
        if not isinstance(r, dict):
            continue
        out.append(f"| {mode} | {r['median_ms']:.2f} | {r['min_ms']:.2f} | {r['max_ms']:.2f} | "
                   f"{ms(r.get('event_median_ms'), 2)} | {ms(r.get('event_min_ms'), 2)} | {r['warmup_ms']:.1f} | "
                   f"{mib(r['plan_bytes'])} ({mib(r['weights_bytes'])} + {mib(r['scratch_bytes'])} + "
                   f"{mib(r['arena_bytes'])}) | {mib(r['used_bytes'])} | {mib(r['context_bytes'])} |")
    if fw.get("nvidia_smi_used_before_mib") is not None:
        out.append(f"\nnvidia-smi memory.used before the runs: {fw['nvidia_smi_used_before_mib']} MiB "
                   "(the context + other line minus this is the CUDA context of the bench process).")
    dev = next((fw[m] for m in ("f32", "f16") if isinstance(fw.get(m), dict)), None)
    if dev:
        out.insert(0, f"Device: {dev['device']} (compute capability {dev['cc']}).\n")
    return out


def first_with(obj, key):
    """The first dict in obj (depth first) that has key, or None."""
    if isinstance(obj, dict):
        if key in obj:
            return obj
        obj = list(obj.values())
    if isinstance(obj, list):
        for x in obj:
            found = first_with(x, key)
            if found is not None:
                return found
    return None


def wholect_table(wc):
    out = ["## A 512 x 512 x 300 CT on the device (f=48 export, random weights; the run's --json "
           "seconds per phase; device memory: nvidia-smi's peak minus its reading before the run)", ""]
    modes = [m for m in ("fp32", "fp16") if isinstance(wc.get(m), dict)]
    runs = {m: first_with(wc[m].get("run"), "seconds") or {} for m in modes}
    phases = [k for k in (runs[modes[0]].get("seconds", {}) if modes else {})]
    out += ["| mode | " + " | ".join(phases) + " | device idle | cubes | on device | plan total (ring included) | ring | "
            "peak used - before |", "|---|" + "---:|" * (len(phases) + 6)]
    for m in modes:
        r, plan = runs[m], first_with(wc[m].get("plan"), "total_bytes") or {}
        secs = r.get("seconds", {})
        peak = wc[m].get("nvidia_smi_peak_mib", 0) - (wc[m].get("nvidia_smi_used_before_mib") or 0)
        idle = r.get("device_idle_seconds")
        out.append(f"| {m} | " + " | ".join(f"{secs.get(k, 0):.3f}" for k in phases) +
                   f" | {'' if idle is None else f'{idle:.3f}'} | {r.get('windows', '')} | {r.get('blended_on_device', '')} | "
                   f"{mib(plan.get('total_bytes', 0))} | {mib(plan.get('ring_bytes', 0))} | "
                   f"{peak} MiB |")
    if wc.get("labels_equal_fraction_fp16_vs_fp32") is not None:
        out.append(f"\nLabels equal between half and float32: {100 * wc['labels_equal_fraction_fp16_vs_fp32']:.4f} % "
                   "of the label map's bytes.")
    return out


def ms(v, digits=3):
    return "-" if v is None else f"{v:.{digits}f}"


def ratio(a, b):
    return "-" if a is None or not b else f"{a / b:.2f}"


def yardstick_tables(bench):
    """swinrun beside cuDNN (every conv3d shape) and cuBLAS (the Swin GEMMs), per mode, from
    bench_cuda_ops_gpu --json: ratio = swinrun time / library time (above 1: slower)."""
    out = []
    for mode, title in (("f32", "float32 (cuDNN FMA math, cuBLAS COMPUTE_32F: no TF32)"),
                        ("f16", "half storage, float32 accumulation (tensor cores on both sides)")):
        b = bench.get(mode)
        if not isinstance(b, dict):
            continue
        out += ["", f"## swinrun vs cuDNN / cuBLAS, {title}", "",
                f"Device: {b['device']}; reference: {b['reference']}; {b['timing']} ({b['reps']} reps).", "",
                "| conv3d | side | cin | cout | k | uses | swinrun ms | cuDNN ms | swinrun/cuDNN | max diff | cuDNN algorithm |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for c in b["convs"]:
            diff = "-" if c["max_rel_diff"] is None else f"{c['max_rel_diff']:.2g}"
            out.append(f"| {c['name']} | {c['side']} | {c['cin']} | {c['cout']} | {c['k']} | {c['uses']} | "
                       f"{ms(c['swinrun_ms'])} | {ms(c['cudnn_ms'])} | {ratio(c['swinrun_ms'], c['cudnn_ms'])} | "
                       f"{diff} | {c['cudnn_algo'] or '-'} |")
        t = b["conv_total"]
        out.append(f"| **every conv3d of one forward** (uses x time) | | | | | | {ms(t['swinrun_ms'])} | "
                   f"{ms(t['cudnn_ms'])} | {ratio(t['swinrun_ms'], t['cudnn_ms'])} | | |")
        out += ["", "| stage | GEMM (M x N x K) | cuBLAS ms | swinrun op | swinrun ms | cuBLAS GEMMs inside ms | ratio |",
                "|---:|---|---:|---|---:|---:|---:|"]
        for st in b["swin"]:
            g = st["gemms"]
            if not g or any(x["M"] == 0 for x in g):
                continue
            t_attn = None if any(x["cublas_ms"] is None for x in g[:2]) else g[0]["cublas_ms"] + g[1]["cublas_ms"]
            t_mlp = None if any(x["cublas_ms"] is None for x in g[2:]) else g[2]["cublas_ms"] + g[3]["cublas_ms"]
            for i, x in enumerate(g):
                op = ""
                if i == 0:
                    op = (f"swin_attention (qkv+proj) | {ms(st['swin_attention_ms'], 4)} | {ms(t_attn, 4)} | "
                          f"{ratio(st['swin_attention_ms'], t_attn)}")
                elif i == 2:
                    op = (f"swin_mlp (fc1+fc2) | {ms(st['swin_mlp_ms'], 4)} | {ms(t_mlp, 4)} | "
                          f"{ratio(st['swin_mlp_ms'], t_mlp)}")
                else:
                    op = " | | |"
                out.append(f"| {st['stage']} | {x['name']} {x['M']} x {x['N']} x {x['K']} | {ms(x['cublas_ms'], 4)} | {op} |")
        out.append("\nThe Swin ops also do layer norm, the window attention, GELU and the window "
                   "gather/scatter: their ratio bounds what their GEMMs cost beside cuBLAS's from above.")
    return out


def read(path):
    try:
        with open(path, errors="replace") as fh:
            return fh.read().strip()
    except OSError:
        return None


def collect(state, steps):
    d = {}
    for s in steps:
        res = read(os.path.join(state, f"{s}.json"))
        try:
            res = json.loads(res) if res else None
        except ValueError:
            res = {"unparsed": res}
        secs = read(os.path.join(state, f"{s}.seconds"))
        d[s] = {"status": read(os.path.join(state, f"{s}.status")) or "not-run",
                "started": read(os.path.join(state, f"{s}.started")),
                "seconds": int(secs) if secs and secs.isdigit() else None, "result": res}
    return d


STATUS_TEXT = {"started": "started, not finished (killed with its call?)", "timed-out": "killed at its limit"}


def summary(step, v):
    r = v["result"]
    if r is None:
        return ""
    if step in ("forward", "wholect", "bench", "peers"):
        return "below"
    if step in ("agree", "agree48"):
        return "; ".join(f"{k}: {'pass' if x['rc'] == 0 else 'FAIL'}" for k, x in r.items()
                         if isinstance(x, dict) and "rc" in x)
    return json.dumps(r)[:300]


def markdown(state, d):
    out = ["# swinrun GPU check", "", "Every figure below was measured on the GPU machine that ran "
           "`tools/gpu/gpu_check.sh` (none is an estimate).", "", "| step | status | seconds | result |",
           "|---|---|---:|---|"]
    for step, v in d.items():
        secs = "" if v["seconds"] is None else str(v["seconds"])
        out.append(f"| {step} | {STATUS_TEXT.get(v['status'], v['status'])} | {secs} | `{summary(step, v)}` |")
    for step in ("agree", "agree48"):
        r = d.get(step, {}).get("result")
        if isinstance(r, dict):
            out += ["", f"## {step}: swinrun against ONNX Runtime CPU ({r.get('reference', r.get('model', ''))})", ""]
            out += [f"- {k}: {x['check']}" for k, x in r.items() if isinstance(x, dict) and "check" in x]
    bench = d.get("bench", {}).get("result")
    if isinstance(bench, dict):
        out += yardstick_tables(bench)
    fw = d.get("forward", {}).get("result")
    if isinstance(fw, dict):
        out += [""] + forward_table(fw)
    wc = d.get("wholect", {}).get("result")
    if isinstance(wc, dict):
        out += [""] + wholect_table(wc)
    peers = read(os.path.join(state, "peers.txt"))
    if peers:
        out += ["", "## swinrun beside PyTorch + MONAI, same weights (bench/peers/swinbench.py)", "", peers]
    for step, v in d.items():
        if v["status"] in ("failed", "timed-out", "started"):
            log = read(os.path.join(state, f"{step}.log"))
            if log:
                out += ["", f"## {step}: the end of its log", "", "```", *log.splitlines()[-30:], "```"]
    for name, title in (("bench_f32.txt", "bench_cuda_ops_gpu output, float32"),
                        ("bench_f16.txt", "bench_cuda_ops_gpu output, half (--half)")):
        text = read(os.path.join(state, name))
        if text:
            out += ["", f"## {title}", "", "```", text, "```"]
    return "\n".join(out) + "\n"


def write_atomic(path, text):
    with open(path + ".tmp", "w") as fh:
        fh.write(text)
    os.replace(path + ".tmp", path)


def main(state, out_dir, steps):
    d = collect(state, steps.split())
    os.makedirs(out_dir, exist_ok=True)
    write_atomic(os.path.join(out_dir, "gpu_check.json"), json.dumps(d, indent=1) + "\n")
    write_atomic(os.path.join(out_dir, "gpu_check.md"), markdown(state, d))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: gpu_check_report.py STATE_DIR OUT_DIR 'STEP ...'")
    main(*sys.argv[1:])
