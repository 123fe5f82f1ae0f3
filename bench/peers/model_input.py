"""The model and the window every configuration runs: the ONNX file (given, or exported once into
bench/peers/models/), its cube and channels, and the input (a .npy window, the centre cube of a
NIfTI volume, or a generated CT-like cube)."""
from __future__ import annotations

import os
import subprocess
import sys
import time

from bench_common import HERE, REPO, BadArgs, die, log


def read_input(path: str, cube, seed: int, in_channels: int):
    import numpy as np
    from ort_reference import make_input
    if path is None:
        if cube is None:
            raise BadArgs("no --input and no cube: give --cube D H W (or a model with a static cube)")
        return make_input([1, in_channels, *cube], seed), {"kind": "generated", "seed": seed,
                                                           "generator": "tools/export/ort_reference.py make_input"}
    if not os.path.isfile(path):
        raise BadArgs(f"{path}: no such file")
    low = path.lower()
    if low.endswith(".npy"):
        try:
            x = np.load(path, allow_pickle=False)
        except Exception as e:
            raise BadArgs(f"{path}: not a readable .npy ({' '.join(str(e).split())})")
        if x.ndim == 4:
            x = x[None]
        if x.ndim != 5 or x.shape[0] != 1:
            raise BadArgs(f"{path}: expected shape (1, C, D, H, W), got {tuple(x.shape)}")
        if cube is not None and list(x.shape[2:]) != list(cube):
            raise BadArgs(f"{path}: cube {list(x.shape[2:])} differs from --cube/model cube {list(cube)}")
        return np.ascontiguousarray(x, dtype=np.float32), {"kind": "npy", "path": path}
    if low.endswith(".nii") or low.endswith(".nii.gz"):
        if cube is None:
            raise BadArgs("a NIfTI input needs --cube D H W (or a model with a static cube) for the window")
        import nibabel as nib
        try:
            img = nib.load(path)
            v = np.asarray(img.dataobj, dtype=np.float32)
        except Exception as e:
            raise BadArgs(f"{path}: not a readable NIfTI ({' '.join(str(e).split())})")
        if v.ndim == 4 and v.shape[3] == 1:
            v = v[..., 0]
        if v.ndim != 3:
            raise BadArgs(f"{path}: expected a 3-D volume, got shape {v.shape}")
        lo, hi = float(v.min()), float(v.max())
        if lo < -100.0:  # looks like CT in HU
            v = (np.clip(v, -175.0, 250.0) + 175.0) / 425.0
            scaling = "HU clipped to [-175, 250], scaled to [0, 1]"
        else:
            v = (v - lo) / (hi - lo) if hi > lo else np.zeros_like(v)
            scaling = "min-max scaled to [0, 1]"
        # NIfTI arrays are (x, y, z); the window is (D, H, W) = (z, y, x) as MONAI's loaders
        # would give after a transpose; take the centre cube, padding with 0 where smaller.
        v = np.ascontiguousarray(v.transpose(2, 1, 0))
        out = np.zeros(cube, dtype=np.float32)
        src, dst = [], []
        for k in range(3):
            n, c = v.shape[k], cube[k]
            if n >= c:
                s = (n - c) // 2
                src.append(slice(s, s + c)); dst.append(slice(0, c))
            else:
                s = (c - n) // 2
                src.append(slice(0, n)); dst.append(slice(s, s + n))
        out[tuple(dst)] = v[tuple(src)]
        x = np.repeat(out[None, None], in_channels, axis=1)
        return x, {"kind": "nifti", "path": path, "volume_shape_dhw": list(v.shape), "scaling": scaling,
                   "window": "centre cube"}
    raise BadArgs(f"{path}: --input takes .npy, .nii or .nii.gz")


def bundle_twin(bundle: str, cube) -> str:
    """The ONNX twin of a MONAI bundle at cube (default: its roi_size), exported once into
    bench/models/bundle_<name>_<cube>_<digest>/ (the digest of its weights and inference.json)."""
    import hashlib
    import json
    paths = [os.path.join(bundle, "models", "model.pt"), os.path.join(bundle, "configs", "inference.json")]
    if not all(os.path.isfile(p) for p in paths):
        raise BadArgs(f"{bundle}: not a MONAI bundle with models/model.pt and configs/inference.json")
    if cube is None:
        cfg = json.load(open(paths[1]))
        roi = cfg.get("inferer", {}).get("roi_size")
        if isinstance(roi, str) and roi.startswith("@"):
            roi = cfg.get(roi[1:])
        if not (isinstance(roi, list) and len(roi) == 3 and all(isinstance(v, int) for v in roi)):
            raise BadArgs(f"{bundle}: give --cube D H W (the bundle's roi_size is not 3 integers)")
        cube = roi
    h = hashlib.sha256()
    for p in paths:
        with open(p, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    name = os.path.basename(os.path.normpath(bundle))
    d = os.path.join(REPO, "bench", "models", f"bundle_{name}_{'x'.join(map(str, cube))}_{h.hexdigest()[:12]}")
    out = os.path.join(d, "model.onnx")
    if not os.path.isfile(out):
        os.makedirs(d, exist_ok=True)
        log(f"exporting the ONNX twin of {bundle} at {cube} -> {out}")
        subprocess.run([sys.executable, os.path.join(REPO, "tools", "export", "bundle_to_onnx.py"), bundle, out,
                        "--size", *map(str, cube)], check=True, stdout=subprocess.DEVNULL)
    return out


def model_cube_and_channels(model: str):
    """(cube or None when dynamic, in_channels) from the ONNX graph's input."""
    import onnx
    try:
        m = onnx.load(model, load_external_data=False)
    except Exception as e:
        raise BadArgs(f"{model}: not a readable ONNX file ({' '.join(str(e).split())})")
    inits = {i.name for i in m.graph.initializer}
    inputs = [i for i in m.graph.input if i.name not in inits]
    if not inputs:
        raise BadArgs(f"{model}: the graph has no input")
    dims = inputs[0].type.tensor_type.shape.dim
    if len(dims) != 5:
        raise BadArgs(f"{model}: expected a 5-D input (N, C, D, H, W), got {len(dims)}-D")
    vals = [d.dim_value if d.HasField("dim_value") else None for d in dims]
    cube = vals[2:] if all(v for v in vals[2:]) else None
    feature = None  # best effort: the patch-embedding conv weight is (f, Ci, 2, 2, 2)
    for i in m.graph.initializer:
        if "patch_embed" in i.name and len(i.dims) == 5:
            feature = int(i.dims[0])
            break
    return cube, vals[1] or 1, feature


def export_model(feature_size: int, cube, exporter: str) -> str:
    name = f"f{feature_size}_{'x'.join(str(c) for c in cube)}" if len(set(cube)) > 1 else f"f{feature_size}_{cube[0]}"
    if exporter != "torchscript":
        name += f"_{exporter}"
    out_dir = os.path.join(REPO, "bench", "models", name)
    path = os.path.join(out_dir, "model.onnx")
    if os.path.isfile(path):
        log(f"using the exported model {os.path.relpath(path, REPO)} (delete it to export again)")
        return path
    os.makedirs(out_dir, exist_ok=True)
    cmd = [sys.executable, os.path.join(REPO, "tools", "export", "export_swin_unetr.py"), "--feature-size", str(feature_size),
           "--size", *[str(c) for c in cube], "--exporter", exporter, "--out", path]
    log(f"exporting: {' '.join(cmd)}")
    t0 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        tail = " | ".join(r.stderr.strip().splitlines()[-3:])
        die(f"export failed (exit {r.returncode}): {tail}", 1)
    log(f"exported in {time.time() - t0:.0f} s")
    return path

