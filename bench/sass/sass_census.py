#!/usr/bin/env python3
"""Machine-code census of the CUDA kernels: what each kernel's main loop issues per k-step.

    python3 bench/sass/sass_census.py [--build-dir build] [--archs 80,90] [--md OUT.md] [--json OUT.json]
    python3 bench/sass/sass_census.py --cubin probe.cubin --arch 80 --json -    (one object, no estimate)

Without --build-dir it compiles kernels/cuda/*.cu with nvcc into cubins for each arch (2-4
min on 2 cores); with it, it reads <build-dir>/kernels/cuda/libswin_cuda.a and
ptxas_report.txt from the nvcc build. It disassembles with cuobjdump -sass (PATH,
/usr/local/cuda/bin, $CUDA_HOME/bin, or the PyPI wheel nvidia-cuda-cuobjdump in this
Python's site-packages: nvidia/cu13/bin/cuobjdump) and, per kernel:

- main loop: of the loops (a backward BRA, its body from the target up to the branch), the
  one with the most tensor-core MACs (HMMA), then the most FFMA, then the smallest. The body
  is counted statically: each instruction once, whatever its predicate or a forward branch
  over it; an inner loop inside it is counted once per outer iteration and flagged.
- instructions per iteration by class, and per k-step for the GEMMs (gemm_tiled: 8 TN x 16
  FFMA per thread per k-step of 16; gemm_wmma: 32 x 32 x 16 MACs per warp per k-step; the
  conv kernels of conv_igemm.cuh: conv_ffma 8 x TN x 16 FFMA per thread, conv_wmma
  128 x BN x 16 / warps MACs per warp; their main loop is unrolled by the pipeline's
  stages, so one iteration holds 3-4 k-steps);
- registers and spill stores (ptxas -v), static shared memory, and occupancy per SM from
  the documented limits (LIMITS below);
- the whole-window estimate of bench/gpu/window_estimate.py: every kernel of the f=48 96^3
  forward, max(issue-bound, DRAM-bound) + a per-launch overhead (an assumption);
- an issue-bound time of the f=48 96^3 forward pass's GEMMs on an A100 (sm_80 code) and an
  H100 SXM (sm_90 code): warp instructions per k-step x warp k-steps (from the GEMM shapes
  of bench/gpu/estimates.py, with the launch's tiling and split-K) / (SMs x 4 issue
  slots x clock), beside the math-pipe bound (padded MACs / peak). ESTIMATES: prologue,
  epilogue, waves, stalls and memory are not modelled.
"""
import argparse
import glob
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "sass"))

# Per-SM limits, CUDA C++ Programming Guide, "Compute capabilities" table (8.0 and 9.0):
# 64K 32-bit registers, at most 2048 threads = 64 warps and 32 blocks, registers allocated
# per warp in units of 256, shared memory per SM (largest carveout) 164 KiB on 8.0 and
# 228 KiB on 9.0, of which 1 KiB per block is reserved by the system.
LIMITS = {
    "80": dict(regs=65536, threads=2048, warps=64, blocks=32, reg_unit=256, smem=164 * 1024, smem_block_reserved=1024),
    "90": dict(regs=65536, threads=2048, warps=64, blocks=32, reg_unit=256, smem=228 * 1024, smem_block_reserved=1024),
}
# The GPUs the issue-bound time is computed for: SMs, boost clock (Hz), dense FP16 tensor
# FLOP/s with FP32 accumulation, FP32 SIMT FLOP/s (vendors' data sheets). 4 schedulers per
# SM, each issuing one warp instruction per clock.
GPUS = {
    "80": ("A100 SXM", 108, 1.41e9, 312e12, 19.5e12),
    "90": ("H100 SXM", 132, 1.98e9, 989.4e12, 66.9e12),
}
ISSUE_PER_SM_CLK = 4

CLASSES = ["HMMA", "FFMA", "FP", "LDS", "STS", "LDSM", "LDG", "STG", "LDGSTS", "LDL/STL", "INT", "CVT", "MUFU",
           "CTRL", "BAR", "MOVE", "OTHER"]
INT_OPS = {"IMAD", "IADD3", "IADD", "LOP3", "LOP", "SHF", "SHL", "SHR", "LEA", "ISETP", "IMNMX", "IABS", "SEL",
           "PRMT", "SGXT", "BMSK", "POPC", "FLO", "IMUL", "ISCADD", "BREV", "IDP", "VIADD", "VIMNMX", "P2R", "R2P",
           "PLOP3", "LEA.HI", "UIMAD", "UIADD3", "ULOP3", "USHF", "ULEA", "UISETP", "USEL", "UPRMT"}
FP_OPS = {"FADD", "FMUL", "FMNMX", "FSETP", "FSEL", "FSET", "FCHK", "HADD2", "HFMA2", "HMUL2", "HSETP2", "HMNMX2",
          "DFMA", "DADD", "DMUL", "DSETP", "FMNMX3", "FADD32I", "FMUL32I", "FFMA32I"}
CVT_OPS = {"F2F", "I2F", "F2I", "F2FP", "I2I", "FRND", "I2FP", "F2IP"}
CTRL_OPS = {"BRA", "BRX", "JMP", "JMX", "BSSY", "BSYNC", "WARPSYNC", "YIELD", "EXIT", "BREAK", "CALL", "RET", "BPT",
            "KILL", "NANOSLEEP", "ACQBULK", "ELECT"}
MOVE_OPS = {"MOV", "MOV32I", "MOVM", "S2R", "CS2R", "S2UR", "LDC", "ULDC", "UMOV", "R2UR", "SHFL", "VOTE", "VOTEU",
            "NOP"}


def tool(name):
    """Path of a CUDA binary tool: PATH, $CUDA_HOME/bin, /usr/local/cuda/bin, or a PyPI wheel."""
    cands = [shutil.which(name), os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", name),
             os.path.join("/usr/local/cuda/bin", name)]
    for p in sys.path:
        cands += sorted(glob.glob(os.path.join(p, "nvidia", "cu*", "bin", name)))
    for c in cands:
        if c and os.access(c, os.X_OK):
            return c
    return None


def opclass(op):
    """(class, width) of a SASS opcode such as LDS.U.128 or HMMA.16816.F32."""
    parts = op.split(".")
    base = parts[0]
    width = next((p for p in parts[1:] if p in ("128", "64", "U8", "S8", "U16", "S16")), "32")
    if base in ("HMMA", "HGMMA", "IMMA", "BMMA", "DMMA"):
        return "HMMA", None
    if base == "HFMA2" and "MMA" in parts:  # a move through the MMA pipe (HFMA2.MMA R, -RZ, RZ, ...)
        return "MOVE", None
    if base == "FFMA":
        return "FFMA", None
    if base in ("LDS", "STS", "LDG", "STG"):
        return base, width
    if base in ("LDSM", "LDGSTS"):
        return base, None
    if base in ("LDL", "STL"):
        return "LDL/STL", None
    if base == "MUFU":
        return "MUFU", None
    if base in ("BAR", "DEPBAR", "MEMBAR", "LDGDEPBAR", "SYNCS", "ARRIVES"):
        return "BAR", None
    if base in CTRL_OPS:
        return "CTRL", None
    if base in INT_OPS or op in INT_OPS:
        return "INT", None
    if base in FP_OPS:
        return "FP", None
    if base in CVT_OPS:
        return "CVT", None
    if base in MOVE_OPS:
        return "MOVE", None
    return "OTHER", None


def hmma_macs(op):
    """Multiply-adds of one HMMA per warp: HMMA.16816 = m16 n8 k16, HMMA.1688 = m16 n8 k8."""
    m = re.match(r"HMMA\.(\d+)", op)
    if not m:
        return 0
    s = m.group(1)
    mm, nn, kk = int(s[:2]), int(s[2]), int(s[3:])
    return mm * nn * kk


SASS_LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_.]*)\s*([^;]*);")


def parse_sass(text):
    """{mangled kernel name: [(address, opcode, operands)]} of a cuobjdump -sass listing."""
    funcs, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            cur = None if m.group(1) in funcs else m.group(1)  # a kernel in two objects: keep the first
            if cur:
                funcs[cur] = []
            continue
        m = SASS_LINE.search(line)
        if m and cur is not None:
            funcs[cur].append((int(m.group(1), 16), m.group(3), m.group(4).strip()))
    return funcs


def loops(instrs):
    """(start, end) address ranges of the backward branches."""
    out = []
    for addr, op, args in instrs:
        if op.split(".")[0] == "BRA":
            m = re.search(r"0x([0-9a-f]+)", args)
            if m and int(m.group(1), 16) < addr:  # not the BRA-to-itself after EXIT
                out.append((int(m.group(1), 16), addr))
    return out


def census(instrs):
    """Counts of the main loop's body: dict with per-class counts, widths, loop size."""
    best = None
    for lo, hi in loops(instrs):
        body = [i for i in instrs if lo <= i[0] <= hi]
        key = (sum(hmma_macs(op) for _, op, _ in body), sum(op.split(".")[0] == "FFMA" for _, op, _ in body),
               -len(body))
        if best is None or key > best[0]:
            best = (key, lo, hi, body)
    if best is None:
        return None
    _, lo, hi, body = best
    counts = {c: 0 for c in CLASSES}
    widths = {}
    for _, op, _ in body:
        c, w = opclass(op)
        counts[c] += 1
        if w:
            widths.setdefault(c, {}).setdefault(w, 0)
            widths[c][w] += 1
    inner = sum(1 for a, b in loops(instrs) if lo <= a and b < hi)
    # For the whole-window estimate (window_estimate.py): the outermost loop holding the main
    # loop (static count, inner loops once) and the instructions outside every loop.
    olo, ohi = min((a, b) for a, b in loops(instrs) if a <= lo and b >= hi)
    spans = loops(instrs)
    outside = sum(1 for a, op, _ in instrs if not any(x <= a <= y for x, y in spans) and op != "NOP")
    return dict(start=lo, end=hi, instrs=len(body), counts=counts, widths=widths, inner_loops=inner,
                hmma_macs=sum(hmma_macs(op) for _, op, _ in body),
                outer_instrs=sum(1 for a, _, _ in instrs if olo <= a <= ohi), outside=outside)


def parse_ptxas(text):
    """{(mangled, 'sm_XX'): dict(regs, spill, smem)} from ptxas -v output."""
    out, key = {}, None
    for line in text.splitlines():
        m = re.match(r"ptxas info\s*: Compiling entry function '(\S+)' for '(sm_\d+)'", line)
        if m:
            key = m.groups()
            out[key] = dict(regs=0, spill=0, smem=0)
            continue
        if key is None:
            continue
        m = re.search(r"(\d+) bytes spill stores", line)
        if m:
            out[key]["spill"] = int(m.group(1))
        m = re.search(r"Used (\d+) registers", line)
        if m:
            out[key]["regs"] = int(m.group(1))
            sm = re.search(r"(\d+) bytes smem", line)
            out[key]["smem"] = int(sm.group(1)) if sm else 0
    return out


def occupancy(arch, regs, smem, threads):
    """(blocks per SM, occupancy = resident warps / 64, the limiting resource)."""
    L = LIMITS[arch]
    warps = -(-threads // 32)
    regs_warp = -(-regs * 32 // L["reg_unit"]) * L["reg_unit"]
    lim = {"regs": (L["regs"] // regs_warp) // warps if regs_warp else L["blocks"],
           "threads": min(L["threads"] // threads, L["warps"] // warps),
           "blocks": L["blocks"],
           "smem": L["smem"] // (smem + L["smem_block_reserved"])}
    b = min(lim.values())
    return b, b * warps / L["warps"], min(lim, key=lim.get)


def demangle(names):
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True).stdout.split("\n")
    return {n: re.sub(r"\(.*\)$", "", d.replace("swin_cuda::", "")).replace("void ", "") for n, d in zip(names, out)}


# Launch shape and k-step of the kernels whose block size is fixed (kernels/cuda/*.cu).
def kernel_spec(name):
    m = re.match(r"gemm_tiled<(\d),", name)
    if m:
        tn = int(m.group(1))
        return dict(threads=256, bm=128, bn=16 * tn, ffma_per_kstep=8 * tn * 16)
    if name.startswith("gemm_wmma<"):
        return dict(threads=128, bm=64, bn=64, macs_per_kstep=32 * 32 * 16)
    # conv_igemm.cuh: a 128 x BN tile, k-steps of 16. conv_wmma: 4 warps (BN 48) or 8 (BN 96),
    # 4 stages; conv_ffma: 16 BN / TN threads, 8 x TN x 16 FFMA per thread and k-step (TN = 12
    # with 16-byte copies, 6 with 4-byte), 3 stages.
    # Dynamic shared memory = ConvSmem::TOTAL.
    m = re.match(r"conv_(wmma|ffma)<(\d+), (\d+),", name)
    if m:
        bn = int(m.group(2))
        if m.group(1) == "wmma":
            threads = 128 if bn == 48 else 256
            smem = max(4 * (128 * 24 * 2 + 16 * (bn + 8) * 2), 128 * (bn + 4) * 4) + 256
            return dict(threads=threads, bm=128, bn=bn, macs_per_kstep=128 * bn * 16 // (threads // 32),
                        dyn_smem=smem)
        tn = 12 if int(m.group(3)) == 16 else 6
        return dict(threads=16 * bn // tn, bm=128, bn=bn, ffma_per_kstep=8 * tn * 16,
                    dyn_smem=3 * (128 * 20 * 4 + 16 * bn * 4) + 256)
    m = re.match(r"window_attention_fused<(\d+),", name)
    if m and int(m.group(1)):  # QT = 64 queries; dynamic smem 4 (2 KT HD + 2 KT), KT = 32 (window_attention.cu)
        return dict(threads=64, dyn_smem=4 * (2 * 32 * int(m.group(1)) + 2 * 32))
    if name.startswith("window_attention_wmma<"):  # 4 warps of 16 queries, static smem (window_attention_wmma.cuh)
        return dict(threads=128)
    for pat in ("instnorm_partial", "instnorm_apply", "instnorm_finalize", "groupnorm_merge", "groupnorm_coef",
                "layernorm_rows", "splitk_reduce"):
        if name.startswith(pat):
            return dict(threads=256)
    if name.startswith("stats_merge_tiles"):
        return dict(threads=128)
    return None  # block size set at launch from the shapes (grid-stride copies, generic attention)


def spec_dyn(name):
    spec = kernel_spec(name)
    return spec.get("dyn_smem", 0) if spec else 0


def ksteps_per_iter(spec, c):
    if spec is None or c is None:
        return None
    if "macs_per_kstep" in spec:
        return c["hmma_macs"] / spec["macs_per_kstep"] if c["hmma_macs"] else None
    if "ffma_per_kstep" in spec:
        return c["counts"]["FFMA"] / spec["ffma_per_kstep"] if c["counts"]["FFMA"] else None
    return None


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"sass_census: {' '.join(cmd)} failed:\n{r.stderr}")
    return r.stdout, r.stderr


def compile_sources(arch, outdir, nvcc):
    """cubins of kernels/cuda/*.cu for sm_<arch>; returns (cubin paths, ptxas -v text)."""
    cubins, log = [], ""
    for src in sorted(glob.glob(os.path.join(ROOT, "kernels", "cuda", "*.cu"))):
        out = os.path.join(outdir, f"{os.path.basename(src)}.sm_{arch}.cubin")
        _, err = run([nvcc, "-cubin", f"-arch=sm_{arch}", "-std=c++17", "-O3", "-Xptxas=-v", "-I", ROOT, "-o", out,
                      src])
        cubins.append(out)
        log += err
    return cubins, log


def collect(arch, objects, ptxas_text, cuobjdump):
    funcs = {}
    for obj in objects:
        text, _ = run([cuobjdump, "-sass", "-arch", f"sm_{arch}", obj])
        for k, v in parse_sass(text).items():
            funcs.setdefault(k, v)
    res = parse_ptxas(ptxas_text)
    names = demangle(list(funcs))
    rows = {}
    for mangled, instrs in funcs.items():
        name = names[mangled]
        r = res.get((mangled, f"sm_{arch}"), {})
        c = census(instrs)
        spec = kernel_spec(name)
        row = dict(kernel=name, arch=arch, regs=r.get("regs"), spill=r.get("spill"), smem=r.get("smem"),
                   loop=c, ksteps_per_iter=ksteps_per_iter(spec, c), threads=spec["threads"] if spec else None)
        if spec and r:
            row["blocks_per_sm"], row["occupancy"], row["occ_limit"] = occupancy(
                arch, r["regs"], r["smem"] + spec.get("dyn_smem", 0), spec["threads"])
        rows[name] = row
    return rows


def gemm_kernel(label, N, K, splits, half):
    """The instantiation the launch picks for an estimates.py GEMM label (conv3d.cu: the
    pipelined conv kernels with 16- or 4-byte copies by cin and cout, the generic
    gemm_wmma<Im2colA> loader for float16 with an odd cin)."""
    m = re.match(r"gemm_\w+<(\w+),(\w+)>", label)
    aload, epi = m.groups()
    t = "__half" if half else "float"
    epi_t = "StorePartial" if splits > 1 else f"{epi}<{t}> "
    plain_t = "StorePartial" if splits > 1 else f"StoreRows<{t}> "  # the generic loader's (conv3d.cu)
    if aload == "Im2colA":
        from gemm_shapes import conv_col_tile
        cin = K // (27 if "3x3x3" in label else 8)
        e16, e4 = (8, 2) if half else (4, 1)
        vb = 16 if cin % e16 == 0 and N % e16 == 0 else 4 if cin % e4 == 0 and N % e4 == 0 else 0
        if vb:
            return f"conv_{'wmma' if half else 'ffma'}<{conv_col_tile(N)}, {vb}, {epi_t}>"
    if epi == "ConvStoreStats":
        epi_t = plain_t
    if half:
        return f"gemm_wmma<{aload}<{t}>, {epi_t}>"
    from gemm_shapes import col_tile
    return f"gemm_tiled<{col_tile(N) // 16}, {aload}<{t}>, {epi_t}>"


def stats_epilogue(rows, name):
    """Warp instructions the tile-statistics epilogue (ConvStoreStats, conv_tile_stats.cuh)
    adds per warp: the instructions outside every loop of the kernel beyond those of the
    same tile with the plain StorePartial epilogue (same prologue; the statistics code is
    unrolled straight-line code, both sides of its branches counted: an upper bound)."""
    if "ConvStoreStats" not in name:
        return 0
    plain = rows[re.sub(r"ConvStoreStats<\w+> ", "StorePartial", name)]["loop"]["outside"]
    return max(0, rows[name]["loop"]["outside"] - plain)


def issue_bound(rows, arch, half):
    """Per estimates.py GEMM label: warp k-steps, instructions (main loop, plus the
    statistics epilogue of ConvStoreStats launches), issue-bound and math-bound ms."""
    import estimates
    from gemm_shapes import blocks_and_ksteps, splits_for
    estimates.F, estimates.GEMM = (2, "gemm_wmma") if half else (4, "gemm_tiled")
    t = estimates.forward(48, 96, 1, 14)
    gpu, sms, clk, tensor, fp32 = GPUS[arch]
    out = []
    for label, shapes in t.gemms.items():
        instr = padded = 0.0
        kernels = set()
        for M, N, K, batch in shapes:
            splits = splits_for(label, M, N, K)
            name = gemm_kernel(label, N, K, splits, half)
            row = rows.get(name)
            if row is None or not row["ksteps_per_iter"]:
                sys.exit(f"sass_census: no main loop for {name} (from {label}) on sm_{arch}")
            kernels.add(name)
            spec = kernel_spec(name)
            blocks, ksteps = blocks_and_ksteps(M, N, K, batch, splits, spec["bm"], spec["bn"])
            per_kstep = row["loop"]["instrs"] / row["ksteps_per_iter"]
            instr += blocks * (spec["threads"] // 32) * (ksteps * per_kstep + stats_epilogue(rows, name))
            padded += 2.0 * blocks * ksteps * spec["bm"] * spec["bn"] * 16
        issue_ms = instr / (sms * ISSUE_PER_SM_CLK * clk) * 1e3
        math_ms = padded / (tensor if half else fp32) * 1e3
        out.append(dict(label=label, kernels=sorted(kernels), gpu=gpu, launches=len(shapes),
                        gflop=t.k[label][0] / 1e9, padded_gflop=padded / 1e9, warp_instr=instr,
                        issue_ms=issue_ms, math_ms=math_ms))
    return out


def fmt_counts(row):
    c = row["loop"]
    if c is None:
        return None
    k = row["ksteps_per_iter"] or 1.0

    def cell(cls):
        n = c["counts"][cls]
        if not n:
            return "0"
        w = c["widths"].get(cls)
        s = f"{n / k:g}"
        if w:
            s += " (" + ", ".join(f"{v / k:g}x{kw}" for kw, v in sorted(w.items())) + ")"
        return s
    return cell


def version(exe):
    out = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    return out[-1] if out else "?"


def build_nvcc(build_dir):
    """The CUDA compiler a CMake build dir used."""
    for line in open(os.path.join(build_dir, "CMakeCache.txt")):
        if line.startswith("CMAKE_CUDA_COMPILER:"):
            return line.split("=", 1)[1].strip()
    return None


def markdown(all_rows, bounds, title, source):
    out = [f"# {title}", "", f"Code: {source}.", "",
           "Generated by `bench/sass/sass_census.py`; every time below is an ESTIMATE (no GPU "
           "measured anything). Counts are static: each instruction of the main loop's body once per "
           "iteration. For the GEMMs the counts are per k-step of 16 (the loop body divided by the k-steps "
           "it holds); for the other kernels per iteration of their main loop.", "",
           "Occupancy limits used (per SM): " + "; ".join(
               f"sm_{a}: {L['regs']} registers (allocated per warp in units of {L['reg_unit']}), "
               f"{L['threads']} threads / {L['warps']} warps, {L['blocks']} blocks, "
               f"{L['smem'] // 1024} KiB shared memory with {L['smem_block_reserved']} B reserved per block"
               for a, L in LIMITS.items()) + ".", ""]
    cols = ["kernel", "sm", "k-steps / iter", "instr / k-step", "HMMA", "FFMA", "instr / HMMA (/ FFMA)", "FFMA share",
            "FP other", "LDS", "STS", "LDSM", "LDG", "STG", "LDGSTS", "LDL/STL", "INT", "CVT", "MUFU", "CTRL",
            "BAR", "MOVE", "OTHER", "regs", "spill B", "smem B", "threads", "blocks/SM (limit)", "occupancy"]
    gemm_like = ("gemm_", "conv_wmma<", "conv_ffma<")
    for section, pred in (("GEMM kernels (per k-step of 16)", lambda n: n.startswith(gemm_like)),
                          ("Other kernels with a loop (per iteration)", lambda n: not n.startswith(gemm_like))):
        out += [f"## {section}", "", "| " + " | ".join(cols) + " |", "|---|" + "---:|" * (len(cols) - 1)]
        for name in sorted({n for rows in all_rows.values() for n in rows if pred(n)}):
            for arch, rows in sorted(all_rows.items()):
                r = rows.get(name)
                if r is None or r["loop"] is None:
                    continue
                cell = fmt_counts(r)
                c = r["loop"]
                k = r["ksteps_per_iter"] or 1.0
                per = c["instrs"] / k
                hm, ff = c["counts"]["HMMA"], c["counts"]["FFMA"]
                occ = (f"{r['blocks_per_sm']} ({r['occ_limit']})", f"{100 * r['occupancy']:.0f} %") \
                    if "occupancy" in r else ("-", "-")
                flag = f" [{c['inner_loops']} inner loop(s)]" if c["inner_loops"] else ""
                out.append("| " + " | ".join([
                    f"`{name}`{flag}", arch, f"{r['ksteps_per_iter']:g}" if r["ksteps_per_iter"] else "-",
                    f"{per:g}", cell("HMMA"), cell("FFMA"), f"{c['instrs'] / hm:.2f}" if hm else (f"({c['instrs'] / ff:.2f})" if ff else "-"),
                    f"{100 * ff / c['instrs']:.0f} %", cell("FP"), cell("LDS"), cell("STS"), cell("LDSM"),
                    cell("LDG"), cell("STG"), cell("LDGSTS"), cell("LDL/STL"), cell("INT"), cell("CVT"),
                    cell("MUFU"), cell("CTRL"), cell("BAR"), cell("MOVE"), cell("OTHER"), str(r["regs"]),
                    str(r["spill"]), str(r["smem"]) + (f" + {spec_dyn(name)} dyn." if spec_dyn(name) else ""), str(r["threads"] or "-"), occ[0], occ[1]]) + " |")
        out.append("")
    for half, bl in bounds:
        mode = "half (float16 storage, gemm_wmma on tensor cores)" if half else "float32 (gemm_tiled, FFMA)"
        out += [f"## Issue-bound time of the GEMMs, f=48 at 96^3, {mode}: ESTIMATES", "",
                "issue-bound = warp instructions (main loop per k-step x warp k-steps of the launches' tiling "
                "and split-K) / (SMs x 4 issue slots x boost clock); math-bound = MACs of the padded tiles / "
                "the vendor's peak (" + ("dense FP16 tensor, FP32 accumulation" if half else "FP32 SIMT") +
                "). Not modelled: prologue and epilogue, partial waves, latency stalls, memory. Clocks: "
                + ", ".join(f"{g[0]} {g[1]} SMs at {g[2] / 1e9:.2f} GHz (sm_{a} code)" for a, g in GPUS.items())
                + ".", "",
                "| GEMM (estimates.py) | GPU | launches | GFLOP | padded GFLOP | warp instr (G) | "
                "issue-bound est. ms | math-bound est. ms | issue / math |",
                "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
        for b in bl:
            out.append(f"| {b['label']} | {b['gpu']} | {b['launches']} | {b['gflop']:.2f} | {b['padded_gflop']:.2f} "
                       f"| {b['warp_instr'] / 1e9:.3f} | {b['issue_ms']:.3f} | {b['math_ms']:.3f} | "
                       f"{b['issue_ms'] / b['math_ms']:.1f} |")
        for gpu in sorted({b["gpu"] for b in bl}):
            s = [b for b in bl if b["gpu"] == gpu]
            out.append(f"| **total** | {gpu} | | **{sum(b['gflop'] for b in s):.1f}** | | "
                       f"**{sum(b['warp_instr'] for b in s) / 1e9:.2f}** | **{sum(b['issue_ms'] for b in s):.2f}** "
                       f"| **{sum(b['math_ms'] for b in s):.2f}** | |")
        out.append("")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build-dir", help="nvcc build (libswin_cuda.a + ptxas_report.txt); default: compile here")
    ap.add_argument("--archs", default="80,90")
    ap.add_argument("--cubin", help="census of one object instead (with --arch), no estimate")
    ap.add_argument("--arch", default="80")
    ap.add_argument("--ptxas-log", help="ptxas -v output for --cubin (registers, spills)")
    ap.add_argument("--md", help="write the Markdown here")
    ap.add_argument("--json", help="write the rows as JSON here ('-' = stdout)")
    a = ap.parse_args()
    cuobjdump = tool("cuobjdump")
    if not cuobjdump:
        sys.exit("sass_census: cuobjdump not found (pip install nvidia-cuda-cuobjdump, or a CUDA toolkit)")
    if a.cubin:
        log = open(a.ptxas_log).read() if a.ptxas_log else ""
        result = {a.arch: collect(a.arch, [a.cubin], log, cuobjdump)}
        bounds = []
    else:
        result = {}
        with tempfile.TemporaryDirectory() as tmp:
            for arch in a.archs.split(","):
                if a.build_dir:
                    d = os.path.join(a.build_dir, "kernels", "cuda")
                    objs, log = [os.path.join(d, "libswin_cuda.a")], open(os.path.join(d, "ptxas_report.txt")).read()
                else:
                    nvcc = tool("nvcc")
                    if not nvcc:
                        sys.exit("sass_census: nvcc not found; give --build-dir of an nvcc build")
                    objs, log = compile_sources(arch, tmp, nvcc)
                result[arch] = collect(arch, objs, log, cuobjdump)
        bounds = [(half, [b for arch in result if arch in GPUS for b in issue_bound(result[arch], arch, half)])
                  for half in (True, False)]
    for path in (a.md, a.json):
        if path and path != "-":
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    windows = {}
    if not a.cubin:
        import window_estimate
        windows = window_estimate.all_windows(result)
    if a.json:
        payload = json.dumps(dict(kernels=result, issue_bound=bounds, window=windows), indent=1, default=str)
        if a.json == "-":
            print(payload)
        else:
            open(a.json, "w").write(payload)
    nvcc = build_nvcc(a.build_dir) if a.build_dir else tool("nvcc")
    what = a.cubin or (f"the nvcc build in `{a.build_dir}`" if a.build_dir else "nvcc -cubin -O3 of kernels/cuda/*.cu")
    source = (f"{what}"
              f" ({version(nvcc) if nvcc else 'nvcc ?'}), disassembled by cuobjdump ({version(cuobjdump)})")
    text = markdown(result, bounds, "SASS census of the CUDA kernels", source)
    if windows:
        text += "\n" + window_estimate.markdown(windows)
    if a.md:
        open(a.md, "w").write(text + "\n")
    if a.json != "-":
        print(text)


if __name__ == "__main__":
    main()
