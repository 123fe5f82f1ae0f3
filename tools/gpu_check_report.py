#!/usr/bin/env python3
"""Markdown report of tools/gpu_check.sh (standard library only):

    gpu_check_report.py STATE_DIR gpu_check.json > gpu_check.md

gpu_check.json holds each step's status and result (what gpu_check.sh assembled); the
text outputs (op timings, agreement, nsys) come from STATE_DIR. Every number is a
measurement on the machine that ran the steps.
"""
import json
import os
import sys


def mib(b):
    return f"{b / 1048576:.1f} MiB"


def forward_table(fw):
    out = ["## Whole f=48 96^3 window (random weights; host wall clock per forward(), upload and "
           "download included)", "",
           "| mode | median ms | min ms | max ms | warm-up ms | plan: weights + scratch + arena | "
           "cudaMemGetInfo used by swinrun | context + other (total - free at start) |",
           "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for mode in ("f32", "f16"):
        r = fw.get(mode)
        if not isinstance(r, dict):
            continue
        out.append(f"| {mode} | {r['median_ms']:.2f} | {r['min_ms']:.2f} | {r['max_ms']:.2f} | {r['warmup_ms']:.1f} | "
                   f"{mib(r['plan_bytes'])} ({mib(r['weights_bytes'])} + {mib(r['scratch_bytes'])} + "
                   f"{mib(r['arena_bytes'])}) | {mib(r['used_bytes'])} | {mib(r['context_bytes'])} |")
    if fw.get("nvidia_smi_used_before_mib") is not None:
        out.append(f"\nnvidia-smi memory.used before the runs: {fw['nvidia_smi_used_before_mib']} MiB "
                   "(the context + other line minus this is the CUDA context of the bench process).")
    dev = next((fw[m] for m in ("f32", "f16") if isinstance(fw.get(m), dict)), None)
    if dev:
        out.insert(0, f"Device: {dev['device']} (compute capability {dev['cc']}).\n")
    return out


def main(state, path):
    d = json.load(open(path))
    out = ["# swinrun GPU check", "", "Every figure below was measured on the GPU machine that ran "
           "`tools/gpu_check.sh` (none is an estimate).", "", "| step | status | result |", "|---|---|---|"]
    for step, v in d.items():
        res = json.dumps(v["result"]) if v["result"] is not None else ""
        if step in ("forward", "bench", "agree") and v["result"]:
            res = "below"
        out.append(f"| {step} | {v['status']} | `{res[:300]}` |")
    fw = d.get("forward", {}).get("result")
    if isinstance(fw, dict):
        out += [""] + forward_table(fw)
    for step, v in d.items():
        log = os.path.join(state, f"{step}.log")
        if v["status"] == "failed" and os.path.exists(log):
            tail = open(log, errors="replace").read().splitlines()[-30:]
            out += ["", f"## {step} failed: the end of its log", "", "```", *tail, "```"]
    for name, title in (("bench_f32.txt", "Heavy ops at f=48 96^3, float32 (bench_cuda_ops_gpu)"),
                        ("bench_f16.txt", "Heavy ops at f=48 96^3, half (bench_cuda_ops_gpu --half)"),
                        ("agree_f32.txt", "ONNX Runtime agreement, float32 (tools/check_logits.py)"),
                        ("agree_f16.txt", "ONNX Runtime agreement, half (1e-2, >= 99.5 % labels)"),
                        ("nsys_f32.txt", "Per kernel (nsys), one float32 f=48 96^3 pass"),
                        ("nsys_half.txt", "Per kernel (nsys), one half-mode f=48 96^3 pass")):
        p = os.path.join(state, name)
        if os.path.exists(p):
            text = open(p, errors="replace").read()
            if name.startswith("nsys"):
                i = text.find("cuda_gpu_kern_sum")
                text = text[i:i + 12000] if i >= 0 else text[-4000:]
            out += ["", f"## {title}", "", "```", text.rstrip(), "```"]
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
