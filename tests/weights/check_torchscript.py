#!/usr/bin/env python3
"""TorchScript modules (torch.jit.save) as weights: the plain checkpoint's SwinUNETR traced with
torch.jit.trace, alone and as the `model` attribute of a wrapper module (its keys then carry the
`model.` prefix a state dict of the wrapper would), each run by `swinrun forward` and held to
MONAI's logits of the plain case (tools/export/check_logits.py). torch.jit.load(f).state_dict()
of each file is compared with the plain state dict first, so a failure names the file, not
swinrun, when torch writes something else.

    check_torchscript.py SWINRUN CKPT_PLAIN_DIR WORK
Exit status 0 when every form agrees."""
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


class Wrapper(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)


def main():
    swinrun, case, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    sd = torch.load(os.path.join(case, "model.pt"), map_location="cpu", weights_only=True)
    model = build_model(json.load(open(os.path.join(case, "model.json"))))
    model.load_state_dict(sd)
    x = torch.from_numpy(np.load(os.path.join(case, "input.npy")))
    failed = []
    for name, module, prefix in (("traced", model, ""), ("traced_wrapper", Wrapper(model).eval(), "model.")):
        path, out = os.path.join(work, name + ".ts"), os.path.join(work, name + ".logits.npy")
        with torch.no_grad():
            torch.jit.save(torch.jit.trace(module, x), path)
        back = torch.jit.load(path).state_dict()
        if sorted(back) != sorted(prefix + k for k in sd):
            print(f"{name:16s} FAIL torch.jit.load(f).state_dict() has other keys than the plain state dict")
            failed.append(name)
            continue
        if os.path.exists(out):
            os.remove(out)
        r = subprocess.run([swinrun, "forward", path, os.path.join(case, "input.npy"), out, "--threads", "2"],
                           capture_output=True, text=True)
        c = subprocess.run([sys.executable, CHECK, out, os.path.join(case, "logits.npy")], capture_output=True,
                           text=True) if r.returncode == 0 else None
        good = c is not None and c.returncode == 0
        print(f"{name:16s} {'ok' if good else 'FAIL'} {(c.stdout if c else r.stderr).strip()[-300:]}")
        if not good:
            failed.append(name)
    print("FAILED: " + ", ".join(failed) if failed else "PASS")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
