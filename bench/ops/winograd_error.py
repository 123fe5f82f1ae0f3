"""Float32 error of 3D Winograd F(2,3) and F(4,3) against the direct float32 convolution.

One 3x3x3 stride-1 pad-1 convolution on a random L^3 grid (inputs N(0, 1), weights
He-scaled), computed in float64 (the reference), directly in float32, and as Winograd with
every transform stage rounded to float32 (weights transformed in float64, rounded once, as
kernels/cpu/winograd.c does). Prints max|err| / max|ref| and the RMS ratio per method.
This is why the CPU backend uses F(2x2x2, 3x3x3) only: F(4x4x4, 3x3x3) (216 points, the
transform constants 4, 5, 8 and 1/24) is about 100x less accurate than direct float32.

    python bench/ops/winograd_error.py [--cin 48 192] [--cout 16] [--size 12]
"""
import argparse

import numpy as np


def matrices(m):
    """(B^T, G, A^T) of F(m, 3): Lavin & Gray, points 0, +-1 (and +-2 for m = 4), infinity."""
    if m == 2:
        bt = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]]
        g = [[1, 0, 0], [.5, .5, .5], [.5, -.5, .5], [0, 0, 1]]
        at = [[1, 1, 1, 0], [0, 1, -1, -1]]
    else:
        bt = [[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0],
              [0, -2, -1, 2, 1, 0], [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]]
        g = [[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6],
             [1 / 24, 1 / 12, 1 / 6], [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]]
        at = [[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0], [0, 1, -1, 8, -8, 1]]
    return np.array(bt, float), np.array(g, float), np.array(at, float)


def winograd(xp, w, m, L, dt):
    """xp: zero-padded input (L+2)^3 x cin in dt; w: float64 (3,3,3,cin,cout). L % m == 0."""
    bt, g, at = matrices(m)
    a, n = m + 2, L // m
    u = np.einsum('ai,bj,ck,ijkxo->abcxo', g, g, g, w).astype(dt)
    idx = np.arange(n)[:, None] * m + np.arange(a)[None, :]
    p = xp[idx][:, :, idx][:, :, :, :, idx].transpose(0, 2, 4, 1, 3, 5, 6)  # tiles, then patch
    bt, at = bt.astype(dt), at.astype(dt)
    v = np.einsum('ai,tuvijkx->tuvajkx', bt, p).astype(dt)
    v = np.einsum('bj,tuvajkx->tuvabkx', bt, v).astype(dt)
    v = np.einsum('ck,tuvabkx->tuvabcx', bt, v).astype(dt)
    mm = np.einsum('tuvabcx,abcxo->tuvabco', v, u).astype(dt)
    y = np.einsum('ia,tuvabco->tuvibco', at, mm).astype(dt)
    y = np.einsum('jb,tuvibco->tuvijco', at, y).astype(dt)
    y = np.einsum('kc,tuvijco->tuvijko', at, y).astype(dt)
    return y.transpose(0, 3, 1, 4, 2, 5, 6).reshape(L, L, L, -1)


def direct(xp, w, L):
    out = np.zeros((L, L, L, w.shape[-1]), xp.dtype)
    for t in range(27):
        kz, ky, kx = t // 9, t // 3 % 3, t % 3
        out += np.einsum('zyxc,co->zyxo', xp[kz:kz + L, ky:ky + L, kx:kx + L], w[kz, ky, kx].astype(xp.dtype))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--cin', type=int, nargs='+', default=[48, 192])
    ap.add_argument('--cout', type=int, default=16)
    ap.add_argument('--size', type=int, default=12, help='grid L (a multiple of 4)')
    ap.add_argument('--seed', type=int, default=0)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    L = a.size
    for cin in a.cin:
        xp = np.zeros((L + 2, L + 2, L + 2, cin))
        xp[1:-1, 1:-1, 1:-1] = rng.standard_normal((L, L, L, cin))
        w = rng.standard_normal((3, 3, 3, cin, a.cout)) * np.sqrt(2 / (27 * cin))
        ref = direct(xp, w, L)
        runs = {'direct': direct(xp.astype(np.float32), w, L)}
        for m in (2, 4):
            runs[f'F({m},3)'] = winograd(xp.astype(np.float32), w, m, L, np.float32)
        for k, y in runs.items():
            e = np.abs(y.astype(np.float64) - ref)
            print(f'cin {cin:4d} cout {a.cout} {L}^3  {k:7s} max|err|/max|ref| {e.max() / np.abs(ref).max():.2e}'
                  f'  rms(err)/rms(ref) {np.sqrt((e ** 2).mean() / (ref ** 2).mean()):.2e}')


if __name__ == '__main__':
    main()
