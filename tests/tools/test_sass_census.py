#!/usr/bin/env python3
"""bench/sass/sass_census.py on kernels whose machine code is known (census_probe.cu), compiled
here with nvcc for sm_80 and sm_90; plus the occupancy arithmetic and the opcode classes on
hand-computed cases. Exit 77 (CTest: skipped) when nvcc or cuobjdump is missing.

    test_sass_census.py [--nvcc PATH]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "sass"))
sys.path.insert(0, os.path.join(ROOT, "bench", "gpu"))
import sass_census as sc  # noqa: E402

FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


def pure_checks():
    # gemm_tiled<4, ...> on sm_80: 128 registers -> 4096 per warp -> 16 warps -> 2 blocks of 8 warps.
    check(sc.occupancy("80", 128, 25088, 256) == (2, 0.25, "regs"), "occupancy sm_80 128 r, 256 threads: 2 blocks, 25 %")
    # 64 registers, 128 threads on sm_90: 2048 per warp -> 32 warps -> 8 blocks (smem allows 9).
    check(sc.occupancy("90", 64, 22784, 128) == (8, 0.5, "regs"), "occupancy sm_90 64 r, 128 threads: 8 blocks, 50 %")
    # 100,000 B of shared memory: one block fits in 164 KiB with the 1 KiB reserve, not two.
    check(sc.occupancy("80", 32, 100000, 128) == (1, 4 / 64, "smem"), "occupancy limited by shared memory")
    # 33 registers round up to 40 per thread (1280 per warp): 51 warps -> 6 blocks of 8 warps.
    check(sc.occupancy("80", 33, 0, 256) == (6, 48 / 64, "regs"), "register allocation unit 256 per warp")
    check(sc.opclass("LDS.U.128") == ("LDS", "128") and sc.opclass("STG.E.64") == ("STG", "64"), "widths")
    check(sc.opclass("HFMA2.MMA")[0] == "MOVE" and sc.opclass("HMMA.16816.F32")[0] == "HMMA", "HFMA2.MMA is a move")
    check(sc.hmma_macs("HMMA.16816.F32") == 2048 and sc.hmma_macs("HMMA.1688.F32") == 1024, "HMMA shapes")
    listing = """
        Function : k
        /*0000*/                   IADD3 R0, R0, 0x1, RZ ;
        /*0010*/                   FFMA R1, R1, R1, R1 ;
        /*0020*/               @P0 BRA 0x0 ;
        /*0030*/                   EXIT ;
        /*0040*/                   BRA 0x40;
    """
    c = sc.census(sc.parse_sass(listing)["k"])
    check(c is not None and (c["start"], c["end"], c["instrs"], c["counts"]["FFMA"]) == (0, 0x20, 3, 1),
          "the backward BRA is the loop; the BRA to itself after EXIT is not")


class AnyRows(dict):
    """Census rows where every kernel has the same synthetic main loop (window_estimate checks)."""

    def get(self, name, default=None):
        loop = dict(instrs=10, outer_instrs=30, outside=100, hmma_macs=0, inner_loops=0,
                    counts={c: 0 for c in sc.CLASSES}, widths={})
        loop["counts"]["LDG"] = 1
        return dict(kernel=name, loop=loop, ksteps_per_iter=1.0)

    __getitem__ = get


def window_checks():
    import estimates
    import window_estimate as we
    # copy_channels<uint4>: one STG.128 per iteration = one 16-byte unit; 32,000 units = 1000 warp
    # iterations of 27 instructions.
    loop = dict(instrs=27, outer_instrs=27, outside=174, counts={"LDG": 1, "STG": 1}, widths={"STG": {"128": 1}})
    wi, sms = we.warp_instr("copy_channels<uint4>", 16, dict(items=32000), dict(loop=loop), "80")
    check(wi == 27000 and sms is None, f"window: copy_channels 1000 warp iterations x 27 (got {wi})")
    # merge_gather: a warp per output row, 8 sub-grids each counted as the row loop (251).
    loop = dict(instrs=43, outer_instrs=251, outside=119, counts={"STG": 16}, widths={"STG": {"128": 16}})
    check(we.warp_instr("merge_gather<__half, uint4>", 2, dict(items=2 * 8 * 48, rows=2), dict(loop=loop), "80")[0]
          == 2 * 8 * 251, "window: merge_gather 8 x the row loop per row")
    # splitk_reduce: 4 loads per splits iteration, 9 splits -> outer once + 2 more inner iterations.
    loop = dict(instrs=20, outer_instrs=239, outside=119, counts={"LDG": 4}, widths={"LDG": {"32": 4}})
    check(we.warp_instr("splitk_reduce<float>", 4, dict(items=320, splits=9), dict(loop=loop), "80")[0]
          == 10 * (239 + 2 * 20), "window: splitk_reduce outer + extra split iterations")
    # The launch list at f=48 96^3, half: instance norms = 26 instnorm_act ops, 33 channel
    # blocks of 256 (the 768-channel bottleneck resblock: 2 ops x 3 blocks, decoder5's three
    # 384-channel ops x 2 blocks). Statistics: the 7 unsplit 3x3x3 convs with an even cin
    # (encoder1's conv2, encoder2, decoder2, decoder1) from their tiles (stats_merge_tiles);
    # a read of x for the 6 shortcuts (7 channel blocks: decoder5's has 2) and, one launch
    # each, the 13 other 3x3x3 convs (split K, or encoder1's conv1 with cin 1); float32 also
    # takes encoder1's conv1 from its tiles. window_gather_ln: 2 blocks per stage, stage 0 in
    # 2 chunks of 254 of its 343 windows (32 MiB / (343 tokens x 4 x 48 ch x 2 B)), the others
    # in one.
    estimates.F, estimates.GEMM = 2, "gemm_wmma"
    t = estimates.forward(48, 96, 1, 14)
    launches = {k: sum(e["launches"] for e in v) for k, v in t.work.items()}
    check(launches["instnorm_apply"] == 33 and launches["instnorm_partial"] == 20 and launches["stats_merge_tiles"] == 7,
          f"window: 33 instnorm_apply, 20 instnorm_partial, 7 stats_merge_tiles launches in half (got {launches})")
    check(launches["window_gather_ln"] == 10, f"window: 10 window_gather_ln launches (got {launches['window_gather_ln']})")
    estimates.F, estimates.GEMM = 4, "gemm_tiled"
    t = estimates.forward(48, 96, 1, 14)
    check(sum(e["launches"] for e in t.work["window_gather_ln"]) == 14, "window: float32 stage 0 in 3 chunks, stage 1 in 2")
    check(sum(e["launches"] for e in t.work["stats_merge_tiles"]) == 8, "window: float32 8 stats_merge_tiles launches")
    # stats_merge_tiles: 2 tiles per loop iteration (4 LDG); 256 parts x 48 channels = 256 blocks
    # of 4 warps, 27 tiles each -> the loop 14 times, plus the code outside it once.
    loop = dict(instrs=30, outside=50, counts={"LDG": 4}, widths={"LDG": {"32": 4}})
    check(we.warp_instr("stats_merge_tiles", None, dict(parts=256, channels=48, tiles_per_part=27), dict(loop=loop),
                        "90")[0] == 256 * 4 * (50 + 14 * 30), "window: stats_merge_tiles per warp outside + tiles loop")
    # The statistics epilogue: the code outside the loops beyond the StorePartial tile's.
    rows = {"conv_wmma<48, 16, ConvStoreStats<__half> >": dict(loop=dict(outside=900)),
            "conv_wmma<48, 16, StorePartial>": dict(loop=dict(outside=700))}
    check(sc.stats_epilogue(rows, "conv_wmma<48, 16, ConvStoreStats<__half> >") == 200
          and sc.stats_epilogue(rows, "conv_wmma<48, 16, StorePartial>") == 0, "census: statistics epilogue 200 instructions")
    # The per-kernel total on synthetic rows: max(issue, math, DRAM) + launches x 3 us, summed;
    # only GEMM and conv rows carry a math bound.
    for arch in ("80", "90"):
        rows = we.window(AnyRows(), arch, True)
        ok = all(abs(r["est_ms"] - (max(r["issue_ms"], r["math_ms"], r["dram_ms"]) + r["launches"] * 3e-3)) < 1e-12
                 for r in rows)
        ok &= all(r["math_ms"] == 0 for r in rows if not r["kernel"].startswith("gemm_"))
        ok &= all(abs(r["dram_ms"] - r["bytes"] / we.DRAM[arch][1] * 1e3) < 1e-12 for r in rows)
        check(ok and len(rows) == 21, f"window sm_{arch}: every row max(issue, math, DRAM) + 3 us per launch, 21 rows")
        cp = next(r for r in rows if r["kernel"] == "copy_channels")
        # 4 copies of 48^3 x 48, 48^3 x 96... : units = sum(V cout) x 2 B / 16 B, 10 instr per 1 unit
        units = sum(e["items"] for e in estimates.forward(48, 96, 1, 14).work["copy_channels"])
        check(abs(cp["warp_instr"] - units / 32 * 10) < 1e-6, "window: copy_channels warp instructions from items")


def probe_checks(nvcc, cuobjdump):
    src = os.path.join(ROOT, "tests", "tools", "census_probe.cu")
    with tempfile.TemporaryDirectory() as tmp:
        for arch in ("80", "90"):
            cubin = os.path.join(tmp, f"probe_{arch}.cubin")
            r = subprocess.run([nvcc, "-cubin", f"-arch=sm_{arch}", "-Xptxas=-v", "-o", cubin, src],
                               capture_output=True, text=True)
            check(r.returncode == 0, f"nvcc sm_{arch} compiles the probe" + (f": {r.stderr[-300:]}" if r.returncode else ""))
            if r.returncode:
                continue
            rows = sc.collect(arch, [cubin], r.stderr, cuobjdump)
            f = rows["probe_ffma"]
            c = f["loop"]
            check(c["counts"]["FFMA"] == 8, f"sm_{arch} probe_ffma: 8 FFMA per iteration (got {c['counts']['FFMA']})")
            check(c["widths"].get("LDS") == {"128": 1}, f"sm_{arch} probe_ffma: one LDS.128 (got {c['widths']})")
            check(c["counts"]["STS"] == 0 and c["counts"]["HMMA"] == 0 and c["inner_loops"] == 0,
                  f"sm_{arch} probe_ffma: the FFMA loop is the main loop, not the store loop")
            check(c["counts"]["CTRL"] == 1, f"sm_{arch} probe_ffma: one branch per iteration")
            check(f["regs"] > 0 and f["spill"] == 0 and f["smem"] == 1024,
                  f"sm_{arch} probe_ffma: ptxas resources (regs {f['regs']}, spill {f['spill']}, smem {f['smem']})")
            h = rows["probe_hmma"]["loop"]
            check(h["counts"]["HMMA"] == 2 and h["hmma_macs"] == 4096,
                  f"sm_{arch} probe_hmma: one m16n16k16 = 2 HMMA.16816 = 4096 MACs (got {h['counts']['HMMA']})")
            check(h["counts"]["LDG"] == 8 and h["counts"]["FFMA"] == 0, f"sm_{arch} probe_hmma: 8 LDG, no FFMA")
            # The command line on the same object.
            out = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "sass", "sass_census.py"), "--cubin", cubin,
                                  "--arch", arch, "--json", "-"], capture_output=True, text=True)
            js = json.loads(out.stdout) if out.returncode == 0 else {}
            got = js.get("kernels", {}).get(arch, {}).get("probe_ffma", {}).get("loop", {}).get("counts", {})
            check(got.get("FFMA") == 8, f"sm_{arch} command line --json: FFMA 8" + (f" ({out.stderr[-200:]})" if out.returncode else ""))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvcc", default="")
    a = ap.parse_args()
    nvcc = a.nvcc if a.nvcc and os.access(a.nvcc, os.X_OK) else sc.tool("nvcc")
    cuobjdump = sc.tool("cuobjdump")
    pure_checks()
    window_checks()
    if not nvcc or not cuobjdump:
        print(f"SKIP: the probe needs nvcc ({nvcc}) and cuobjdump ({cuobjdump}); "
              "pip install nvidia-cuda-cuobjdump or install a CUDA toolkit")
        sys.exit(1 if FAILS else 77)
    probe_checks(nvcc, cuobjdump)
    print(f"{len(FAILS)} failure(s)")
    sys.exit(1 if FAILS else 0)


if __name__ == "__main__":
    main()
