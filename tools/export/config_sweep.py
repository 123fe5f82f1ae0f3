#!/usr/bin/env python3
"""Random Swin UNETR configurations against the references: what the test matrix does not name.

    config_sweep.py onnx SWINRUN WORKDIR --seeds FIRST LAST [--tools]
    config_sweep.py ckpt SWINRUN WORKDIR --seeds FIRST LAST

onnx: per seed a MONAI SwinUNETR (feature size 12/24/36, depths 1-2, heads 1-12 with a head dim of
at least 4, a cubic window of 3/4/5/7 or a non-cubic one of 2-7 per axis, 1/2/4 input and
1/2/3/5/14 output channels, a cube of 32 or 64 per axis, mlp_ratio 1-4, and at random use_v2,
normalize=False, mergingv2 or MONAI < 1.5's merge order, no qkv bias, patch_norm, affine instance
norm or batch norm, use_flash_attention), exported by export_swin_unetr.py (TorchScript at opset
14-20, about a third of those with do_constant_folding=False, or dynamo at 18-23); --tools: then rewritten by one of transform_onnx.py's tools
(onnx-simplifier, onnxslim, ONNX Runtime's basic or extended level, float16 weights) or left.
`swinrun forward` on a random input at the export cube is held to check_logits.py's float32
criterion against ONNX Runtime's run of the same file.
ckpt: the same kinds of model (group norm too, with norm parameters and batch-norm statistics
away from their initial values) saved as a state dict, a wrapped checkpoint with a `module.`
prefix, safetensors, a TorchScript trace or a whole pickled module; `swinrun forward` (with the
options the weights cannot tell) against torch eager, the same criterion.

A seed whose file ONNX Runtime itself cannot run is skipped. Prints one line per seed; exit 1
when any seed disagrees or is refused."""
import argparse
import os
import random
import subprocess
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_logits  # noqa: E402

# export_swin_unetr.py's model and TorchScript export with do_constant_folding=False (argv: its arguments)
NOFOLD_EXPORT = '''
import sys, torch
sys.path.insert(0, %r)
import export_swin_unetr as ex
a = ex.parse_args(sys.argv[1:])
model, cfg = ex.make_model(a)
x = torch.zeros(1, cfg["in_channels"], *cfg["cube"])
def export():
    with torch.no_grad():
        torch.onnx.export(model, (x,), a.out, dynamo=False, do_constant_folding=False, opset_version=a.opset,
                          input_names=["input"], output_names=["logits"])
try:
    export()
except Exception as e:
    if "instance_norm for unknown channel size" not in str(e):
        raise
    ex.explicit_instnorm_affine(model)
    export()
''' % HERE


def model_kwargs(r):
    """A random configuration: export_swin_unetr.py arguments and the matching SwinUNETR kwargs."""
    f = r.choice([12, 12, 24, 36])
    depths = [r.choice([1, 2]) for _ in range(4)]
    heads = [r.choice([h for h in (1, 2, 3, 4, 6, 8, 12) if (f << i) % h == 0 and (f << i) // h >= 4]) for i in range(4)]
    win = [r.choice([3, 4, 5, 7])] * 3 if r.random() < 0.5 else [r.choice([2, 3, 4, 5, 6, 7]) for _ in range(3)]
    kw = dict(feature_size=f, depths=depths, num_heads=heads, window_size=win, in_channels=r.choice([1, 1, 2, 4]),
              out_channels=r.choice([1, 2, 3, 5, 14]), mlp_ratio=r.choice([4.0, 2.0, 1.0, 3.0]),
              use_v2=r.random() < 0.3, normalize=r.random() >= 0.2, qkv_bias=r.random() >= 0.2,
              patch_norm=r.random() < 0.3)
    if r.random() < 0.3:
        kw["downsample"] = "mergingv2"
    return kw, [r.choice([32, 64]) for _ in range(3)]


def onnx_seed(seed, swinrun, work, tools, py):
    r = random.Random(seed)
    kw, size = model_kwargs(r)
    args = ["--feature-size", str(kw["feature_size"]), "--depths", ",".join(map(str, kw["depths"])),
            "--heads", ",".join(map(str, kw["num_heads"])), "--window", ",".join(map(str, kw["window_size"])),
            "--in-channels", str(kw["in_channels"]), "--out-channels", str(kw["out_channels"]),
            "--size", *map(str, size), "--mlp-ratio", str(kw["mlp_ratio"]), "--seed", str(seed)]
    args += ["--use-v2"] * kw["use_v2"] + ["--no-normalize"] * (not kw["normalize"])
    args += ["--no-qkv-bias"] * (not kw["qkv_bias"]) + ["--patch-norm"] * kw["patch_norm"]
    if "downsample" in kw:
        args += ["--downsample", "mergingv2"]
    elif r.random() < 0.2:
        args += ["--merge-order", "pre15"]
    k = r.random()
    args += ["--instnorm-affine"] if k < 0.2 else ["--batch-norm"] if k < 0.35 else []
    args += ["--flash-attention"] * (r.random() < 0.2)
    if r.random() < 0.5:
        args += ["--exporter", "torchscript", "--opset", str(r.choice([14, 16, 17, 18, 20]))]
    else:
        args += ["--exporter", "dynamo", "--opset", str(r.choice([18, 20, 21, 23]))]
    tool = r.choice(["none", "none", "onnxsim", "onnxslim", "ort-basic", "ort-extended", "fp16-weights"]) if tools else "none"
    # a TorchScript export without constant folding (a draw of its own, so the draws above stay
    # what they were for every seed)
    nofold = "torchscript" in args and random.Random(seed * 7919 + 1).random() < 0.3
    d = os.path.join(work, f"onnx_{seed}")
    model = os.path.join(d, "model.onnx")
    os.makedirs(d, exist_ok=True)
    if nofold:
        e = subprocess.run([py, "-c", NOFOLD_EXPORT, *args, "--out", model], capture_output=True, text=True)
        args = args + ["[do_constant_folding=False]"]
    else:
        e = subprocess.run([py, os.path.join(HERE, "export_swin_unetr.py"), *args, "--out", model], capture_output=True,
                           text=True)
    if e.returncode:
        return "skip", f"export failed: {e.stderr.strip()[-200:]}", args
    if tool != "none":
        out = os.path.join(d, tool, "model.onnx")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        e = subprocess.run([py, os.path.join(HERE, "transform_onnx.py"), tool, model, out], capture_output=True, text=True)
        if e.returncode:
            return "skip", f"{tool} failed: {e.stderr.strip()[-200:]}", args
        model, args = out, args + [f"[{tool}]"]
    x = np.random.default_rng(seed).standard_normal((1, kw["in_channels"], *size)).astype(np.float32)
    import onnxruntime as ort
    try:
        sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        ref = sess.run(None, {sess.get_inputs()[0].name: x})[0].astype(np.float32)
    except Exception as ex:  # the rewrite is broken for ONNX Runtime too
        return "skip", f"ONNX Runtime cannot run it: {str(ex)[:160]}", args
    return run_swinrun(swinrun, model, x, ref, d, []) + (args,)


def ckpt_seed(seed, swinrun, work):
    import torch
    import torch.nn.functional as F
    from monai.networks.nets import SwinUNETR
    F._verify_spatial_size = lambda size: None   # instance norm over a 1-voxel map at 32^3 (export_swin_unetr.py)
    r = random.Random(seed)
    kw, size = model_kwargs(r)
    opts = ["--no-normalize"] * (not kw["normalize"]) + ["--merge-order", "v2"] * ("downsample" in kw)
    k = r.random()
    if k < 0.2:
        g = r.choice([g for g in (2, 3, 4, 6, 12) if kw["feature_size"] % g == 0])
        kw["norm_name"] = ("group", {"num_groups": g})
        opts += ["--norm-groups", str(g)]
    elif k < 0.35:
        kw["norm_name"] = "batch"
    elif k < 0.5:
        kw["norm_name"] = ("instance", {"affine": True})
    torch.manual_seed(seed)
    model = SwinUNETR(**kw).eval()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (torch.nn.BatchNorm3d, torch.nn.GroupNorm, torch.nn.InstanceNorm3d)) and m.weight is not None:
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
            if isinstance(m, torch.nn.BatchNorm3d):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
    x = torch.randn(1, kw["in_channels"], *size, generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        ref = model(x).numpy()
    d = os.path.join(work, f"ckpt_{seed}")
    os.makedirs(d, exist_ok=True)
    form = r.choice(["state dict", "wrapped", "safetensors", "trace", "whole module"])
    sd = model.state_dict()
    if form == "state dict":
        path = os.path.join(d, "model.pt")
        torch.save(sd, path)
    elif form == "wrapped":
        path = os.path.join(d, "model.ckpt")
        torch.save({"epoch": 3, "state_dict": {"module." + k: v for k, v in sd.items()}}, path)
    elif form == "safetensors":
        from safetensors.torch import save_file
        path = os.path.join(d, "model.safetensors")
        save_file({k: v.contiguous() for k, v in sd.items()}, path)
    elif form == "trace":
        path = os.path.join(d, "model_ts.pt")
        with torch.no_grad():
            torch.jit.save(torch.jit.trace(model, x), path)
    else:
        path = os.path.join(d, "model_whole.pt")
        torch.save(model, path)
    desc = [form, str({k: v for k, v in kw.items()}), f"cube {size}"] + opts
    return run_swinrun(swinrun, path, x.numpy(), ref, d, opts) + (desc,)


def run_swinrun(swinrun, model, x, ref, d, opts):
    inp, out = os.path.join(d, "input.npy"), os.path.join(d, "out.npy")
    np.save(inp, x)
    if os.path.exists(out):
        os.remove(out)
    p = subprocess.run([swinrun, "forward", model, inp, out, *opts], capture_output=True, text=True)
    if p.returncode:
        err = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}"
        return "FAIL", err
    ok, line = check_logits.compare(np.load(out), ref)
    return ("ok" if ok else "FAIL"), line


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=["onnx", "ckpt"])
    ap.add_argument("swinrun")
    ap.add_argument("work")
    ap.add_argument("--seeds", type=int, nargs=2, required=True, metavar=("FIRST", "LAST"))
    ap.add_argument("--tools", action="store_true", help="onnx: rewrite each export with a random tool (or none)")
    a = ap.parse_args()
    warnings.filterwarnings("ignore")
    os.makedirs(a.work, exist_ok=True)
    counts = {}
    for seed in range(a.seeds[0], a.seeds[1] + 1):
        if a.mode == "onnx":
            status, line, desc = onnx_seed(seed, a.swinrun, a.work, a.tools, sys.executable)
        else:
            status, line, desc = ckpt_seed(seed, a.swinrun, a.work)
        counts[status] = counts.get(status, 0) + 1
        print(f"{a.mode} seed {seed}: {status}: {line} | {' '.join(desc)}", flush=True)
    print("config_sweep:", ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 1 if counts.get("FAIL") else 0


if __name__ == "__main__":
    sys.exit(main())
