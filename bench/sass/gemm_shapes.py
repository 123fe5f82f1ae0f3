"""The launch arithmetic of kernels/cuda/gemm.cuh in Python, for bench/sass/sass_census.py:
column tile (gemm_col_tile), split-K factor (gemm_splits, used by conv3d.cu only), and
the blocks and k-steps of one launch. Keep in step with gemm.cuh."""

BK = 16


def blocks(n, b):
    return -(-n // b)


def col_tile(N):
    """gemm_col_tile: 48 when 48-column tiles cover N with fewer wasted columns than 64."""
    return 48 if 48 * blocks(N, 48) < 64 * blocks(N, 64) else 64


def conv_col_tile(N):
    """conv_col_tile (conv_igemm.cuh): 96 unless 48-column tiles waste fewer columns."""
    return 48 if 48 * blocks(N, 48) < 96 * blocks(N, 96) else 96


def gemm_splits(M, N, K):
    """gemm_splits: ~256 blocks when the M x N tiles alone are fewer, each split >= 512 of K."""
    tiles = blocks(M, 128) * blocks(N, col_tile(N))
    s = (256 + tiles - 1) // tiles
    s = min(s, K // 512)
    return s if s > 1 else 1


def splits_for(label, M, N, K):
    """Split-K of an estimates.py GEMM label: the convolutions (conv3d.cu) split, the rest not."""
    return gemm_splits(M, N, K) if (" conv " in f" {label.split('> ', 1)[1]} " or "patch embed" in label) else 1


def blocks_and_ksteps(M, N, K, batch, splits, bm, bn):
    """(blocks, k-steps per block averaged over the splits) of one launch."""
    k_split = -(-K // splits)
    steps = sum(blocks(max(0, min(k_split, K - s * k_split)), BK) for s in range(splits))
    nblk = blocks(M, bm) * blocks(N, bn) * batch * splits
    return nblk, steps / splits
