#!/usr/bin/env python3
"""Export a MONAI SwinUNETR (3D) to ONNX, with randomised or user weights.

Writes OUT (model.onnx; plus OUT.data for the dynamo exporter) and model.json next to it
with the exact configuration used. See tools/README.md for the test-data matrix.

Notes (MONAI 1.6.1 / torch 2.15, checked against docs/forward.md):
  * InstanceNorm over a single voxel: torch refuses instance norm when the map has one spatial
    element ("Expected more than 1 spatial element when training"), even in eval mode, because
    instance norm without running stats always uses batch statistics.  At 32^3 encoder10 runs
    on a 1x1x1 map.  The result is well defined (x - mean = 0, output = 0, or beta with affine),
    so we disable the check:  torch.nn.functional._verify_spatial_size = lambda size: None.
    ONNX InstanceNormalization in ONNX Runtime gives the same 0 / beta.
  * --merge-order pre15 replaces PatchMerging.forward on each merge instance with the MONAI
    0.9.0-1.4.x order (duplicated offsets, spec section 3.6).  MONAI 1.6.1 'merging' still uses
    the 1.5 order.
  * MONAI 1.6.1 adds use_hyena/hyena_* and use_flash_attention (SDPA) arguments; we leave them
    at their defaults (off), so the graph is the classic window attention.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
import types


def die(msg: str, code: int = 2) -> None:
    print(f"export_swin_unetr: error: {msg}", file=sys.stderr)
    sys.exit(code)


def int_list(s: str, n: int | None, what: str) -> list[int]:
    try:
        v = [int(t) for t in s.replace(" ", ",").split(",") if t != ""]
    except ValueError:
        die(f"{what}: expected comma-separated integers, got '{s}'")
    if n is not None and len(v) != n:
        die(f"{what}: expected {n} integers, got {len(v)} ('{s}')")
    return v


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--feature-size", type=int, default=12)
    p.add_argument("--in-channels", type=int, default=1)
    p.add_argument("--out-channels", type=int, default=14)
    p.add_argument("--depths", default="2,2,2,2", help="4 ints, e.g. 2,2,2,2")
    p.add_argument("--heads", default="3,6,12,24", help="4 ints, e.g. 3,6,12,24")
    p.add_argument("--window", default="7", help="int or 3 ints (D,H,W)")
    p.add_argument("--size", type=int, nargs=3, default=[32, 32, 32], metavar=("D", "H", "W"),
                   help="export cube; each a multiple of 32")
    p.add_argument("--use-v2", action="store_true")
    p.add_argument("--no-normalize", action="store_true")
    p.add_argument("--downsample", choices=["merging", "mergingv2"], default="merging")
    p.add_argument("--merge-order", choices=["v15", "pre15"], default="v15",
                   help="patch-merging order for --downsample merging (pre15 = MONAI < 1.5)")
    p.add_argument("--no-qkv-bias", action="store_true")
    p.add_argument("--patch-norm", action="store_true")
    p.add_argument("--instnorm-affine", action="store_true", help='norm_name=("instance", {"affine": True})')
    p.add_argument("--batch-norm", action="store_true",
                   help="norm_name='batch' (the exporters fold each inference-mode batch norm into its conv)")
    p.add_argument("--mlp-ratio", type=float, default=4.0, help="MLP hidden width / channels (MONAI default 4.0)")
    p.add_argument("--flash-attention", action="store_true",
                   help="use_flash_attention=True (MONAI >= 1.6: attention through scaled_dot_product_attention)")
    p.add_argument("--use-checkpoint", action="store_true", help="use_checkpoint=True (no effect on the forward pass)")
    p.add_argument("--exporter", choices=["torchscript", "dynamo"], default="dynamo",
                   help="dynamo (default: what torch.onnx.export does today) or torchscript (dynamo=False)")
    p.add_argument("--opset", type=int, default=None,
                   help="ONNX opset; default: the exporter's own default (torch 2.15: 20 for dynamo)")
    p.add_argument("--dynamic", action="store_true", help="dynamic spatial axes (D,H,W)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--checkpoint", default=None, help="state_dict file (.pt/.pth); MONAI bundle dicts ok")
    p.add_argument("--check", action="store_true",
                   help="after export, compare torch eager vs ONNX Runtime at the export cube "
                        "(writes export_check.json next to the model)")
    p.add_argument("--out", default="model.onnx")
    a = p.parse_args(argv)

    a.depths = int_list(a.depths, 4, "--depths")
    a.heads = int_list(a.heads, 4, "--heads")
    w = int_list(a.window, None, "--window")
    if len(w) == 1:
        w = w * 3
    if len(w) != 3:
        die(f"--window: expected 1 or 3 integers, got {len(w)}")
    a.window = w
    f = a.feature_size
    if f <= 0 or f % 12 != 0:
        die(f"--feature-size {f}: must be a positive multiple of 12 (MONAI requirement)")
    if a.in_channels <= 0 or a.out_channels <= 0:
        die("--in-channels/--out-channels must be positive")
    for s in a.size:
        if s <= 0 or s % 32 != 0:
            die(f"--size {a.size[0]} {a.size[1]} {a.size[2]}: each dimension must be a positive multiple of 32")
    if any(d <= 0 for d in a.depths):
        die(f"--depths {a.depths}: each depth must be >= 1")
    for s, h in enumerate(a.heads):
        c = f * 2 ** s
        if h <= 0 or c % h != 0:
            die(f"--heads: stage {s} has {c} channels, not divisible by {h} heads")
    if any(x <= 0 for x in a.window):
        die(f"--window {a.window}: must be positive")
    if a.batch_norm and a.instnorm_affine:
        die("--batch-norm and --instnorm-affine exclude each other")
    if a.mlp_ratio <= 0:
        die(f"--mlp-ratio {a.mlp_ratio}: must be positive")
    if a.merge_order == "pre15" and a.downsample != "merging":
        die("--merge-order pre15 only applies to --downsample merging")
    return a


# ----------------------------------------------------------------------------------------
# model construction
# ----------------------------------------------------------------------------------------

def _disable_instnorm_spatial_check():
    import torch.nn.functional as F
    # See module docstring: IN over a single voxel is well defined (output 0 / beta).
    F._verify_spatial_size = lambda size: None


def _pre15_forward(self, x):
    """MONAI 0.9.0-1.4.x PatchMerging order: offsets (D,H,W) = (0,0,0),(1,0,0),(0,1,0),(0,0,1),
    (1,0,1),(0,1,0),(0,0,1),(1,1,1) -- positions 2/5 and 3/6 duplicated, (1,1,0),(0,1,1) unused."""
    import torch
    import torch.nn.functional as F
    b, d, h, w, c = x.size()
    if (h % 2 == 1) or (w % 2 == 1) or (d % 2 == 1):
        x = F.pad(x, (0, 0, 0, w % 2, 0, h % 2, 0, d % 2))
    x0 = x[:, 0::2, 0::2, 0::2, :]
    x1 = x[:, 1::2, 0::2, 0::2, :]
    x2 = x[:, 0::2, 1::2, 0::2, :]
    x3 = x[:, 0::2, 0::2, 1::2, :]
    x4 = x[:, 1::2, 0::2, 1::2, :]
    x5 = x[:, 0::2, 1::2, 0::2, :]
    x6 = x[:, 0::2, 0::2, 1::2, :]
    x7 = x[:, 1::2, 1::2, 1::2, :]
    x = torch.cat([x0, x1, x2, x3, x4, x5, x6, x7], -1)
    x = self.norm(x)
    x = self.reduction(x)
    return x


def apply_pre15(model) -> int:
    from monai.networks.nets.swin_unetr import PatchMerging, PatchMergingV2
    n = 0
    for m in model.modules():
        if isinstance(m, PatchMerging):
            m.forward = types.MethodType(_pre15_forward, m)
            n += 1
        elif isinstance(m, PatchMergingV2):
            raise RuntimeError("pre15 order requested but the model uses PatchMergingV2")
    if n != 4:
        raise RuntimeError(f"pre15: expected 4 PatchMerging modules, patched {n}")
    return n


def build_model(cfg: dict):
    """cfg: dict with the model.json keys. Returns an eval-mode MONAI SwinUNETR (merge order applied)."""
    _disable_instnorm_spatial_check()
    from monai.networks.nets import SwinUNETR
    kw = dict(
        in_channels=cfg["in_channels"],
        out_channels=cfg["out_channels"],
        depths=tuple(cfg["depths"]),
        num_heads=tuple(cfg["heads"]),
        window_size=tuple(cfg["window"]),
        qkv_bias=cfg["qkv_bias"],
        feature_size=cfg["feature_size"],
        normalize=cfg["normalize"],
        patch_norm=cfg["patch_norm"],
        downsample=cfg["downsample"],
        use_v2=cfg["use_v2"],
        norm_name="batch" if cfg.get("norm") == "batch" else
        ("instance", {"affine": True}) if cfg["instnorm_affine"] else "instance",
        mlp_ratio=cfg.get("mlp_ratio", 4.0),
        use_checkpoint=cfg.get("use_checkpoint", False),
        spatial_dims=3,
    )
    if cfg.get("use_flash_attention"):
        kw["use_flash_attention"] = True
    m = SwinUNETR(**kw)
    if cfg["merge_order"] == "pre15":
        apply_pre15(m)
    m.eval()
    return m


def randomize(model, seed: int) -> None:
    """Randomise every parameter with a fixed seed, keeping activations O(1).

    weights of Conv/Linear: N(0,1)/sqrt(fan_in); ConvTranspose: fan_in = C_in (k=s=2, no overlap);
    biases: N(0, 0.2^2); LN/IN affine: weight 1 + N(0, 0.2^2), bias N(0, 0.2^2);
    relative_position_bias_table: N(0, 0.75^2) so the bias visibly matters; batch norms' running
    mean N(0, 0.2^2) and running variance U(0.5, 2).
    """
    import torch
    import torch.nn as nn
    g = torch.Generator().manual_seed(seed)

    def normal(t, std, mean=0.0):
        with torch.no_grad():
            t.copy_(torch.randn(t.shape, generator=g, dtype=torch.float32) * std + mean)

    done = set()
    for mname, mod in model.named_modules():
        for pname, p in mod.named_parameters(recurse=False):
            full = f"{mname}.{pname}" if mname else pname
            if isinstance(mod, (nn.ConvTranspose3d, nn.ConvTranspose2d)) and pname == "weight":
                normal(p, 1.0 / (p.shape[0]) ** 0.5)
            elif isinstance(mod, (nn.Conv3d, nn.Conv2d, nn.Linear)) and pname == "weight":
                normal(p, 1.0 / (p[0].numel()) ** 0.5)
            elif pname == "relative_position_bias_table":
                normal(p, 0.75)
            elif isinstance(mod, (nn.LayerNorm, nn.InstanceNorm3d, nn.InstanceNorm2d, nn.GroupNorm,
                                  nn.BatchNorm3d)) and pname == "weight":
                normal(p, 0.2, 1.0)
            elif pname == "bias":
                normal(p, 0.2)
            else:
                raise RuntimeError(f"randomize: no rule for parameter {full} {tuple(p.shape)} in {type(mod).__name__}")
            done.add(full)
    for mod in model.modules():   # inference-mode batch norms use their running statistics
        if isinstance(mod, nn.BatchNorm3d):
            normal(mod.running_mean, 0.2)
            with torch.no_grad():
                mod.running_var.copy_(torch.rand(mod.running_var.shape, generator=g) * 1.5 + 0.5)
    names = {n for n, _ in model.named_parameters()}
    if names != done:
        raise RuntimeError(f"randomize: missed {sorted(names - done)}")


def load_checkpoint(model, path: str) -> None:
    import torch
    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except Exception:
        obj = torch.load(path, map_location="cpu", weights_only=False)
    sd = obj
    for key in ("state_dict", "model", "network", "net"):
        if isinstance(sd, dict) and key in sd and isinstance(sd[key], dict):
            sd = sd[key]
            break
    if not isinstance(sd, dict):
        die(f"--checkpoint {path}: not a state_dict (got {type(sd).__name__})")
    sd = {k: v for k, v in sd.items() if hasattr(v, "shape")}
    for prefix in ("module.", "model.", "net."):
        if sd and all(k.startswith(prefix) for k in sd):
            sd = {k[len(prefix):]: v for k, v in sd.items()}
    own = model.state_dict()
    missing = [k for k in own if k not in sd]
    unexpected = [k for k in sd if k not in own]
    # relative_position_index is a recomputable buffer; tolerate its absence
    missing = [k for k in missing if not k.endswith("relative_position_index")]
    if missing or unexpected:
        die(f"--checkpoint {path}: keys do not match the configured model: "
            f"{len(missing)} missing (e.g. {missing[:3]}), {len(unexpected)} unexpected (e.g. {unexpected[:3]})")
    bad = [k for k in sd if tuple(sd[k].shape) != tuple(own[k].shape)]
    if bad:
        k = bad[0]
        die(f"--checkpoint {path}: shape mismatch for {k}: checkpoint {tuple(sd[k].shape)} vs model {tuple(own[k].shape)}")
    model.load_state_dict(sd, strict=False)


def weights_digest(model) -> str:
    h = hashlib.sha256()
    for k, v in sorted(model.state_dict().items()):
        h.update(k.encode())
        h.update(v.detach().contiguous().cpu().numpy().tobytes())
    return h.hexdigest()


def config_from_args(a) -> dict:
    return {
        "feature_size": a.feature_size,
        "in_channels": a.in_channels,
        "out_channels": a.out_channels,
        "depths": a.depths,
        "heads": a.heads,
        "window": a.window,
        "use_v2": bool(a.use_v2),
        "normalize": not a.no_normalize,
        "downsample": a.downsample,
        "merge_order": "v2" if a.downsample == "mergingv2" else a.merge_order,
        "qkv_bias": not a.no_qkv_bias,
        "patch_norm": bool(a.patch_norm),
        "instnorm_affine": bool(a.instnorm_affine),
        "norm": "batch" if a.batch_norm else "instance",
        "mlp_ratio": a.mlp_ratio,
        "use_flash_attention": bool(a.flash_attention),
        "use_checkpoint": bool(a.use_checkpoint),
        "exporter": a.exporter,
        "opset": a.opset,
        "cube": list(a.size),
        "dynamic": bool(a.dynamic),
    }


def make_model(a):
    """Build + initialise the model described by parsed args. Returns (model, cfg)."""
    cfg = config_from_args(a)
    model = build_model(cfg)
    if a.checkpoint:
        if not os.path.isfile(a.checkpoint):
            die(f"--checkpoint {a.checkpoint}: no such file")
        load_checkpoint(model, a.checkpoint)
    else:
        randomize(model, a.seed)
    cfg["params"] = int(sum(p.numel() for p in model.parameters()))
    return model, cfg


# ----------------------------------------------------------------------------------------
# export
# ----------------------------------------------------------------------------------------

def explicit_instnorm_affine(model) -> int:
    """Give every affine-less InstanceNorm explicit weight=1 / bias=0 (numerically identical).

    The TorchScript exporter's instance_norm symbolic needs the channel count when no weight is
    given; with non-cubic cubes ONNX shape inference loses it after the window-padding Pad (whose
    pads are computed in the graph) and export fails with "ONNX export of instance_norm for unknown
    channel size" (MONAI issue #5125).  With explicit scale/bias it does not need the shape.
    The ONNX graph is the same: InstanceNormalization with scale/B from Constant nodes."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    n = 0
    for m in model.modules():
        if isinstance(m, (nn.InstanceNorm3d, nn.InstanceNorm2d)) and m.weight is None:
            if m.track_running_stats:
                continue
            m.register_buffer("_one", torch.ones(m.num_features), persistent=False)
            m.register_buffer("_zero", torch.zeros(m.num_features), persistent=False)

            def fwd(self, x):
                return F.instance_norm(x, None, None, self._one, self._zero, True, 0.0, self.eps)
            m.forward = types.MethodType(fwd, m)
            n += 1
    return n


def export(model, cfg: dict, out: str) -> str:
    """Export; returns a note on workarounds applied ('' if none)."""
    import torch
    if cfg["exporter"] == "torchscript":
        try:
            _export(model, cfg, out)
            return ""
        except Exception as e:
            if "instance_norm for unknown channel size" not in str(e):
                raise
        n = explicit_instnorm_affine(model)
        _export(model, cfg, out)
        return (f"torchscript instance_norm 'unknown channel size' error: retried with explicit "
                f"weight=1/bias=0 on {n} InstanceNorm modules")
    _export(model, cfg, out)
    return ""


def _export(model, cfg: dict, out: str) -> None:
    import torch
    D, H, W = cfg["cube"]
    x = torch.zeros(1, cfg["in_channels"], D, H, W)
    if os.path.exists(out + ".data"):
        os.remove(out + ".data")
    # only what the user chose is passed: everything else is torch.onnx.export's own default
    kwargs = {"input_names": ["input"], "output_names": ["logits"]}
    if cfg["opset"] is not None:
        kwargs["opset_version"] = cfg["opset"]
    with torch.no_grad():
        if cfg["exporter"] == "torchscript":
            if cfg["dynamic"]:
                kwargs["dynamic_axes"] = {"input": {2: "D", 3: "H", 4: "W"}, "logits": {2: "D", 3: "H", 4: "W"}}
            torch.onnx.export(model, (x,), out, dynamo=False, **kwargs)
        else:
            if cfg["dynamic"]:
                from torch.export import Dim
                kwargs["dynamic_shapes"] = {"x_in": {2: 32 * Dim("d", min=1, max=64),
                                                     3: 32 * Dim("h", min=1, max=64),
                                                     4: 32 * Dim("w", min=1, max=64)}}
            torch.onnx.export(model, (x,), out, dynamo=True, **kwargs)
    import onnx
    m = onnx.load(out, load_external_data=False)
    cfg["opset"] = next(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))


def ort_check(model, cfg: dict, out: str, seed: int = 1) -> dict:
    import numpy as np
    import torch
    import onnxruntime as ort
    D, H, W = cfg["cube"]
    rng = np.random.default_rng(seed)
    x = rng.random((1, cfg["in_channels"], D, H, W), dtype=np.float32)
    with torch.no_grad():
        ref = model(torch.from_numpy(x)).numpy()
    so = ort.SessionOptions()
    sess = ort.InferenceSession(out, so, providers=["CPUExecutionProvider"])
    got = sess.run(None, {sess.get_inputs()[0].name: x})[0]
    d = float(np.abs(got - ref).max())
    return {"input": f"uniform[0,1) numpy default_rng({seed})", "max_abs_diff": d,
            "max_abs_torch": float(np.abs(ref).max()), "shape": list(ref.shape)}


def main(argv=None) -> int:
    a = parse_args(argv)
    out = a.out
    odir = os.path.dirname(os.path.abspath(out))
    os.makedirs(odir, exist_ok=True)
    t0 = time.time()
    import torch
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    try:
        model, cfg = make_model(a)
    except (TypeError, ValueError) as e:
        die(f"MONAI rejected the configuration: {e}")
    t1 = time.time()
    try:
        note = export(model, cfg, out)
    except Exception as e:  # one clear line; full traceback with SWINRUN_DEBUG=1
        if os.environ.get("SWINRUN_DEBUG"):
            raise
        lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
        detail = next((ln for ln in lines if "Constraints violated" in ln or "Not all values" in ln),
                      lines[0] if lines else "")
        if cfg["exporter"] == "dynamo" and cfg["dynamic"]:
            die("the dynamo exporter cannot make SwinUNETR's spatial axes dynamic: torch.export specialises "
                "the input size because MONAI branches in Python on window/padding sizes "
                f"(get_window_size '<=', 'if pad > 0', np.ceil); use --exporter torchscript --dynamic "
                f"(its graph has the sizes baked in anyway) [{type(e).__name__}: {detail[:300]}]", 1)
        die(f"export failed: {type(e).__name__}: {detail[:500]} (SWINRUN_DEBUG=1 for the traceback)", 1)
    t2 = time.time()
    if note:
        print(f"export_swin_unetr: note: {note}", file=sys.stderr)
    import onnx
    try:
        onnx.checker.check_model(out if not os.path.exists(out + ".data") else out, full_check=False)
        checker = "ok"
    except Exception as e:  # report, do not fail: ORT may still run it
        checker = f"onnx.checker: {str(e).splitlines()[0]}"
    with open(os.path.join(odir, "model.json"), "w") as fh:
        json.dump(cfg, fh, indent=1)
        fh.write("\n")
    info = {"weights_sha256": weights_digest(model), "export_seconds": round(t2 - t1, 2),
            "onnx_checker": checker, "torch": torch.__version__, "workaround": note}
    import monai
    info["monai"] = monai.__version__
    if a.check:
        info["torch_vs_ort"] = ort_check(model, cfg, out)
    with open(os.path.join(odir, "export_check.json"), "w") as fh:
        json.dump(info, fh, indent=1)
        fh.write("\n")
    size = os.path.getsize(out) + (os.path.getsize(out + ".data") if os.path.exists(out + ".data") else 0)
    msg = (f"exported {out} ({size / 1e6:.1f} MB, {cfg['params']} params, {cfg['exporter']} opset {cfg['opset']}, "
           f"cube {cfg['cube']}) build {t1 - t0:.1f}s export {t2 - t1:.1f}s; checker {checker}")
    if a.check:
        c = info["torch_vs_ort"]
        msg += f"; torch vs ORT max|d| {c['max_abs_diff']:.3g} (max|ref| {c['max_abs_torch']:.3g})"
    print(msg)
    return 0


if __name__ == "__main__":
    sys.exit(main())
