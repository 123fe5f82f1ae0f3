#!/usr/bin/env python3
"""TorchScript modules (torch.jit.save of torch.jit.trace(model)), each run by `swinrun forward`
with no option and held to check_logits.py's criterion against the traced module's own forward
(PyTorch's), on MONAI SwinUNETRs (f=12, 3 classes, 32^3, random weights as
tools/export/export_swin_unetr.py draws them):
    default          instance norm, normalize=True, merging (MONAI >= 1.5 order)
    g3_pre15_nonorm  group norm of 3 groups, normalize=False, MONAI < 1.5's merge order: what the
                     state dict cannot tell, read from the module's code (torch.jit.save keeps
                     each class's forward as text, deflated: torch.group_norm's groups, the
                     weightless torch.layer_norm of normalize, PatchMerging's torch.slice chains)
    v2               use_v2, downsample='mergingv2' (its cat takes a list named first)
`swinrun info --json` names the TorchScript module as the source of normalize, downsample and
the groups, and takes the traced input's size (traced_inputs.pkl) as the cube; refusals, exit 2 in one line: --norm-groups 4 on the 3-group module, --merge-order
pre15 on the default one (its code slices in MONAI >= 1.5's order); the same module with its code/ records stored (not deflated) reads the same,
and without them the groups are asked for (--norm-groups).

    check_traced.py SWINRUN WORKDIR"""
import json
import os
import subprocess
import sys
import warnings
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "export"))
import check_logits  # noqa: E402
import export_swin_unetr as exporter  # noqa: E402

failed = []


def check(name, ok, detail):
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {detail}")
    if not ok:
        failed.append(name)


def run(swinrun, args):
    return subprocess.run([swinrun, *args], capture_output=True, text=True)


def model(case):
    from monai.networks.nets import SwinUNETR
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


def traced(case, x, work):
    """The saved module of case and its logits on x."""
    import torch
    path = os.path.join(work, f"{case}.ts")
    with torch.no_grad():
        torch.jit.save(torch.jit.trace(model(case), torch.from_numpy(x)), path)
        ref = torch.jit.load(path)(torch.from_numpy(x)).numpy()
    return path, ref


def rezip(src, dst, keep_code, stored):
    with zipfile.ZipFile(src) as z, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as o:
        for item in z.infolist():
            code = "/code/" in item.filename
            if code and not keep_code:
                continue
            o.writestr(item.filename, z.read(item.filename),
                       zipfile.ZIP_STORED if stored or not code else zipfile.ZIP_DEFLATED)


def refused(swinrun, name, args, want):
    r = run(swinrun, args)
    err = r.stderr.strip()
    check(name, r.returncode == 2 and want in err and "\n" not in err, f"exit {r.returncode}: {err[-300:]}")


def info(swinrun, path):
    r = run(swinrun, ["info", path, "--json", "-"])
    return json.loads(r.stdout) if r.returncode == 0 else {"error": r.stderr.strip()}


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    swinrun, work = sys.argv[1:3]
    os.makedirs(work, exist_ok=True)
    warnings.filterwarnings("ignore")
    exporter._disable_instnorm_spatial_check()
    x = np.random.default_rng(3).random((1, 1, 32, 32, 32), dtype=np.float32)
    inp = os.path.join(work, "input.npy")
    np.save(inp, x)
    paths = {}
    for case in ("default", "g3_pre15_nonorm", "v2"):
        path, ref = traced(case, x, work)
        paths[case] = path
        with zipfile.ZipFile(path) as z:
            deflated = sum(i.compress_type == zipfile.ZIP_DEFLATED for i in z.infolist() if "/code/" in i.filename)
        out = os.path.join(work, f"{case}_swinrun.npy")
        r = run(swinrun, ["forward", path, inp, out])
        if r.returncode:
            check(case, False, f"swinrun exit {r.returncode}: {r.stderr.strip()[-300:]}")
            continue
        ok, line = check_logits.compare(np.load(out), ref)
        check(f"{case} ({deflated} deflated code records) against the traced module's forward", ok, line)

    fields = ("norm_groups", "normalize", "downsample", "cube")
    g3 = info(swinrun, paths["g3_pre15_nonorm"])
    check("info --json: the code's groups, normalize and merge order, the TorchScript module named as their source, "
          "the traced input's size as the cube",
          g3.get("norm_groups") == 3 and g3.get("normalize") is False and "< 1.5" in str(g3.get("downsample"))
          and g3.get("cube") == [32, 32, 32] and "the TorchScript module" in json.dumps(g3), json.dumps({k: g3.get(k) for k in fields + ("error",)}))
    v2 = info(swinrun, paths["v2"])
    check("info --json: mergingv2 with its order from the code", "mergingv2" in str(v2.get("downsample"))
          and "downsample: the TorchScript module" in json.dumps(v2), json.dumps({k: v2.get(k) for k in fields}))
    refused(swinrun, "--norm-groups 4 on the 3-group module", ["info", paths["g3_pre15_nonorm"], "--norm-groups", "4"],
            "num_groups 3")
    refused(swinrun, "--merge-order pre15 on the MONAI >= 1.5 module", ["info", paths["default"], "--merge-order", "pre15"],
            "another order")

    stored = os.path.join(work, "stored.ts")
    rezip(paths["g3_pre15_nonorm"], stored, keep_code=True, stored=True)
    st = info(swinrun, stored)
    check("code/ stored, not deflated: read the same", all(st.get(k) == g3.get(k) for k in fields),
          json.dumps({k: st.get(k) for k in fields + ("error",)}))
    bare = os.path.join(work, "no_code.ts")
    rezip(paths["g3_pre15_nonorm"], bare, keep_code=False, stored=True)
    refused(swinrun, "code/ left out: the groups asked for", ["info", bare], "--norm-groups")
    print("PASS" if not failed else "FAILED: " + ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
