"""Float32 error of 3D Winograd F(2,3) and F(4,3) against the direct float32 convolution.

One 3x3x3 stride-1 pad-1 convolution on a random L^3 grid (inputs N(0, 1), weights
He-scaled), computed in float64 (the reference), directly in float32, and as Winograd with
every transform stage rounded to float32 (weights transformed in float64, rounded once).
Prints max|err| / max|ref| and the RMS ratio per method. F(4,3) twice: with the points
0, +-1, 2, -1/2 of kernels/cpu/winograd/winograd4_tmpl.h, and with the usual 0, +-1, +-2
(Lavin & Gray), whose constants 4, 5, 8 and 1/24 double the error.

--bf16: the choices of precision BF16 instead, all against the float64 conv with the
unrounded weights: the direct conv with weights and input rounded to bfloat16 (what a
bfloat16 GEMM computes), with the weights alone rounded (what Winograd and the per-tap GEMMs
run on bfloat16 weights: widened, the input float32), and F(2,3) and F(4,3) with their
transformed input V and weights U rounded to bfloat16 (what a vdpbf16ps point GEMM would
need), products summed exactly.

    python bench/ops/winograd_error.py [--cin 48 192] [--cout 16] [--size 12]
    python bench/ops/winograd_error.py --f6       (F(6,3) on 0, +-1, +-2, +-1/2 as well)
    python bench/ops/winograd_error.py --model-shapes [--feature-size 48]   (every 3x3x3
        stride-1 conv of Swin UNETR at its channels; grids of 24 (12 for the 768-channel
        ones), the first 16 output channels)
"""
import argparse

import numpy as np


def cook_toom(m, points):
    """(B^T, G, A^T) of F(m, 3) on the finite points given and infinity: A^T and G from the
    points (Vandermonde rows, G scaled by 1 / prod(a_j - a_l)), B^T solved so that the
    algorithm is exact for every input (least squares; the residual is checked)."""
    n = m + 2
    at, g = np.zeros((m, n)), np.zeros((n, 3))
    for j, a in enumerate(points):
        at[:, j] = [a ** i for i in range(m)]
        g[j] = [a ** k / np.prod([a - b for b in points if b != a]) for k in range(3)]
    at[m - 1, n - 1] = g[n - 1, 2] = 1.0
    rows, rhs = [], []
    for i in range(m):
        for k in range(3):
            for col in range(n):
                r = np.zeros((n, n))
                r[:, col] = at[i] * g[:, k]
                rows.append(r.ravel())
                rhs.append(1.0 if col == i + k else 0.0)
    bt = np.linalg.lstsq(np.array(rows), np.array(rhs), rcond=None)[0]
    assert np.abs(np.array(rows) @ bt - rhs).max() < 1e-9
    return bt.reshape(n, n), g, at


def matrices(m):
    """(B^T, G, A^T) of F(m, 3): m = 2 and m = 4 as kernels/cpu/winograd*.c; m = -4: F(4, 3)
    with Lavin & Gray's points 0, +-1, +-2; m = 6: F(6, 3) on 0, +-1, +-2, +-1/2 (--f6; the
    kernel, kernels/cpu/winograd/winograd_f6.h, negates the first rows of B^T and G)."""
    if m == 6:
        return cook_toom(6, [0, 1, -1, 2, -2, .5, -.5])
    if m == 2:
        bt = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]]
        g = [[1, 0, 0], [.5, .5, .5], [.5, -.5, .5], [0, 0, 1]]
        at = [[1, 1, 1, 0], [0, 1, -1, -1]]
    elif m == 4:
        bt = [[1, 1.5, -2, -1.5, 1, 0], [0, -1, -2.5, -.5, 1, 0], [0, 1, .5, -2.5, 1, 0],
              [0, -.5, -1, .5, 1, 0], [0, 2, -1, -2, 1, 0], [0, 1, 1.5, -2, -1.5, 1]]
        g = [[1, 0, 0], [-1 / 3, -1 / 3, -1 / 3], [1 / 3, -1 / 3, 1 / 3], [1 / 15, 2 / 15, 4 / 15],
             [-16 / 15, 8 / 15, -4 / 15], [0, 0, 1]]
        at = [[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -.5, 0], [0, 1, 1, 4, .25, 0], [0, 1, -1, 8, -.125, 1]]
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
    m = abs(m)
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


def bf16(x):
    """x rounded to the nearest bfloat16 (ties to even), as float32."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    u = ((u + 0x7fff + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(np.float32)


def winograd_bf16(xp, w, m, L):
    """Winograd with V and U rounded to bfloat16 and the point products summed in float64."""
    bt, g, at = matrices(m)
    a, n = m + 2, L // m
    u = bf16(np.einsum('ai,bj,ck,ijkxo->abcxo', g, g, g, w)).astype(np.float64)
    idx = np.arange(n)[:, None] * m + np.arange(a)[None, :]
    p = xp[idx][:, :, idx][:, :, :, :, idx].transpose(0, 2, 4, 1, 3, 5, 6).astype(np.float32)
    v = np.einsum('ai,tuvijkx->tuvajkx', bt, p).astype(np.float32)
    v = np.einsum('bj,tuvajkx->tuvabkx', bt, v).astype(np.float32)
    v = bf16(np.einsum('ck,tuvabkx->tuvabcx', bt, v)).astype(np.float64)
    mm = np.einsum('tuvabcx,abcxo->tuvabco', v, u).astype(np.float32)
    y = np.einsum('ia,tuvabco->tuvibco', at, mm)
    y = np.einsum('jb,tuvibco->tuvijco', at, y)
    y = np.einsum('kc,tuvijco->tuvijko', at, y)
    return y.transpose(0, 3, 1, 4, 2, 5, 6).reshape(L, L, L, -1)


def measure_bf16(rng, L, cin, cout, label):
    xp = np.zeros((L + 2, L + 2, L + 2, cin))
    xp[1:-1, 1:-1, 1:-1] = rng.standard_normal((L, L, L, cin))
    w = rng.standard_normal((3, 3, 3, cin, cout)) * np.sqrt(2 / (27 * cin))
    ref = direct(xp, w, L)
    wb = bf16(w).astype(np.float64)
    runs = {'direct, input and weights bf16': direct(bf16(xp).astype(np.float64), wb, L),
            'direct, weights bf16 (widened)': direct(xp, wb, L),
            'F(2,3), V and U bf16': winograd_bf16(xp, w, 2, L),
            'F(4,3), V and U bf16': winograd_bf16(xp, w, 4, L)}
    for k, y in runs.items():
        e = np.abs(y.astype(np.float64) - ref)
        print(f'| {label} | {k} | {e.max() / np.abs(ref).max():.2e} | {np.sqrt((e ** 2).mean() / (ref ** 2).mean()):.2e} |',
              flush=True)


def measure(rng, L, cin, cout, label, f6=False):
    xp = np.zeros((L + 2, L + 2, L + 2, cin))
    xp[1:-1, 1:-1, 1:-1] = rng.standard_normal((L, L, L, cin))
    w = rng.standard_normal((3, 3, 3, cin, cout)) * np.sqrt(2 / (27 * cin))
    ref = direct(xp, w, L)
    runs = {'direct': direct(xp.astype(np.float32), w, L)}
    for m, name in ((2, 'F(2,3)'), (4, 'F(4,3)'), (-4, 'F(4,3) +-2')) + (((6, 'F(6,3)'),) if f6 and L % 6 == 0 else ()):
        runs[name] = winograd(xp.astype(np.float32), w, m, L, np.float32)
    for k, y in runs.items():
        e = np.abs(y.astype(np.float64) - ref)
        print(f'| {label} | {k} | {e.max() / np.abs(ref).max():.2e} | {np.sqrt((e ** 2).mean() / (ref ** 2).mean()):.2e} |',
              flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--cin', type=int, nargs='+', default=[48, 192])
    ap.add_argument('--cout', type=int, default=16)
    ap.add_argument('--size', type=int, default=12, help='grid L (a multiple of 4)')
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--model-shapes', action='store_true')
    ap.add_argument('--feature-size', type=int, default=48)
    ap.add_argument('--bf16', action='store_true', help='the bfloat16 choices instead of float32 (above)')
    ap.add_argument('--f6', action='store_true', help='float32: F(6,3) too (grids a multiple of 12)')
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    run = measure_bf16 if a.bf16 else lambda *args: measure(*args, f6=a.f6)
    print('| conv (cin -> cout, grid) | method | max|err| / max|ref| | rms(err) / rms(ref) |')
    print('|---|---|---|---|')
    if a.model_shapes:
        f = a.feature_size
        shapes = [(1, f, '96^3 encoder1 conv1'), (f, f, '96^3 encoder1/decoder1 conv2, 48^3 encoder2/decoder2'),
                  (2 * f, f, '96^3 decoder1 conv1, 48^3 decoder2 conv1'), (2 * f, 2 * f, '24^3 encoder3/decoder3 conv2'),
                  (4 * f, 2 * f, '24^3 decoder3 conv1'), (4 * f, 4 * f, '12^3 encoder4/decoder4 conv2'),
                  (8 * f, 4 * f, '12^3 decoder4 conv1'), (16 * f, 8 * f, '6^3 decoder5 conv1'),
                  (8 * f, 8 * f, '6^3 decoder5 conv2')]
        for cin, cout, where in shapes:
            run(rng, 12 if cin >= 8 * f else 24, cin, min(cout, a.cout), f'{cin} -> {cout} ({where})')
        return
    for cin in a.cin:
        run(rng, a.size, cin, a.cout, f'{cin} -> {a.cout}, {a.size}^3')


if __name__ == '__main__':
    main()
