#!/usr/bin/env python3
"""The resource gate (tests/kernels/cuda/resource_gate.py) passes the real build and rejects each
violation planted in a copy of its inputs: spills and a stack frame in a hot kernel, 50 KiB of
static shared memory, 256 registers per thread, 200 registers x 512 threads, dynamic shared
memory over the opt-in limit, a missing opt-in call, a kernel without a manifest row, a stale
manifest row, a kernel neither hot nor exempt, a missing target, a known spill that grew or
is gone; and --no-nvcc fails in CI.

    test_resource_gate.py REPORT MANIFEST_EXE SRC_DIR
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

GATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kernels", "cuda", "resource_gate.py")
sys.path.insert(0, os.path.dirname(GATE))
import resource_gate  # noqa: E402

failures = []


def expect(what, ok, detail=""):
    print(f"{'ok  ' if ok else 'FAIL'} {what}{': ' + detail if detail and not ok else ''}")
    if not ok:
        failures.append(what)


def entry_block(report, name_part, arch):
    """(start, end) of the report lines of the first kernel whose mangled name contains
    name_part, for arch."""
    m = re.search(r"Compiling entry function '(\w*" + name_part + r"\w*)' for '" + arch + "'", report)
    if not m:
        raise SystemExit(f"no kernel like {name_part} for {arch} in the report")
    start = report.rfind("\n", 0, m.start()) + 1
    end = report.find("Compiling entry function", m.end())
    end = report.rfind("\n", 0, end) + 1 if end >= 0 else len(report)
    return start, end, m.group(1)


def edit_entry(report, name_part, arch, fn):
    a, b, _ = entry_block(report, name_part, arch)
    return report[:a] + fn(report[a:b]) + report[b:]


def main(report_path, manifest_exe, src):
    report = open(report_path).read()
    manifest = subprocess.run([manifest_exe], capture_output=True, text=True, check=True).stdout
    lines, errors = resource_gate.check(report, manifest, src, ["sm_80", "sm_90"])
    expect("the real report passes", not errors, "; ".join(errors))

    def rejects(what, needle, rep=report, man=manifest, srcdir=src, require=("sm_80", "sm_90")):
        _, errs = resource_gate.check(rep, man, srcdir, list(require))
        hit = [e for e in errs if needle in e]
        expect(f"rejects {what}", bool(hit), f"wanted '{needle}', got {errs}")
        if hit:
            print("     " + hit[0])

    spill = edit_entry(report, "conv_wmma", "sm_80", lambda t: t.replace(
        "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads",
        "0 bytes stack frame, 64 bytes spill stores, 64 bytes spill loads"))
    rejects("spills in a hot kernel (conv_wmma, sm_80)", "64 B spill stores", spill)
    stack = edit_entry(report, "layernorm_rows", "sm_90", lambda t: t.replace(
        "0 bytes stack frame,", "16 bytes stack frame,"))
    rejects("a stack frame in a hot kernel (layernorm_rows, sm_90)", "16 B stack frame", stack)
    # a kernel of KNOWN_SPILLS (gemm_tiled<4, Im2colA<float>, StoreRows<float>> on sm_90)
    known = "gemm_tiledILi4ENS_7Im2colAIfEENS_9StoreRowsIfEE"
    spill_line = r"\d+ bytes stack frame, \d+ bytes spill stores, \d+ bytes spill loads"
    worse = edit_entry(report, known, "sm_90", lambda t: re.sub(
        spill_line, "8 bytes stack frame, 400 bytes spill stores, 400 bytes spill loads", t))
    rejects("a known spill that grew (gemm_tiled<4, Im2colA<float>>, sm_90)", "(known: ", worse)
    clean = edit_entry(report, known, "sm_90", lambda t: re.sub(
        spill_line, "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads", t))
    rejects("a known spill that is gone (stale KNOWN_SPILLS line)", "no longer spills", clean)
    cold = edit_entry(report, "instnorm_finalize", "sm_90", lambda t: t.replace(
        "0 bytes stack frame,", "16 bytes stack frame,"))
    _, errs = resource_gate.check(cold, manifest, src, ["sm_80", "sm_90"])
    expect("accepts a stack frame in an exempt kernel (instnorm_finalize)", not errs, "; ".join(errs))

    def used_line(fn):
        return lambda t: re.sub(r"ptxas info\s*: Used .*", lambda m: fn(m.group(0)), t, count=1)

    smem = edit_entry(report, "gemm_tiled", "sm_80", used_line(
        lambda l: re.sub(r", \d+ bytes smem", "", l) + ", 51200 bytes smem"))
    rejects("50 KiB of static shared memory (gemm_tiled, sm_80)", "51200 B of static shared memory", smem)
    regs = edit_entry(report, "splitk_reduce", "sm_90", used_line(
        lambda l: re.sub(r"Used \d+ registers", "Used 256 registers", l)))
    rejects("256 registers per thread (splitk_reduce, sm_90)", "256 registers per thread, over 255", regs)
    regs2 = edit_entry(report, "layernorm_rows", "sm_80", used_line(
        lambda l: re.sub(r"Used \d+ registers", "Used 200 registers", l)))
    man512 = re.sub(r"^layernorm_rows<\t\d+", "layernorm_rows<\t512", manifest, flags=re.M)
    rejects("200 registers x 512 threads (layernorm_rows, sm_80)", "200 registers x 512 threads", regs2, man512)

    big = re.sub(r"^(conv_wmma<96, 16,\t\d+)\t\d+", r"\1\t240000", manifest, flags=re.M)
    rejects("dynamic shared memory over sm_90's opt-in", "over sm_90's 232448 B", man=big)
    rejects("dynamic shared memory over sm_80's opt-in", "over sm_80's 166912 B", man=big)

    with tempfile.TemporaryDirectory() as tmp:
        for f in os.listdir(src):
            if f.endswith((".cu", ".cuh")):
                shutil.copy(os.path.join(src, f), tmp)
        p = os.path.join(tmp, "conv_igemm.cuh")
        text = open(p).read()
        cut = re.sub(r"\n\s*cudaFuncSetAttribute\(conv_wmma<[^;]*;", "", text)
        assert cut != text, "conv_igemm.cuh: no cudaFuncSetAttribute(conv_wmma... to remove"
        open(p, "w").write(cut)
        rejects("a kernel over 48 KiB without the opt-in call (conv_wmma)",
                "no cudaFuncSetAttribute(conv_wmma", srcdir=tmp)

    a, b, mangled = entry_block(report, "splitk_reduce", "sm_80")
    extra = report + report[a:b].replace(mangled, mangled.replace("13splitk_reduce", "13splitk_reducf"))
    rejects("a kernel without a manifest row", "matches no row of kernels/cuda/launch_manifest.cu", extra)
    rejects("a kernel in neither HOT nor EXEMPT", "list its family 'splitk_reducf'", extra,
            manifest + "splitk_reducf<\t256\t0\n")
    rejects("a stale manifest row", "row 'gone_kernel<' matches no kernel", man=manifest + "gone_kernel<\t256\t0\n")
    kept, keep = [], True
    for line in report.splitlines():
        if "Compiling entry function" in line:
            keep = "for 'sm_90'" not in line
        kept.append(line if keep else "")
    no90 = "\n".join(kept)
    rejects("a report without sm_90", "the report has no sm_90 kernels", no90)

    env = dict(os.environ, CI="true")
    r = subprocess.run([sys.executable, GATE, "--no-nvcc"], env=env, capture_output=True, text=True)
    expect("--no-nvcc fails in CI", r.returncode == 1 and "CI is set" in r.stderr, r.stderr)
    env.pop("CI")
    r = subprocess.run([sys.executable, GATE, "--no-nvcc"], env=env, capture_output=True, text=True)
    expect("--no-nvcc skips outside CI", r.returncode == 77, f"rc {r.returncode}")
    r = subprocess.run([sys.executable, GATE, "--report", report_path, "--manifest", os.devnull, "--src", src],
                       capture_output=True, text=True)
    expect("the command line exits 1 on a violation (empty manifest)", r.returncode == 1, f"rc {r.returncode}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
