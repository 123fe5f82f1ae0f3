#!/usr/bin/env python3
"""Whole-window time ESTIMATE of the f=48 96^3 CUDA forward pass: every kernel it launches,
from the machine-code census (bench/sass/sass_census.py) and the launch list of
bench/gpu/estimates.py (shapes, chunked launch counts, compulsory DRAM bytes).

    python3 bench/gpu/window_estimate.py --census-json bench/results/sass_census.json [--md OUT.md]

Per kernel (summed over its launches), all ESTIMATES, nothing measured:
    time = max(issue-bound, math-bound, DRAM-bound) + launches x LAUNCH_US
  issue-bound = warp instructions / (SMs x 4 issue slots x boost clock), the warp
    instructions being the main loop's static count x its warp iterations (below);
  math-bound  = the GEMMs' and convs' padded tile FLOPs / the FP32 or tensor pipe's peak
    (sass_census.issue_bound): on an A100 the FP32 pipe retires 2 warp FFMA per SM and
    clock, half the issue rate, so an FFMA-heavy loop is held by it, not by issue;
  DRAM-bound  = compulsory bytes read + written (estimates.py) / the DRAM bandwidth;
  LAUNCH_US   = 3 us per launch: an ASSUMPTION (launch and drain of a dependent kernel on
    one stream), not a measurement.
Warp iterations of the main loop, per kernel family:
  GEMMs and convs       k-steps x warps of the launch tiling (sass_census.issue_bound);
  grid-stride walks     elements / (32 x elements per iteration), the elements per iteration
    (copy_channels, stage_to_volume, volume_to_stage, instnorm_apply: the bytes stored per
    iteration / the element size; instnorm_partial: the bytes loaded);
  merge_gather          a warp per output row: per row its 8 sub-grids, each counted as the
    whole row loop's static body (an upper bound);
  splitk_reduce         per element the outer loop once plus the splits loop for the
    splits past its first unrolled iteration;
  row kernels (layernorm_rows, window_gather_ln: a warp per row) per row the instructions
    outside every loop, each once (an upper bound: both sides of each branch), plus the main
    loop for the channels past one unrolled iteration, in 3 passes;
  instnorm_finalize     one block on one SM: per warp (32 channels) the loop once per
    group of parts its unrolled loads cover;
  stats_merge_tiles     per warp (4 per block of 128 channels, a block per part) the
    instructions outside the loop once plus the loop once per group of tiles its unrolled
    loads (2 per tile) cover;
  window attention      per warp one main-loop iteration per key tile (64 keys for the
    wmma kernel, 32 for the SIMT one) plus the instructions outside the loops once.
Not modelled: latency stalls, partial waves, L2 hits, the GEMMs' prologue and epilogue,
pipe throughputs other than issue (FP64 adds of the instnorm statistics, MUFU).
"""
import argparse
import json
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "gpu"))
sys.path.insert(0, os.path.join(ROOT, "bench", "sass"))

import sass_census as sc  # noqa: E402

# DRAM bandwidth (vendors' data sheets): A100 SXM 40 GB (HBM2) 1555 GB/s, H100 SXM (HBM3) 3350 GB/s.
DRAM = {"80": ("A100 SXM 40GB", 1555e9), "90": ("H100 SXM", 3350e9)}
LAUNCH_US = 3.0  # ASSUMPTION: per-launch overhead on one stream
WIDTH_BYTES = {"32": 4, "64": 8, "128": 16, "U16": 2, "S16": 2, "U8": 1, "S8": 1}


def loop_bytes(loop, cls):
    return sum(WIDTH_BYTES[w] * n for w, n in loop["widths"].get(cls, {}).items())


def issue_rate(arch, sms=None):
    _, nsm, clk, _, _ = sc.GPUS[arch]
    return (sms or nsm) * sc.ISSUE_PER_SM_CLK * clk


def kernel_name(label, half, work):
    """The instantiation a non-GEMM estimates.py label launches at f=48 (channel counts
    multiples of 8: 16-byte paths; head dim 16)."""
    T = "__half" if half else "float"
    base = label.split(" ")[0]
    if base == "copy_channels":
        return "copy_channels<uint4>", 16
    if base == "instnorm_apply":
        return f"instnorm_apply<{T}, {8 if half else 4}>", 2 if half else 4
    if base == "window_attention_fused":
        hd = work["hd"]
        if half and hd in (16, 32):
            return f"window_attention_wmma<{hd}>", None
        return f"window_attention_fused<{hd if hd in (4, 8, 16, 32) else 0}, {T}>", None
    if base == "volume_to_stage":
        return f"volume_to_stage<{T}>", 4
    if base == "merge_gather":
        return f"merge_gather<{T}, uint4>", 2 if half else 4
    if base == "stats_merge_tiles":
        return base, None
    return f"{base}<{T}>", 2 if half else 4


def warp_instr(name, elem, work, row, arch):
    """(warp instructions, SMs it runs on) of one estimates.py work entry."""
    lp = row["loop"]
    if name.startswith(("copy_channels", "stage_to_volume", "volume_to_stage", "instnorm_apply")):
        per_iter = max(1.0, loop_bytes(lp, "STG") / elem)
        return work["items"] / (32 * per_iter) * lp["instrs"], None
    if name.startswith("merge_gather"):
        return work["rows"] * 8 * lp["outer_instrs"], None
    if name.startswith("instnorm_partial"):
        per_iter = max(1.0, loop_bytes(lp, "LDG") / elem)
        return work["items"] / (32 * per_iter) * lp["instrs"], None
    if name.startswith("splitk_reduce"):
        per_iter = max(1, lp["counts"]["LDG"])
        extra = max(0, math.ceil(work["splits"] / per_iter) - 1) * lp["instrs"]
        return work["items"] / 32 * (lp["outer_instrs"] + extra), None
    if name.startswith(("layernorm_rows", "window_gather_ln")):
        per_iter = max(1, lp["counts"]["LDG"])
        loop_iters = 3 * max(0, math.ceil(work["c"] / 32) // per_iter - 1)
        return work["rows"] * (lp["outside"] + loop_iters * lp["instrs"]), None
    if name.startswith("stats_merge_tiles"):
        per_iter = max(1, lp["counts"]["LDG"] // 2)
        warps = work["parts"] * math.ceil(work["channels"] / 128) * 4
        return warps * (lp["outside"] + math.ceil(work["tiles_per_part"] / per_iter) * lp["instrs"]), None
    if name.startswith("instnorm_finalize"):
        per_iter = max(1, lp["widths"].get("LDG", {}).get("64", 1) // 2)
        warps = math.ceil(work["channels"] / 32)
        per_launch = warps * (lp["outside"] + math.ceil(work["parts"] / per_iter) * lp["outer_instrs"])
        return work["launches"] * per_launch, 1
    if name.startswith("window_attention"):
        wmma = name.startswith("window_attention_wmma")
        qt, kt, warps = (64, 64, 4) if wmma else (64, 32, 2)
        n = work["n"]
        blocks = math.ceil(n / qt) * work["heads"] * work["windows"]
        return blocks * warps * (lp["outside"] + math.ceil(n / kt) * lp["instrs"]), None
    raise KeyError(name)


def window(rows, arch, half, f=48, cube=96):
    """Per-kernel rows of the whole-window estimate for one GPU and mode."""
    import estimates
    from gemm_shapes import splits_for
    estimates.F, estimates.GEMM = (2, "gemm_wmma") if half else (4, "gemm_tiled")
    t = estimates.forward(f, cube, 1, 14)
    gpu, bw = DRAM[arch]
    out = {}

    def add(key, kernels, launches, winstr, nbytes, sms=None):
        r = out.setdefault(key, dict(kernel=key, kernels=set(), launches=0, warp_instr=0.0, issue_ms=0.0,
                                     math_ms=0.0, bytes=0.0))
        r["kernels"] |= set(kernels)
        r["launches"] += launches
        r["warp_instr"] += winstr
        r["issue_ms"] += winstr / issue_rate(arch, sms) * 1e3
        r["bytes"] += nbytes

    for b in sc.issue_bound(rows, arch, half):
        entries = t.work[b["label"]]
        add(b["label"], b["kernels"], sum(e["launches"] for e in entries), b["warp_instr"],
            sum(e["bytes"] for e in entries))
        out[b["label"]]["math_ms"] += b["math_ms"]
    # split-K partial sums of the convs: one splitk_reduce launch each (conv3d.cu)
    T = "__half" if half else "float"
    for label, shapes in t.gemms.items():
        for M, N, K, batch in shapes:
            s = splits_for(label, M, N, K)
            if s > 1:
                name = f"splitk_reduce<{T}>"
                w = dict(items=M * N, splits=s, launches=1)
                add("splitk_reduce", [name], 1, warp_instr(name, 0, w, rows[name], arch)[0],
                    4 * M * N * s + estimates.F * M * N)
    for label, entries in t.work.items():
        if label in t.gemms:
            continue
        for e in entries:
            name, elem = kernel_name(label, half, e)
            row = rows.get(name)
            if row is None or row["loop"] is None:
                sys.exit(f"window_estimate: no main loop for {name} (from {label}) on sm_{arch}")
            wi, sms = warp_instr(name, elem, e, row, arch)
            add(label, [name], e["launches"], wi, e["bytes"], sms)
    res = []
    for r in out.values():
        r["kernels"] = sorted(r["kernels"])
        r["dram_ms"] = r["bytes"] / bw * 1e3
        r["launch_ms"] = r["launches"] * LAUNCH_US * 1e-3
        bounds = {"issue": r["issue_ms"], "math": r["math_ms"], "DRAM": r["dram_ms"]}
        r["bound"] = max(bounds, key=bounds.get)
        r["est_ms"] = bounds[r["bound"]] + r["launch_ms"]
        r["gpu"] = gpu
        res.append(r)
    return sorted(res, key=lambda r: -r["est_ms"])


def all_windows(result):
    """{(arch, half): rows} for the archs of the census that have GPU figures."""
    return {f"sm_{arch} {'half' if half else 'float32'}": window(result[arch], arch, half)
            for half in (True, False) for arch in sorted(result) if arch in DRAM}


def markdown(windows):
    out = ["## Whole-window time, f=48 at 96^3, every kernel launched: ESTIMATES", "",
           "From `bench/gpu/window_estimate.py`; nothing measured. Per kernel: max(issue-bound from the SASS main "
           "loop x its warp iterations, math-bound of the GEMMs and convs (padded tile FLOPs / FP32 or tensor "
           "pipe peak), DRAM-bound from the compulsory bytes read + written) + launches x "
           f"{LAUNCH_US:g} us (per-launch overhead: an ASSUMPTION). DRAM bandwidth: "
           + ", ".join(f"{g} {bw / 1e9:.0f} GB/s" for g, bw in DRAM.values())
           + "; issue: SMs x 4 x boost clock (" + ", ".join(f"{g[0]} {g[1]} SMs at {g[2] / 1e9:.2f} GHz"
                                                             for g in sc.GPUS.values())
           + "). Row kernels count every instruction outside their loops once per row (an upper bound).", ""]
    for key, rows in windows.items():
        arch, mode = key.split(" ")
        gpu = rows[0]["gpu"] if rows else "?"
        tot = sum(r["est_ms"] for r in rows)
        out += [f"### {gpu} ({arch} code), {mode}: total {tot:.2f} ms (ESTIMATE)", "",
                "| kernel (estimates.py label) | instantiations | launches | warp instr (M) | issue est. ms | "
                "math est. ms | DRAM MB | DRAM est. ms | launch est. ms | est. ms | bound | share |",
                "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|"]
        for r in rows:
            out.append(f"| {r['kernel']} | " + ", ".join(f"`{k}`" for k in r["kernels"]) +
                       f" | {r['launches']} | {r['warp_instr'] / 1e6:.1f} | {r['issue_ms']:.3f} | {r['math_ms']:.3f} | "
                       f"{r['bytes'] / 1e6:.1f} | {r['dram_ms']:.3f} | {r['launch_ms']:.3f} | {r['est_ms']:.3f} | "
                       f"{r['bound']} | {100 * r['est_ms'] / tot:.1f} % |")
        out += [f"| **total** | | **{sum(r['launches'] for r in rows)}** | | "
                f"**{sum(r['issue_ms'] for r in rows):.2f}** | **{sum(r['math_ms'] for r in rows):.2f}** | "
                f"**{sum(r['bytes'] for r in rows) / 1e6:.0f}** | "
                f"**{sum(r['dram_ms'] for r in rows):.2f}** | **{sum(r['launch_ms'] for r in rows):.2f}** | "
                f"**{tot:.2f}** | | |", ""]
    out += ["| whole window, ESTIMATE ms | " + " | ".join(windows) + " |",
            "|---|" + "---:|" * len(windows),
            "| f=48 96^3 | " + " | ".join(f"{sum(r['est_ms'] for r in rows):.2f}" for rows in windows.values())
            + " |", ""]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--census-json", required=True, help="sass_census.py --json output")
    ap.add_argument("--md", help="write the Markdown here")
    a = ap.parse_args()
    result = json.load(open(a.census_json))["kernels"]
    text = markdown(all_windows(result))
    if a.md:
        open(a.md, "w").write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
