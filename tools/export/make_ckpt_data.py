#!/usr/bin/env python3
"""Checkpoint test matrix: MONAI SwinUNETRs with random weights saved as users save them.

    make_ckpt_data.py OUTDIR [CASE ...]
    make_ckpt_data.py --list      the cases built when none is named

Writes OUTDIR/CASE/{model.pt|model.safetensors, input.npy, logits.npy, model.json} (plain and batch
also model.onnx, the same weights exported by tools/export/export_swin_unetr.py: the ONNX twin): logits.npy
is MONAI's own forward (torch eager, float32) on input.npy with the weights exactly as the file
holds them (float16/bfloat16 ones widened), the reference `swinrun forward` is held to
(tools/export/check_logits.py). f=12 at 32^3, fixed seeds; a case is skipped when its folder is complete.

Cases: plain (torch.save(model.state_dict())), wrapped ({"epoch", "best_acc" as a numpy scalar,
"state_dict" with DataParallel's "module." prefix, "optimizer": an Adam state}), lightning (a Lightning .ckpt: "state_dict" with the LightningModule's
"model." prefix, hyper_parameters holding an argparse.Namespace, callbacks), strided (Linear
weights saved as transposed views, biases as offset views into one shared storage), fp16,
bf16, safetensors, zip64 (the plain file re-zipped with ZIP64 records and extra fields, as torch.save
writes files over 4 GiB), window (non-cubic window 7x5x6, mlp_ratio 2, no qkv bias, patch norm), batch
(norm_name='batch'), v2 (use_v2, affine instance norm); f48 (feature size 48, 14 classes at 96^3, with
its ONNX twin) only when named.
"""
from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_swin_unetr as ex  # noqa: E402

BASE = dict(feature_size=12, in_channels=1, out_channels=3, depths=[2, 2, 2, 2], heads=[3, 6, 12, 24], window=[7, 7, 7],
            use_v2=False, normalize=True, downsample="merging", merge_order="v15", qkv_bias=True, patch_norm=False,
            instnorm_affine=False, norm="instance", mlp_ratio=4.0)
CASES = {
    "plain": {}, "wrapped": {}, "lightning": {}, "strided": {}, "fp16": {}, "bf16": {}, "safetensors": {},
    "window": dict(window=[7, 5, 6], mlp_ratio=2.0, qkv_bias=False, patch_norm=True),
    "batch": dict(norm="batch"), "zip64": {},
    "v2": dict(use_v2=True, instnorm_affine=True),
    # MONAI's BTCV configuration at 96^3 (tools/export/make_test_data.sh --slow; not in the default set)
    "f48": dict(feature_size=48, out_channels=14),
}
SLOW = ("f48",)
CUBE = {"f48": 96}

TWINS = ("plain", "batch", "f48")


def save_case(name: str, out: str) -> None:
    import numpy as np
    import torch
    cfg = dict(BASE, **CASES[name])
    model = ex.build_model(cfg)
    ex.randomize(model, seed=sum(map(ord, name)))
    sd = model.state_dict()
    fname = "model.safetensors" if name == "safetensors" else "model.pt"
    path = os.path.join(out, fname)
    if name in ("fp16", "bf16"):
        dt = torch.float16 if name == "fp16" else torch.bfloat16
        sd = {k: v.to(dt) if v.is_floating_point() else v for k, v in sd.items()}
        torch.save(sd, path)
        model.load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in sd.items()})
    elif name == "wrapped":
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        torch.save({"epoch": 7, "best_acc": np.float64(0.5), "state_dict": {"module." + k: v for k, v in sd.items()},
                    "optimizer": opt.state_dict()}, path)
    elif name == "lightning":
        import argparse
        torch.save({"epoch": 3, "global_step": 300, "pytorch-lightning_version": "2.5.0",
                    "state_dict": {"model." + k: v for k, v in sd.items()},
                    "hyper_parameters": {"args": argparse.Namespace(lr=1e-4, roi=(96, 96, 96))},
                    "callbacks": {"ModelCheckpoint{'monitor': 'val_dice'}": {"best_model_score": torch.tensor(0.8)}},
                    "optimizer_states": [], "lr_schedulers": []}, path)
    elif name == "strided":
        biases = [k for k, v in sd.items() if k.endswith(".bias")]
        pool = torch.zeros(7 + sum(sd[k].numel() for k in biases))
        off, out_sd = 7, {}
        for k, v in sd.items():
            if k in biases:
                pool[off:off + v.numel()] = v
                out_sd[k] = pool[off:off + v.numel()]
                off += v.numel()
            elif v.dim() == 2 and v.is_floating_point() and "relative_position" not in k:
                out_sd[k] = v.t().contiguous().t()
                assert not out_sd[k].is_contiguous()
            else:
                out_sd[k] = v
        torch.save(out_sd, path)
    elif name == "zip64":
        import zipfile
        tmp = path + ".tmp"
        torch.save(sd, tmp)
        limits = zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT
        zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT = 1 << 10, 1   # every size, offset and count beyond them
        try:
            with zipfile.ZipFile(tmp) as src, zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as dst:
                for info in src.infolist():
                    with dst.open(info.filename, "w", force_zip64=True) as f:
                        f.write(src.read(info))
        finally:
            zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT = limits
        os.remove(tmp)
        with open(path, "r+b") as f:   # the classic end record defers every field to the ZIP64 one
            blob = f.read()
            f.seek(blob.rfind(b"PK\x05\x06") + 8)
            f.write(b"\xff" * 12)
    elif name == "safetensors":
        from safetensors.torch import save_file
        save_file({k: v.contiguous() for k, v in sd.items()}, path)
    else:
        torch.save(sd, path)
    if name in TWINS:
        import subprocess
        n = str(CUBE.get(name, 32))
        subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "export_swin_unetr.py"),
                        "--feature-size", str(cfg["feature_size"]), "--out-channels", str(cfg["out_channels"]), "--size", n, n, n,
                        "--exporter", "torchscript",
                        "--opset", "17", "--checkpoint", path, "--out", os.path.join(out, "model.onnx"),
                        *(["--batch-norm"] if cfg["norm"] == "batch" else [])], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    model.eval()
    n = CUBE.get(name, 32)
    x = np.random.default_rng(1).random((1, 1, n, n, n), dtype=np.float32)
    with torch.no_grad():
        y = model(torch.from_numpy(x)).numpy()
    np.save(os.path.join(out, "input.npy"), x)
    np.save(os.path.join(out, "logits.npy"), y)
    with open(os.path.join(out, "model.json"), "w") as f:
        json.dump(dict(cfg, file=fname), f, indent=1)


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    default = [c for c in CASES if c not in SLOW]
    if argv == ["--list"]:
        print(" ".join(default))
        return 0
    outdir, names = argv[0], argv[1:] or default
    for n in names:
        if n not in CASES:
            print(f"make_ckpt_data: error: unknown case {n} (known: {', '.join(CASES)})", file=sys.stderr)
            return 2
        d = os.path.join(outdir, n)
        if os.path.isfile(os.path.join(d, "logits.npy")):
            continue
        os.makedirs(d, exist_ok=True)
        save_case(n, d)
        print(f"make_ckpt_data: {d}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
