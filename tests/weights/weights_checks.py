"""What the weights tests that build MONAI models at test time share (check_pt2.py,
check_traced.py, check_ort_optimized.py): a check that records failures and the summary at the
end, running swinrun, a refusal (exit 2, one line naming the problem), `swinrun info --json`,
a random 32^3 input saved for `swinrun forward` and a forward held to check_logits.py against a
reference, and the SwinUNETR cases of those tests (f=12, 3 classes, random
weights as tools/export/export_swin_unetr.py draws them):
    default          instance norm, normalize=True, merging (MONAI >= 1.5 order)
    g3_pre15_nonorm  group norm of 3 groups, normalize=False, MONAI < 1.5's merge order
    v2               use_v2, downsample='mergingv2', affine instance norm"""
import os
import subprocess
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "export"))
import export_swin_unetr as exporter  # noqa: E402

CASES = ("default", "g3_pre15_nonorm", "v2")
failed = []


def check(name, ok, detail):
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {detail}")
    if not ok:
        failed.append(name)


def run(swinrun, args):
    return subprocess.run([swinrun, *args], capture_output=True, text=True)


def refused(swinrun, name, args, want):
    r = run(swinrun, args)
    err = r.stderr.strip()
    check(name, r.returncode == 2 and want in err and "\n" not in err, f"exit {r.returncode}: {err[-300:]}")


def agrees(swinrun, name, model, inp, ref, work):
    """`swinrun forward` of model on inp held to check_logits.py's criterion against ref."""
    import check_logits
    out = os.path.join(work, name.split(" ")[0] + "_swinrun.npy")
    r = run(swinrun, ["forward", model, inp, out])
    if r.returncode:
        check(name, False, f"swinrun exit {r.returncode}: {r.stderr.strip()[-300:]}")
        return
    ok, line = check_logits.compare(np.load(out), ref)
    check(name, ok, line)


def info(swinrun, path):
    """`swinrun info --json` of path as a dict ({"error": its message} when it fails)."""
    import json
    r = run(swinrun, ["info", path, "--json", "-"])
    return json.loads(r.stdout) if r.returncode == 0 else {"error": r.stderr.strip()}


def summary() -> int:
    print("PASS" if not failed else "FAILED: " + ", ".join(failed))
    return 1 if failed else 0


def input_cube(work, seed):
    """A (1, 1, 32, 32, 32) input in [0, 1), and where it is saved in work."""
    os.makedirs(work, exist_ok=True)
    warnings.filterwarnings("ignore")
    x = np.random.default_rng(seed).random((1, 1, 32, 32, 32), dtype=np.float32)
    path = os.path.join(work, "input.npy")
    np.save(path, x)
    return x, path


def swin_unetr(case):
    """The MONAI SwinUNETR of case, in eval mode, its 1-voxel instance norms at 32^3 allowed."""
    from monai.networks.nets import SwinUNETR
    exporter._disable_instnorm_spatial_check()
    kw = dict(in_channels=1, out_channels=3, feature_size=12, spatial_dims=3)
    if case == "g3_pre15_nonorm":
        kw.update(norm_name=("group", {"num_groups": 3}), normalize=False)
    elif case == "v2":
        kw.update(use_v2=True, downsample="mergingv2", norm_name=("instance", {"affine": True}))
    m = SwinUNETR(**kw).eval()
    if case == "g3_pre15_nonorm":
        exporter.apply_pre15(m)
    exporter.randomize(m, seed=0)
    return m
