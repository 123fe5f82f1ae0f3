#!/usr/bin/env python3
"""Weights saved as a whole module rather than a state dict, each run by `swinrun forward` and
held to MONAI's logits of the same module on the same input (tools/export/check_logits.py):

  - TorchScript (torch.jit.save of torch.jit.trace): the plain checkpoint's model alone and as
    the `model` attribute of a wrapper (its keys then carry the `model.` prefix);
  - torch.save(model), the module pickled whole, alone and under "model" in a training
    checkpoint;
  - what only the module's classes and attributes tell, no option given: a model built with
    downsample="mergingv2" (PatchMergingV2: traced and pickled) and one with normalize=False
    (the pickled SwinUNETR's attribute; a trace does not keep it). Each must differ from the
    plain model's logits, else the check could not fail;
  - an option the module contradicts (--merge-order pre15 on PatchMergingV2, --no-normalize on
    normalize=True): refused, exit 2, naming both;
  - a model built with norm_name=("group", {"num_groups": 3}) (its state dict has affine
    instance norm's keys; only the classes tell them apart): pickled, it agrees with MONAI's
    logits of it as it is (the pickled GroupNorms keep num_groups); traced, it agrees as it is
    (TorchScript keeps num_groups in its code: weights/checkpoint/ts_code.c) and with
    --norm-groups 3; --norm-groups 4 on the pickled one and --norm-groups 3 on the pickled
    instance-norm model are refused.

torch.jit.load(f).state_dict() of each TorchScript file is compared with the state dict first,
so a failure names the file, not swinrun, when torch writes something else.

    check_module_files.py SWINRUN CKPT_PLAIN_DIR WORK
Exit status 0 when every check passes."""
import json
import os
import subprocess
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
EXPORT = os.path.join(HERE, "..", "..", "tools", "export")
CHECK = os.path.join(EXPORT, "check_logits.py")
sys.path.insert(0, EXPORT)
from export_swin_unetr import build_model  # noqa: E402

failed = []


def check(name, ok, detail):
    print(f"{name:24s} {'ok' if ok else 'FAIL'} {detail}")
    if not ok:
        failed.append(name)


class Wrapper(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)


def agree(swinrun, name, path, input_npy, ref_npy, work, opts=()):
    out = os.path.join(work, name + ".logits.npy")
    if os.path.exists(out):
        os.remove(out)
    r = subprocess.run([swinrun, "forward", path, input_npy, out, "--threads", "2", *opts], capture_output=True,
                       text=True)
    c = subprocess.run([sys.executable, CHECK, out, ref_npy], capture_output=True, text=True) if r.returncode == 0 else None
    check(name, c is not None and c.returncode == 0, (c.stdout if c else r.stderr).strip()[-300:])


def main():
    swinrun, case, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    sd = torch.load(os.path.join(case, "model.pt"), map_location="cpu", weights_only=True)
    cfg = json.load(open(os.path.join(case, "model.json")))
    input_npy, plain_ref = os.path.join(case, "input.npy"), os.path.join(case, "logits.npy")
    x = torch.from_numpy(np.load(input_npy))

    def model_of(**change):
        m = build_model(dict(cfg, **change))
        m.load_state_dict(sd)
        return m

    def reference(name, m):  # MONAI's logits of m, which must not be the plain model's
        with torch.no_grad():
            y = m(x).numpy()
        path = os.path.join(work, name + ".ref.npy")
        np.save(path, y)
        d = float(np.abs(y - np.load(plain_ref)).max())
        check(name + " differs", d > 1e-2, f"max|logits - plain logits| {d:.3g}")
        return path

    def traced(name, m, prefix=""):
        path = os.path.join(work, name + ".ts")
        with torch.no_grad():
            torch.jit.save(torch.jit.trace(m, x), path)
        keys_ok = sorted(torch.jit.load(path).state_dict()) == sorted(prefix + k for k in sd)
        check(name + " keys", keys_ok, "torch.jit.load(f).state_dict() has the state dict's keys")
        return path

    def pickled(name, obj):
        path = os.path.join(work, name + ".pt")
        torch.save(obj, path)
        return path

    plain = model_of()
    agree(swinrun, "traced", traced("traced", plain), input_npy, plain_ref, work)
    agree(swinrun, "traced_wrapper", traced("traced_wrapper", Wrapper(plain).eval(), "model."), input_npy, plain_ref, work)
    agree(swinrun, "pickled", pickled("pickled", plain), input_npy, plain_ref, work)
    agree(swinrun, "pickled_in_checkpoint", pickled("pickled_in_checkpoint", {"epoch": 3, "model": plain}), input_npy,
          plain_ref, work)

    v2 = model_of(downsample="mergingv2")
    v2_ref = reference("mergingv2", v2)
    agree(swinrun, "traced_mergingv2", traced("traced_mergingv2", v2), input_npy, v2_ref, work)
    v2_pt = pickled("pickled_mergingv2", v2)
    agree(swinrun, "pickled_mergingv2", v2_pt, input_npy, v2_ref, work)
    no_norm = model_of(normalize=False)
    agree(swinrun, "pickled_no_normalize", pickled("pickled_no_normalize", no_norm), input_npy,
          reference("no_normalize", no_norm), work)

    for name, path, opt, want in (("pre15 on PatchMergingV2", v2_pt, ["--merge-order", "pre15"], "PatchMergingV2"),
                                  ("--no-normalize on True", os.path.join(work, "pickled.pt"), ["--no-normalize"],
                                   "normalize=True")):
        r = subprocess.run([swinrun, "info", path, *opt], capture_output=True, text=True)
        check(name, r.returncode == 2 and want in r.stderr and len(r.stderr.strip().split("\n")) == 1,
              f"exit {r.returncode}: {r.stderr.strip()}")
    from monai.networks.nets import SwinUNETR
    torch.manual_seed(0)
    group = SwinUNETR(in_channels=cfg["in_channels"], out_channels=cfg["out_channels"], feature_size=cfg["feature_size"],
                      norm_name=("group", {"num_groups": 3})).eval()
    traced_group = os.path.join(work, "traced_group.ts")
    with torch.no_grad():
        torch.jit.save(torch.jit.trace(group, x), traced_group)
    with torch.no_grad():
        group_ref = os.path.join(work, "group.ref.npy")
        np.save(group_ref, group(x).numpy())
    pickled_group = pickled("pickled_group", group)
    agree(swinrun, "traced_GroupNorm", traced_group, input_npy, group_ref, work)
    agree(swinrun, "traced_GroupNorm_groups3", traced_group, input_npy, group_ref, work, ["--norm-groups", "3"])
    agree(swinrun, "pickled_GroupNorm", pickled_group, input_npy, group_ref, work)
    for name, path, groups, want in (("--norm-groups 4 on GroupNorm(3)", pickled_group, "4", "num_groups 3"),
                                     ("--norm-groups 3 on InstanceNorm3d", os.path.join(work, "pickled.pt"), "3",
                                      "not GroupNorm")):
        r = subprocess.run([swinrun, "info", path, "--norm-groups", groups], capture_output=True, text=True)
        check(name, r.returncode == 2 and want in r.stderr and len(r.stderr.strip().split("\n")) == 1,
              f"exit {r.returncode}: {r.stderr.strip()}")
    print("FAILED: " + ", ".join(failed) if failed else "PASS")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
