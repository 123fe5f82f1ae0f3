#!/usr/bin/env python3
"""The plain checkpoint's state dict saved the other ways training scripts save it, each run by
`swinrun forward` and held to MONAI's logits of the plain case (tools/export/check_logits.py):
torch.compile's "_orig_mod." prefix on every key, under DataParallel's "module." in "state_dict"
as well, and the tutorials' {"model_state_dict", "optimizer_state_dict", "epoch"}.

    check_ckpt_wrappers.py SWINRUN CKPT_PLAIN_DIR WORK
Exit status 0 when every form agrees."""
import os
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(HERE, "..", "..", "tools", "export", "check_logits.py")


def main():
    swinrun, case, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    sd = torch.load(os.path.join(case, "model.pt"), map_location="cpu", weights_only=True)
    adam = {"state": {0: {"step": torch.tensor(3.0), "exp_avg": torch.zeros(3)}},
            "param_groups": [{"lr": 1e-3, "params": [0]}]}
    forms = {
        "compiled": {"_orig_mod." + k: v for k, v in sd.items()},
        "compiled_dataparallel": {"epoch": 4, "state_dict": {"module._orig_mod." + k: v for k, v in sd.items()}},
        "model_state_dict": {"epoch": 5, "model_state_dict": sd, "optimizer_state_dict": adam},
    }
    failed = []
    for name, obj in forms.items():
        path, out = os.path.join(work, name + ".pt"), os.path.join(work, name + ".logits.npy")
        torch.save(obj, path)
        if os.path.exists(out):
            os.remove(out)
        r = subprocess.run([swinrun, "forward", path, os.path.join(case, "input.npy"), out, "--threads", "2"],
                           capture_output=True, text=True)
        c = subprocess.run([sys.executable, CHECK, out, os.path.join(case, "logits.npy")], capture_output=True,
                           text=True) if r.returncode == 0 else None
        good = c is not None and c.returncode == 0
        print(f"{name:24s} {'ok' if good else 'FAIL'} {(c.stdout if c else r.stderr).strip()[-300:]}")
        if not good:
            failed.append(name)
    print("FAILED: " + ", ".join(failed) if failed else "PASS")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
