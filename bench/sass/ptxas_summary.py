#!/usr/bin/env python3
"""Summarises the nvcc build's ptxas resource report (ptxas_report.txt, written by the
swin_cuda_ptxas_report target) as a Markdown table: registers / spill stores / static
shared memory per kernel and target.

    python3 bench/sass/ptxas_summary.py build-cuda/kernels/cuda/ptxas_report.txt
"""
import re
import subprocess
import sys


def main(path):
    rows, cur, arch = {}, None, None
    for line in open(path):
        m = re.match(r"ptxas info\s*: Compiling entry function '(\S+)' for '(sm_\d+)'", line)
        if m:
            cur, arch = m.groups()
            rows.setdefault(cur, {})[arch] = {}
            continue
        m = re.search(r"(\d+) bytes spill stores", line)
        if m and cur:
            rows[cur][arch]["spill"] = int(m.group(1))
        m = re.search(r"Used (\d+) registers", line)
        if m and cur:
            sm = re.search(r"(\d+) bytes smem", line)
            rows[cur][arch]["regs"] = int(m.group(1))
            rows[cur][arch]["smem"] = int(sm.group(1)) if sm else 0
    archs = sorted({a for v in rows.values() for a in v})
    names = subprocess.run(["c++filt"], input="\n".join(rows), capture_output=True, text=True).stdout.split("\n")
    print("| kernel | " + " | ".join(archs) + " |")
    print("|---|" + "---|" * len(archs))
    out = []
    for mangled, name in zip(rows, names):
        name = re.sub(r"\(.*\)$", "", name.replace("swin_cuda::", "")).replace("void ", "")
        cells = []
        for a in archs:
            d = rows[mangled].get(a, {})
            cells.append(f"{d.get('regs', '?')} r, {d.get('spill', '?')} B spill, {d.get('smem', 0)} B smem")
        out.append(f"| `{name}` | " + " | ".join(cells) + " |")
    print("\n".join(sorted(out)))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build-cuda/kernels/cuda/ptxas_report.txt")
