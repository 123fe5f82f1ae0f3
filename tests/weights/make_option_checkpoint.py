#!/usr/bin/env python3
"""A state dict that loads right only with every checkpoint load option: a MONAI SwinUNETR
(f=12, 3 classes) built with norm_name=("group", {"num_groups": 3}), normalize=False and
trained in MONAI < 1.5's patch-merging order, so that swinrun needs norm_groups 3,
normalize false and merge order pre15 (`--norm-groups 3 --no-normalize --merge-order pre15`,
swinrun serve's and the Triton backend's keys of the same names). Random weights (seed 0).

    make_option_checkpoint.py OUTDIR [CUBE]

Writes OUTDIR/model.pt (torch.save(state_dict)), input.npy (1, 1, CUBE^3 uniform [0, 1)) and
logits.npy (MONAI's own forward of those weights on it: the reference)."""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "export"))
import export_swin_unetr as exporter  # noqa: E402


def main() -> int:
    import torch
    from monai.networks.nets import SwinUNETR
    out = sys.argv[1]
    cube = int(sys.argv[2]) if len(sys.argv) > 2 else 32
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    m = SwinUNETR(in_channels=1, out_channels=3, feature_size=12, normalize=False, spatial_dims=3,
                  norm_name=("group", {"num_groups": 3})).eval()
    exporter.apply_pre15(m)
    exporter.randomize(m, seed=0)
    torch.save(m.state_dict(), os.path.join(out, "model.pt"))
    x = np.random.default_rng(0).random((1, 1, cube, cube, cube), dtype=np.float32)
    with torch.no_grad():
        y = m(torch.from_numpy(x)).numpy()
    np.save(os.path.join(out, "input.npy"), x)
    np.save(os.path.join(out, "logits.npy"), y)
    return 0


if __name__ == "__main__":
    sys.exit(main())
