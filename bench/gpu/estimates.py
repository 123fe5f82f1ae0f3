#!/usr/bin/env python3
"""Per-kernel FLOPs, DRAM bytes and roofline time estimates of the CUDA backend's forward
pass (runtime/forward.c order), for bench/results/cuda_estimates.md.

    python3 bench/gpu/estimates.py [--f 48] [--cube 96] [--ci 1] [--co 14] [--half]

ESTIMATES, nothing measured: time = max(FLOPs / peak, bytes / peak DRAM bandwidth),
the roofline lower bound from the vendors' peak figures. The peak is FP32 (non-tensor)
for every kernel in float32 mode; with --half (float16 storage: 2 bytes per element)
the GEMMs run on tensor cores (gemm_wmma: dense FP16 with FP32 accumulation) and the
other kernels stay FP32 SIMT arithmetic. Bytes are compulsory DRAM
traffic: every tensor a kernel touches is read or written once (weights once per
launch), i.e. perfect on-chip reuse inside a kernel (for the implicit-GEMM conv the 27
taps re-read the input through L1/L2, counted once). FLOPs count a multiply-add as 2.
"""
import argparse
import os
import sys
from collections import OrderedDict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "sass"))
from gemm_shapes import gemm_splits  # noqa: E402

PEAKS = {  # FP32 non-tensor FLOP/s, FP16 tensor (dense, FP32 accumulate) FLOP/s, DRAM bytes/s
    "H100 SXM": (66.9e12, 989.4e12, 3.35e12),
    "T4": (8.14e12, 65e12, 320e9),
}

F = 4  # bytes per stored element (weights and activations): 4, or 2 with --half
GEMM = "gemm_tiled"  # the GEMM kernel: gemm_wmma with --half


class Tally:
    """Per kernel label: (FLOPs, bytes, launches); for the GEMMs also the list of their
    shapes (M, N, K, batch), which bench/sass/sass_census.py turns into k-steps."""

    def __init__(self):
        self.k = OrderedDict()
        self.gemms = OrderedDict()
        self.work = OrderedDict()

    def add(self, kernel, flops, nbytes, launches=1, gemm=None, work=None):
        """work: for bench/gpu/window_estimate.py, the launch as the code issues it: dict with
        'launches' (the chunked launch count) and the kernel's loop sizes (see there)."""
        f, b, n = self.k.get(kernel, (0, 0, 0))
        self.k[kernel] = (f + flops, b + nbytes, n + launches)
        if gemm:
            self.gemms.setdefault(kernel, []).append(gemm)
        if work:
            self.work.setdefault(kernel, []).append(dict(work, bytes=nbytes))


# Launch-shaping constants of kernels/cuda/cuda_internal.cuh.
CHUNK_BYTES = 32 << 20  # SWIN_CUDA_CHUNK_BYTES_DEFAULT: swin attention / MLP / patch merge chunks
RED_CH, RED_PARTS = 256, 512  # SWIN_CUDA_RED_CH, SWIN_CUDA_RED_PARTS: instnorm channel blocks, parts
STATS_TILE = 128  # SWIN_CUDA_STATS_TILE: rows of a conv tile, the unit of the instnorm parts
STAGE_FLOATS = 2 << 20  # SWIN_CUDA_STAGE_FLOATS: pack / unpack chunk


def cdiv(a, b):
    return -(-a // b)


def chunk_rows(n, per_row_bytes, floor=64):
    """Rows per chunk (swin_mlp.cu mlp_rows, patch_merge.cu merge_rows)."""
    return min(max(CHUNK_BYTES // per_row_bytes, floor), n)


def resblock(t, V, cin, cout, dest, wbytes=True):
    if cin != cout:
        t.add(f"{GEMM}<RowsA,StoreRows> conv 1x1", 2 * V * cin * cout, F * (V * cin + V * cout + cin * cout),
              gemm=(V, cout, cin, 1), work=dict(launches=1))
        instnorm(t, V, cout, residual=False)
    # conv1 and conv2 keep their instance norm's statistics (conv3d's stats, forward_cnn.c)
    t.add(f"{GEMM}<Im2colA,ConvStoreStats> conv 3x3x3", 2 * 27 * V * cin * cout,
          F * (V * cin + V * cout + 27 * cin * cout), gemm=(V, cout, 27 * cin, 1), work=dict(launches=1))
    instnorm(t, V, cout, residual=False, conv_cin=cin)
    t.add(f"{GEMM}<Im2colA,ConvStoreStats> conv 3x3x3", 2 * 27 * V * cout * cout,
          F * (V * cout + V * cout + 27 * cout * cout), gemm=(V, cout, 27 * cout, 1), work=dict(launches=1))
    instnorm(t, V, cout, residual=True, conv_cin=cout)
    if dest:  # copy_channels<uint4> (pack.cu swin_cuda_copy): 16-byte units
        t.add("copy_channels", 0, F * 2 * V * cout, work=dict(launches=1, items=V * cout * F // 16))


def instnorm(t, V, c, residual, conv_cin=None):
    """instnorm_act.cu: per channel block of RED_CH a finalize and an apply, after the
    statistics per voxel part (swin_cuda_stats_parts): a partial (one read of x), per
    channel block or, after a 3x3x3 conv with stats (conv_cin = its cin), for all channels
    at once; or, after a conv_wmma / conv_ffma launch without a K split (not float16 with
    an odd cin), its tiles' statistics (written by its epilogue) merged by
    stats_merge_tiles (conv_stats.cu)."""
    blocks = cdiv(c, RED_CH)
    tiles = cdiv(V, STATS_TILE)
    per_part = cdiv(tiles, RED_PARTS // 2)
    parts = cdiv(V, per_part * STATS_TILE)
    conv_k = 27 * conv_cin if conv_cin else None
    if conv_k and gemm_splits(V, c, conv_k) == 1 and (F == 4 or conv_cin % 2 == 0):
        t.add("stats_merge_tiles", 0, 4 * 2 * tiles * c * 2 + 8 * 2 * parts * c,
              work=dict(launches=1, parts=parts, channels=c, tiles_per_part=per_part))
    else:
        t.add("instnorm_partial", 3 * V * c, F * V * c,
              work=dict(launches=1 if conv_k else blocks, items=V * c))
    t.add("instnorm_finalize", 0, 8 * 2 * parts * c,
          work=dict(launches=blocks, parts=parts, channels=min(c, RED_CH), blocks=blocks))
    t.add("instnorm_apply", 3 * V * c, F * (2 + (1 if residual else 0)) * V * c,
          work=dict(launches=blocks, items=V * c))


def layernorm(t, V, c, launches=1):
    t.add("layernorm_rows", 6 * V * c, F * 2 * V * c, work=dict(launches=launches, rows=V, c=c))


def swin_block(t, L, C, heads, win=7):
    w = min(L, win)
    P = -(-L // w) * w
    n = w ** 3
    T = P ** 3  # tokens incl. padding
    nwin = T // n
    V = L ** 3
    # swin_attention.cu: chunks of wc windows, 4 launches each
    chunks = cdiv(nwin, min(max(CHUNK_BYTES // (n * 4 * C * F), 1), nwin, 65535))
    t.add("window_gather_ln", 6 * T * C, F * (V * C + T * C), work=dict(launches=chunks, rows=T, c=C))
    t.add(f"{GEMM}<RowsA,StoreRows> qkv", 2 * T * C * 3 * C, F * (T * C + T * 3 * C + 3 * C * C),
          gemm=(T, 3 * C, C, 1), work=dict(launches=chunks))
    t.add("window_attention_fused", 4 * n * n * C * nwin, F * (T * 3 * C + T * C),
          work=dict(launches=chunks, windows=nwin, n=n, heads=heads, hd=C // heads))
    t.add(f"{GEMM}<RowsA,WindowScatterAdd> proj", 2 * T * C * C, F * (T * C + 2 * V * C + C * C),
          gemm=(T, C, C, 1), work=dict(launches=chunks))
    # swin_mlp.cu: chunks of R rows, 3 launches each
    mchunks = cdiv(V, chunk_rows(V, 5 * C * F))
    layernorm(t, V, C, launches=mchunks)  # LN2 into the MLP workspace
    t.add(f"{GEMM}<RowsA,StoreRows> fc1+GELU", 2 * V * C * 4 * C, F * (V * C + V * 4 * C + 4 * C * C),
          gemm=(V, 4 * C, C, 1), work=dict(launches=mchunks))
    t.add(f"{GEMM}<RowsA,AddRows> fc2", 2 * V * 4 * C * C, F * (V * 4 * C + 2 * V * C + 4 * C * C),
          gemm=(V, C, 4 * C, 1), work=dict(launches=mchunks))


def forward(f, cube, ci, co, depth=2, heads=(3, 6, 12, 24)):
    t = Tally()
    V0 = cube ** 3
    t.add("stage_to_volume (pack)", 0, (4 + F) * V0 * ci,
          work=dict(launches=cdiv(V0, STAGE_FLOATS // ci), items=V0 * ci))
    V1 = (cube // 2) ** 3
    t.add(f"{GEMM}<Im2colA,StoreRows> patch embed k2s2", 2 * 8 * V1 * ci * f, F * (V0 * ci + V1 * f),
          gemm=(V1, f, 8 * ci, 1), work=dict(launches=1))
    for s in range(4):
        C, L = f << s, cube // 2 >> s
        V = L ** 3
        layernorm(t, V, C)  # hidden state (or straight into decoder5's skip at s == 3)
        if s < 3:
            resblock(t, V, C, C, dest=True)
        for _ in range(depth):
            swin_block(t, L, C, heads[s])
        Vo = V // 8
        # patch_merge.cu: chunks of R output voxels, 3 launches each
        mchunks = cdiv(Vo, chunk_rows(Vo, 8 * C * F))
        t.add("merge_gather", 0, F * 2 * V * C, work=dict(launches=mchunks, items=V * C, rows=Vo))
        layernorm(t, Vo, 8 * C, launches=mchunks)
        t.add(f"{GEMM}<RowsA,StoreRows> merge reduction", 2 * Vo * 8 * C * 2 * C, F * (Vo * 8 * C + Vo * 2 * C + 16 * C * C),
              gemm=(Vo, 2 * C, 8 * C, 1), work=dict(launches=mchunks))
    L4, C4 = cube // 32, 16 * f
    layernorm(t, L4 ** 3, C4)
    resblock(t, L4 ** 3, C4, C4, dest=False)
    cin, L = C4, L4
    for k in range(4, 0, -1):
        cout = cin // 2
        Vi, Vo = L ** 3, (2 * L) ** 3
        t.add(f"{GEMM}<RowsA,TapScatter> conv_transpose2", 2 * Vi * cin * cout * 8, F * (Vi * cin + Vo * cout + 8 * cin * cout),
              gemm=(Vi, cout, cin, 8), work=dict(launches=1))
        resblock(t, Vo, 2 * cout, cout, dest=False)
        cin, L = cout, 2 * L
    Vi = (cube // 2) ** 3
    t.add(f"{GEMM}<RowsA,TapScatter> conv_transpose2", 2 * Vi * f * f * 8, F * (Vi * f + V0 * f + 8 * f * f),
          gemm=(Vi, f, f, 8), work=dict(launches=1))
    resblock(t, V0, ci, f, dest=True)  # encoder1
    resblock(t, V0, 2 * f, f, dest=False)  # decoder1
    t.add(f"{GEMM}<RowsA,StoreRows> conv 1x1", 2 * V0 * f * co, F * (V0 * f + V0 * co + f * co),
          gemm=(V0, co, f, 1), work=dict(launches=1))
    t.add("volume_to_stage (unpack)", 0, (4 + F) * V0 * co,
          work=dict(launches=cdiv(V0, STAGE_FLOATS // co), items=V0 * co))
    return t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--f", type=int, default=48)
    ap.add_argument("--cube", type=int, default=96)
    ap.add_argument("--ci", type=int, default=1)
    ap.add_argument("--co", type=int, default=14)
    ap.add_argument("--half", action="store_true", help="float16 storage, GEMMs on tensor cores")
    a = ap.parse_args()
    global F, GEMM
    if a.half:
        F, GEMM = 2, "gemm_wmma"
    t = forward(a.f, a.cube, a.ci, a.co)
    names = list(PEAKS)
    mode = "half mode (float16 storage, tensor-core GEMMs)" if a.half else "float32"
    print(f"f={a.f}, {a.cube}^3, Ci={a.ci}, Co={a.co}, {mode}. ESTIMATES (roofline bound from peak figures), "
          "not measurements.\n")
    print("| kernel | launches | GFLOP | DRAM MB | FLOP/byte | " + " | ".join(f"{n} est. ms" for n in names) + " |")
    print("|---|---:|---:|---:|---:|" + "---:|" * len(names))
    tot = [0.0, 0.0] + [0.0] * len(names)
    for k, (fl, by, n) in t.k.items():
        tensor = a.half and k.startswith("gemm_wmma")
        times = [max(fl / (p[1] if tensor else p[0]), by / p[2]) * 1e3 for p in PEAKS.values()]
        tot[0] += fl
        tot[1] += by
        for i, x in enumerate(times):
            tot[2 + i] += x
        ai = f"{fl / by:.1f}" if by else "-"
        print(f"| {k} | {n} | {fl / 1e9:.2f} | {by / 1e6:.1f} | {ai} | " + " | ".join(f"{x:.3f}" for x in times) + " |")
    print(f"| **total** | | **{tot[0] / 1e9:.1f}** | **{tot[1] / 1e6:.0f}** | | " + " | ".join(f"**{x:.1f}**" for x in tot[2:]) + " |")


if __name__ == "__main__":
    main()
