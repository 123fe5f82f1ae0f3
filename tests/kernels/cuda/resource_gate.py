#!/usr/bin/env python3
"""The resource gate of the CUDA backend: checks every kernel of the nvcc build, for each
target in its ptxas report, against the limits the device enforces when it launches it.

    python3 tests/kernels/cuda/resource_gate.py --report build/kernels/cuda/ptxas_report.txt \\
        --manifest-exe build/kernels/cuda/swin_cuda_launch_manifest --src kernels/cuda

Inputs: the ptxas report (registers, spills, stack frame, static shared memory per kernel
and target; target swin_cuda_ptxas_report) and the launch manifest (block size and largest
dynamic shared memory per kernel, computed by launch_manifest.cu from the launch sites' own
constants). Rules, per kernel and target:
  - static shared memory <= 48 KiB;
  - static + dynamic <= the target's opt-in limit per block, and above 48 KiB the host code
    sets cudaFuncAttributeMaxDynamicSharedMemorySize for the kernel (a source check here;
    the emulator also refuses such a launch without it, in every emulated test);
  - registers <= 255 per thread, and the block's registers, allocated per warp in units of
    256, <= 65536 (the register file a block may use);
  - no spill stores or loads and no stack frame in the hot kernels (HOT; every kernel is in
    HOT or EXEMPT), other than the KNOWN_SPILLS, which may not grow.
Every kernel of the report must match exactly one manifest row, and every row some kernel.
The report must cover the targets of --require (CMake passes those of SWIN_CUDA_ARCHS), and
in CI (env CI set) sm_80 and sm_90 whatever the build. Prints one line per kernel and target,
then the tightest kernel per rule; exits 1 on any violation, saying what to change.

--no-nvcc (registered when CMake found no CUDA compiler): fails in CI (env CI set), else
exits 77 (skipped).
"""
import argparse
import os
import re
import subprocess
import sys

# Shared memory per block with the opt-in (bytes), per target.
OPTIN_SMEM = {"sm_75": 65536, "sm_80": 166912, "sm_86": 101376, "sm_87": 166912, "sm_89": 101376,
              "sm_90": 232448}
DEFAULT_SMEM = 48 * 1024       # static limit, and static + dynamic without the opt-in
REGS_PER_THREAD = 255
REGFILE_PER_BLOCK = 65536
REG_ALLOC_UNIT = 256           # registers are allocated per warp in units of 256
ALWAYS_REQUIRED = ("sm_80", "sm_90")

# The hot kernels: each runs over every voxel (or token) of some layer, so a spill costs
# local-memory traffic per voxel. No spills and no stack frame allowed (but KNOWN_SPILLS).
HOT = {
    "conv_wmma": "3x3x3 / 2x2x2 convs, half (tensor cores)",
    "conv_ffma": "3x3x3 / 2x2x2 convs, float32",
    "gemm_tiled": "float32 GEMMs: qkv, proj, fc1, fc2, merge, 1x1 convs, transposed convs, conv fallback",
    "gemm_wmma": "the same GEMMs in half mode",
    "window_attention_wmma": "window attention, half, head dims 16 / 32",
    "window_attention_fused": "window attention, the other cases",
    "window_gather_ln": "window partition + LN1 of every token",
    "layernorm_rows": "LN2 and the merge norm of every token",
    "merge_gather": "patch merging of every voxel",
    "instnorm_partial": "instance-norm statistics of every voxel",
    "instnorm_apply": "instance norm + residual + LeakyReLU of every voxel",
    "stats_merge_tiles": "the conv tiles' statistics (per 128-voxel tile and channel)",
    "splitk_reduce": "split-K sums of the deep convs' outputs",
    "copy_channels": "concatenations of every voxel",
    "stage_to_volume": "the input volume, every voxel",
    "volume_to_stage": "the output logits, every voxel",
    "ring_add": "the sliding cubes' logits into the device ring, every voxel of every cube",
    "ring_finish_rows": "averages, labels and probabilities of every voxel of the volume",
}
# Kernels allowed to spill or keep a stack frame: they do not run per voxel.
EXEMPT = {
    "instnorm_finalize": "one block per norm, a thread per channel",
    "groupnorm_merge": "one block per group norm's channel block, a thread per group",
    "groupnorm_coef": "one block per group norm's channel block, a thread per channel",
    "stage_to_array": "the weight upload, once when the backend is created",
}

# Hot kernels that spill today, with nvcc 13.0's figures (spill stores, spill loads, stack
# frame, bytes) per target. These are defects to fix, not exemptions: the gate fails when one
# gets worse, or spills on another target, and when one is clean (then remove its line).
#   gemm_tiled<4, Im2colA<float>>: the element-wise im2col fallback, which float32 takes only
#     when a tap offset passes int;
KNOWN_SPILLS = {
    ("gemm_tiled<4, Im2colA<float>, StoreRows<float> >", "sm_80"): (4, 8, 8),
    ("gemm_tiled<4, Im2colA<float>, StoreRows<float> >", "sm_86"): (4, 8, 8),
    ("gemm_tiled<4, Im2colA<float>, StoreRows<float> >", "sm_89"): (4, 8, 8),
    ("gemm_tiled<4, Im2colA<float>, StoreRows<float> >", "sm_90"): (8, 16, 8),
}


def parse_report(text):
    """{(mangled, arch): {regs, smem, spill_st, spill_ld, stack}}, the worst figure of each
    when several objects instantiate the same kernel."""
    out, cur = {}, None
    props_for = None
    for line in text.splitlines():
        m = re.match(r"ptxas info\s*: Compiling entry function '(\S+)' for '(sm_\d+)'", line)
        if m:
            cur = m.groups()
            out.setdefault(cur, {"regs": 0, "smem": 0, "spill_st": 0, "spill_ld": 0, "stack": 0})
            props_for = None
            continue
        m = re.match(r"ptxas info\s*: Function properties for (\S+)", line)
        if m:
            props_for = m.group(1)
            continue
        m = re.match(r"\s+(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and cur and props_for == cur[0]:
            e = out[cur]
            for k, v in zip(("stack", "spill_st", "spill_ld"), map(int, m.groups())):
                e[k] = max(e[k], v)
            continue
        m = re.match(r"ptxas info\s*: Used (\d+) registers", line)
        if m and cur:
            sm = re.search(r"(\d+) bytes smem", line)
            e = out[cur]
            e["regs"] = max(e["regs"], int(m.group(1)))
            e["smem"] = max(e["smem"], int(sm.group(1)) if sm else 0)
    return out


def parse_manifest(text):
    """[(pattern, threads, max dynamic bytes)]"""
    rows = []
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            p, t, d = line.split("\t")
            rows.append((p, int(t), int(d)))
    return rows


def demangle(names):
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True).stdout
    return [re.sub(r"^void ", "", n.replace("swin_cuda::", "")) for n in out.split("\n")[: len(names)]]


def family(pattern):
    return re.match(r"\w+", pattern).group(0)


def sets_optin(src, fam):
    """Whether some source of src calls cudaFuncSetAttribute(<fam>..., MaxDynamicSharedMemorySize, ...)."""
    call = re.compile(r"cudaFuncSetAttribute\(\s*\(?\s*(?:swin_cuda::)?" + fam +
                      r"\b[^;]*cudaFuncAttributeMaxDynamicSharedMemorySize")
    for f in sorted(os.listdir(src)):
        if f.endswith((".cu", ".cuh")) and call.search(open(os.path.join(src, f)).read()):
            return True
    return False


def check(report, manifest, src, require):
    """(lines, errors): the per kernel x target lines and margins, and the violations."""
    entries, rows = parse_report(report), parse_manifest(manifest)
    errors, lines = [], []
    archs = sorted({a for _, a in entries})
    for a in require:
        if a not in archs:
            errors.append(f"the report has no {a} kernels: build swin_cuda for it (SWIN_CUDA_ARCHS containing "
                          f"{a[3:]}-real, as the default does)")
    for a in archs:
        if a not in OPTIN_SMEM:
            errors.append(f"{a}: no limits known; add its opt-in shared memory per block to OPTIN_SMEM in "
                          f"tests/kernels/cuda/resource_gate.py")
    mangled = sorted({k for k, _ in entries})
    names = dict(zip(mangled, demangle(mangled)))
    used, optin_cache = set(), {}
    tight = {}   # rule -> (figure, limit, who)

    def note(rule, fig, lim, who):
        if rule not in tight or fig / lim > tight[rule][0] / tight[rule][1]:
            tight[rule] = (fig, lim, who)

    for (mg, arch) in sorted(entries, key=lambda k: (names[k[0]], k[1])):
        e, name = entries[(mg, arch)], names[mg]
        short = re.sub(r"\(.*\)$", "", name)
        match = [r for r in rows if name.startswith(r[0])]
        if len(match) != 1:
            what = "matches no row" if not match else f"matches {len(match)} rows"
            errors.append(f"{short} ({arch}) {what} of kernels/cuda/launch_manifest.cu: give it one row with its block "
                          f"size and largest dynamic shared memory")
            continue
        pat, threads, dyn = match[0]
        used.add(pat)
        fam = family(pat)
        hot = fam in HOT
        if hot == (fam in EXEMPT):
            errors.append(f"{short}: list its family '{fam}' in exactly one of HOT and EXEMPT of "
                          f"tests/kernels/cuda/resource_gate.py (EXEMPT only if it does not run per voxel)")
        bad = []
        limit = OPTIN_SMEM.get(arch, DEFAULT_SMEM)
        warps = (threads + 31) // 32
        per_warp = -(-e["regs"] * 32 // REG_ALLOC_UNIT) * REG_ALLOC_UNIT
        block_regs = warps * per_warp
        total = e["smem"] + dyn
        who = f"{short} {arch}"
        note((arch, "registers per thread"), e["regs"], REGS_PER_THREAD, short)
        note((arch, "registers per block (allocated)"), block_regs, REGFILE_PER_BLOCK, short)
        note((arch, "static shared memory"), max(e["smem"], 1), DEFAULT_SMEM, short)
        note((arch, "static + dynamic shared memory"), max(total, 1), limit, short)
        if e["smem"] > DEFAULT_SMEM:
            bad.append(f"{who}: {e['smem']} B of static shared memory, over the {DEFAULT_SMEM} B limit: move the "
                       f"arrays to dynamic shared memory (SWIN_DYN_SMEM) with the opt-in, or shrink them")
        if total > limit:
            bad.append(f"{who}: {e['smem']} B static + {dyn} B dynamic shared memory = {total} B, over {arch}'s "
                       f"{limit} B per block: the launch would fail there; shrink its tile or stages (the dynamic "
                       f"bytes come from launch_manifest.cu's row '{pat}')")
        optin = None
        if total > DEFAULT_SMEM:
            if fam not in optin_cache:
                optin_cache[fam] = sets_optin(src, fam)
            optin = optin_cache[fam]
            if not optin:
                bad.append(f"{who}: {total} B of shared memory but no cudaFuncSetAttribute({fam}, "
                           f"cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) in {src}: above {DEFAULT_SMEM} B the "
                           f"launch fails without it; set it before the launch")
        if e["regs"] > REGS_PER_THREAD:
            bad.append(f"{who}: {e['regs']} registers per thread, over {REGS_PER_THREAD}: reduce its live values")
        if block_regs > REGFILE_PER_BLOCK:
            bad.append(f"{who}: {e['regs']} registers x {threads} threads = {block_regs} allocated, over the "
                       f"{REGFILE_PER_BLOCK}-register file: the launch fails with too many resources; give it "
                       f"__launch_bounds__({threads}) or launch fewer threads per block")
        spills = (e["spill_st"], e["spill_ld"], e["stack"])
        known = KNOWN_SPILLS.get((short, arch))
        if known and not any(spills):
            bad.append(f"{who}: no longer spills: remove its line from KNOWN_SPILLS in tests/kernels/cuda/resource_gate.py")
        elif hot and any(spills) and not (known and all(f <= k for f, k in zip(spills, known))):
            was = f" (known: {known[0]}/{known[1]}/{known[2]})" if known else ""
            bad.append(f"{who}: {e['spill_st']} B spill stores, {e['spill_ld']} B spill loads, {e['stack']} B stack "
                       f"frame{was} in a hot kernel: reduce its live registers (smaller thread tile, fewer "
                       f"unrolled values, no local arrays indexed at run time), or move it from HOT to EXEMPT "
                       f"of tests/kernels/cuda/resource_gate.py if it does not run per voxel")
        errors.extend(bad)
        verdict = "FAIL" if bad else "known spill" if hot and any(spills) else "ok"
        opt = "" if optin is None else " opt-in set" if optin else " opt-in MISSING"
        lines.append(f"{arch}  {short:<58} {threads:>4} thr  {e['regs']:>3} regs "
                     f"({block_regs:>5}/{REGFILE_PER_BLOCK})  smem {e['smem']:>5} + {dyn:>6} = {total:>6}/{limit}{opt}  "
                     f"spill {e['spill_st']}/{e['spill_ld']} "
                     f"stack {e['stack']}  {'hot' if hot else 'exempt'}  {verdict}")
    seen = {(re.sub(r"\(.*\)$", "", names[mg]), a) for mg, a in entries}
    for key in KNOWN_SPILLS:
        if key[1] in archs and key not in seen:
            errors.append(f"KNOWN_SPILLS line {key} names no kernel of the report: remove it from "
                          f"tests/kernels/cuda/resource_gate.py")
    for pat, _, _ in rows:
        if pat not in used:
            errors.append(f"launch_manifest.cu row '{pat}' matches no kernel of the report: remove it, or fix its "
                          f"pattern")
    lines.append("")
    known = sum(1 for l in lines if l.endswith("known spill"))
    lines.append(f"hot kernels with known spills (KNOWN_SPILLS, not worse): {known} kernel x target")
    lines.append("tightest kernel per rule and target:")
    for (arch, rule), (fig, lim, who) in sorted(tight.items()):
        lines.append(f"  {arch}  {rule:<32} {fig:>6} / {lim:<6} ({100 * fig / lim:5.1f} %)  {who}")
    return lines, errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--report", help="ptxas_report.txt")
    ap.add_argument("--manifest-exe", help="swin_cuda_launch_manifest, run to get the manifest")
    ap.add_argument("--manifest", help="the manifest's output, saved")
    ap.add_argument("--src", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "kernels", "cuda"),
                    help="kernels/cuda")
    ap.add_argument("--require", default="", help="targets the report must cover, comma-separated")
    ap.add_argument("--no-nvcc", action="store_true", help="the build has no CUDA compiler")
    a = ap.parse_args()
    if a.no_nvcc:
        msg = ("resource gate: no CUDA compiler, so no ptxas report to check; install the CUDA toolkit (nvcc) "
               "and configure again")
        if os.environ.get("CI"):
            print(msg + " (CI is set: the gate must run in CI)", file=sys.stderr)
            return 1
        print(msg + " (skipped outside CI)")
        return 77
    if not a.report or not (a.manifest_exe or a.manifest):
        ap.error("--report and --manifest-exe (or --manifest) are needed")
    for path in filter(None, (a.report, a.manifest_exe, a.manifest)):
        if not os.path.exists(path):
            print(f"resource gate: {path} is missing: build the targets swin_cuda_ptxas_report and "
                  f"swin_cuda_launch_manifest first", file=sys.stderr)
            return 1
    manifest = (subprocess.run([a.manifest_exe], capture_output=True, text=True, check=True).stdout
                if a.manifest_exe else open(a.manifest).read())
    require = set(filter(None, a.require.split(",")))
    if os.environ.get("CI"):
        require |= set(ALWAYS_REQUIRED)
    lines, errors = check(open(a.report).read(), manifest, a.src, sorted(require))
    print("\n".join(lines))
    if errors:
        print(f"\nresource gate: {len(errors)} violation(s):", file=sys.stderr)
        for e in errors:
            print("  " + e, file=sys.stderr)
        return 1
    print("\nresource gate: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
