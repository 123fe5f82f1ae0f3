#!/usr/bin/env python3
"""Models built with norm_name=("group", {"num_groups": G}) (torch.nn.GroupNorm in every CNN
block but the v2 ones, which MONAI builds with instance norm), each file run by `swinrun
forward` and held to check_logits.py's criterion against an independent reference:
  ONNX, against ONNX Runtime on the same file and input:
    ts17_g3        TorchScript opset 17: GroupNorm as Reshape, InstanceNormalization over the
                   groups, Reshape, Mul, Add
    dynamo_g3      the dynamo exporter's default opset (the same decomposition)
    dynamo21_g3    dynamo at opset 21: one GroupNormalization node
    ts17_v2_g4     use_v2 (its blocks' instance norms beside the group norms), 4 groups
    ts17_g1        one group: each norm over all channels and voxels
    sim_unit_scale every GroupNorm weight 1, then onnx-simplifier: it drops the Mul by ones
    sim_no_affine  GroupNorm(affine=False), onnx-simplifier: neither Mul nor Add is left
  checkpoints and bundles, against MONAI's forward of the same weights:
    state_dict_g3  torch.save(state_dict) run with --norm-groups 3 (its keys are affine instance
                   norm's); the same file without the option must give other logits
    bundle_g3      a bundle whose network_def says norm_name ["group", {"num_groups": 3}]
  the CUDA backend, emulated (SWINRUN_EMU given; swinrun_emu fails unless the emulated device's
  high-water mark is the planned total): ts17_g3, ts17_v2_g4, ts17_g1 and state_dict_g3 against
  the same references, float32; ts17_g3 in half (--half) at the half criterion (1e-2 of
  max(1, max|ref|), the same label on 99.5 % of voxels);
  refusals, exit 2 in one line: --norm-groups 5 on a 12-channel model; --norm-groups 4 on a
  3-group ONNX file; `swinrun info --json` reports norm_groups 3.
Models are f=12, 32^3, Co 3, initialised as tools/export/export_swin_unetr.py does (seed 0);
the input is uniform [0, 1).

    check_group_norm.py SWINRUN WORKDIR [SWINRUN_EMU]"""
import json
import os
import subprocess
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "export"))
import check_logits  # noqa: E402
import export_swin_unetr as exporter  # noqa: E402
import make_bundle  # noqa: E402

ONNX_CASES = {  # name -> (groups, use_v2, exporter, opset, variant)
    "ts17_g3": (3, False, "torchscript", 17, None),
    "dynamo_g3": (3, False, "dynamo", None, None),
    "dynamo21_g3": (3, False, "dynamo", 21, None),
    "ts17_v2_g4": (4, True, "torchscript", 17, None),
    "ts17_g1": (1, False, "torchscript", 17, None),
    "sim_unit_scale": (3, False, "torchscript", 17, "unit_scale"),
    "sim_no_affine": (3, False, "torchscript", 17, "no_affine"),
}
failed = []


def check(name, ok, detail):
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {detail}")
    if not ok:
        failed.append(name)


def group_model(groups, use_v2=False, variant=None):
    import torch
    from monai.networks.nets import SwinUNETR
    m = SwinUNETR(in_channels=1, out_channels=3, feature_size=12, use_v2=use_v2, spatial_dims=3,
                  norm_name=("group", {"num_groups": groups, "affine": variant != "no_affine"})).eval()
    exporter.randomize(m, seed=0)
    norms = [x for x in m.modules() if isinstance(x, torch.nn.GroupNorm)]
    assert norms
    if variant == "unit_scale":
        for x in norms:
            torch.nn.init.ones_(x.weight)
    return m


def simplified(path):
    """The file at path through onnx-simplifier, in place (as users run it)."""
    import onnx
    import onnxsim
    with open(os.devnull, "w") as null:
        fd = os.dup(2)
        os.dup2(null.fileno(), 2)   # its warnings about the shape-dependent mask
        try:
            model, ok = onnxsim.simplify(onnx.load(path))
        finally:
            os.dup2(fd, 2)
            os.close(fd)
    assert ok
    onnx.save(model, path)


def run(swinrun, args):
    return subprocess.run([swinrun, *args], capture_output=True, text=True)


def agree(swinrun, name, path, inp, ref, work, opts=(), **criterion):
    out = os.path.join(work, f"{name}_swinrun.npy")
    r = run(swinrun, ["forward", path, inp, out, *opts])
    if r.returncode or "running on the CPU backend" in r.stderr:
        check(name, False, f"swinrun exit {r.returncode}: {r.stderr.strip()[-300:]}")
        return None
    ok, line = check_logits.compare(np.load(out), ref, **criterion)
    check(name, ok, line)
    return np.load(out)


def refused(swinrun, name, args, want):
    r = run(swinrun, args)
    err = r.stderr.strip()
    check(name, r.returncode == 2 and want in err and "\n" not in err, f"exit {r.returncode}: {err[-300:]}")


def main() -> int:
    if len(sys.argv) not in (3, 4):
        print(__doc__)
        return 2
    swinrun, work = sys.argv[1:3]
    emu = sys.argv[3] if len(sys.argv) == 4 else None
    os.makedirs(work, exist_ok=True)
    refs = {}
    import onnxruntime as ort
    import torch
    warnings.filterwarnings("ignore")
    x = np.random.default_rng(1).random((1, 1, 32, 32, 32), dtype=np.float32)
    inp = os.path.join(work, "input.npy")
    np.save(inp, x)
    for name, (groups, v2, kind, opset, variant) in ONNX_CASES.items():
        path = os.path.join(work, f"{name}.onnx")
        kw = {"opset_version": opset} if opset else {}
        with torch.no_grad():
            torch.onnx.export(group_model(groups, v2, variant), (torch.zeros(1, 1, 32, 32, 32),), path,
                              dynamo=kind == "dynamo", input_names=["input"], output_names=["logits"], **kw)
        if variant:
            simplified(path)
        ref = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"input": x})[0]
        refs[name] = (path, ref)
        agree(swinrun, name, path, inp, ref, work)

    g3 = group_model(3)
    with torch.no_grad():
        monai_ref = g3(torch.from_numpy(x)).numpy()
    sd = os.path.join(work, "group3.pt")
    torch.save(g3.state_dict(), sd)
    agree(swinrun, "state_dict_g3", sd, inp, monai_ref, work, ["--norm-groups", "3"])
    out = os.path.join(work, "state_dict_as_instance.npy")
    r = run(swinrun, ["forward", sd, inp, out])
    d = float(np.abs(np.load(out) - monai_ref).max()) if r.returncode == 0 else -1.0
    check("state_dict_g3 without --norm-groups differs", d > 1e-2,
          f"exit {r.returncode}, max|instance-norm logits - MONAI's| {d:.3g}")

    bundle = os.path.join(work, "bundle_g3")
    os.makedirs(os.path.join(bundle, "configs"), exist_ok=True)
    os.makedirs(os.path.join(bundle, "models"), exist_ok=True)
    c = make_bundle.CONFIGS["sigmoid"]
    m = dict(make_bundle.BASE, out_channels=3)
    inference = make_bundle.inference_json("group", dict(c, sigmoid=False), m)
    inference["network_def"]["norm_name"] = ["group", {"num_groups": 3}]
    json.dump(inference, open(os.path.join(bundle, "configs", "inference.json"), "w"), indent=2)
    json.dump({"version": "0.1.0", "monai_version": "1.5.0"}, open(os.path.join(bundle, "configs", "metadata.json"), "w"))
    torch.save(g3.state_dict(), os.path.join(bundle, "models", "model.pt"))
    agree(swinrun, "bundle_g3", bundle, inp, monai_ref, work)

    if emu:
        cuda = ["--backend", "cuda"]
        for name in ("ts17_g3", "ts17_v2_g4", "ts17_g1"):
            agree(emu, f"cuda_{name}", refs[name][0], inp, refs[name][1], work, cuda)
        agree(emu, "cuda_state_dict_g3", sd, inp, monai_ref, work, cuda + ["--norm-groups", "3"])
        agree(emu, "cuda_half_ts17_g3", refs["ts17_g3"][0], inp, refs["ts17_g3"][1], work, cuda + ["--half"],
              rel=1e-2, min_agreement=0.995)
    refused(swinrun, "--norm-groups 5 on 12 channels", ["info", sd, "--norm-groups", "5"], "do not divide")
    refused(swinrun, "--norm-groups 4 on a 3-group ONNX file",
            ["info", os.path.join(work, "ts17_g3.onnx"), "--norm-groups", "4"], "3 groups")
    r = run(swinrun, ["info", os.path.join(work, "ts17_g3.onnx"), "--json", "-"])
    got = json.loads(r.stdout).get("norm_groups") if r.returncode == 0 else None
    check("info --json norm_groups", got == 3, f"exit {r.returncode}, norm_groups {got!r}")
    print("PASS" if not failed else "FAILED: " + ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
