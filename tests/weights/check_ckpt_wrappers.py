#!/usr/bin/env python3
"""The plain checkpoint's state dict saved the other ways training scripts save it, each run by
`swinrun forward` and held to MONAI's logits of the plain case (tools/export/check_logits.py):
torch.compile's "_orig_mod." prefix on every key, under DataParallel's "module." in "state_dict"
as well, and the tutorials' {"model_state_dict", "optimizer_state_dict", "epoch"}; and a
.safetensors file whose header is 0x80 bytes past a multiple of 256 long (its padding spaces, as
the format allows), so that its first byte is pickle's protocol opcode: swinrun took one such
file in 256 for a legacy torch.save file and refused it.

    check_ckpt_wrappers.py SWINRUN CKPT_PLAIN_DIR WORK
Exit status 0 when every form agrees."""
import os
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(HERE, "..", "..", "tools", "export", "check_logits.py")


def save_safetensors_0x80(sd, path):
    """sd as safetensors, its JSON header padded with spaces to a length of 0x80 mod 256."""
    import struct
    from safetensors.torch import save
    blob = save({k: v.contiguous() for k, v in sd.items()})
    n = struct.unpack("<Q", blob[:8])[0]
    pad = (0x80 - n) % 256
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", n + pad) + blob[8:8 + n] + b" " * pad + blob[8 + n:])
    assert open(path, "rb").read(1) == b"\x80"


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
    for name, obj in list(forms.items()) + [("safetensors_0x80", sd)]:
        path, out = os.path.join(work, name + ".pt"), os.path.join(work, name + ".logits.npy")
        if name == "safetensors_0x80":
            path = os.path.join(work, name + ".safetensors")
            save_safetensors_0x80(obj, path)
        else:
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
