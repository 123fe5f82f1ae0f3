#!/usr/bin/env python3
"""torch.export archives (.pt2: torch.export.save of torch.export.export(model)), each run by
`swinrun forward` with no option and held to check_logits.py's criterion against the exported
program's own forward (ep.module(), PyTorch's), on MONAI SwinUNETRs (f=12, 3 classes, 32^3,
random weights as tools/export/export_swin_unetr.py draws them):
    default        instance norm, normalize=True, merging (MONAI >= 1.5 order)
    g3_pre15_nonorm group norm of 3 groups, normalize=False, MONAI < 1.5's merge order: all
                   three read from the graph (the state dict alone needs three options)
    v2             use_v2, downsample='mergingv2', affine instance norm
`swinrun info` takes the export's input size as the cube; refusals, exit 2 in one line: --norm-groups 4 on the 3-group archive; --merge-order v2 on the
pre-1.5 archive; a weights entry pickled (use_pickle: a tensor subclass); the older archive layout
(serialized_exported_program.json) and an AOTInductor package (compiled code); `swinrun info` names
the archive and the graph as the source of normalize, downsample and the groups.

    check_pt2.py SWINRUN WORKDIR"""
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


def exported(case, x, work):
    """The archive of case and its exported program's logits on x."""
    import torch
    path = os.path.join(work, f"{case}.pt2")
    with torch.no_grad():
        ep = torch.export.export(model(case), (torch.from_numpy(x),))
        torch.export.save(ep, path)
        ref = torch.export.load(path).module()(torch.from_numpy(x)).numpy()
    return path, ref


def refused(swinrun, name, args, want):
    r = run(swinrun, args)
    err = r.stderr.strip()
    check(name, r.returncode == 2 and want in err and "\n" not in err, f"exit {r.returncode}: {err[-300:]}")


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    swinrun, work = sys.argv[1:3]
    os.makedirs(work, exist_ok=True)
    warnings.filterwarnings("ignore")
    exporter._disable_instnorm_spatial_check()
    x = np.random.default_rng(2).random((1, 1, 32, 32, 32), dtype=np.float32)
    inp = os.path.join(work, "input.npy")
    np.save(inp, x)
    paths = {}
    for case in ("default", "g3_pre15_nonorm", "v2"):
        path, ref = exported(case, x, work)
        paths[case] = path
        out = os.path.join(work, f"{case}_swinrun.npy")
        r = run(swinrun, ["forward", path, inp, out])
        if r.returncode:
            check(case, False, f"swinrun exit {r.returncode}: {r.stderr.strip()[-300:]}")
            continue
        ok, line = check_logits.compare(np.load(out), ref)
        check(f"{case} against the exported program's forward", ok, line)

    r = run(swinrun, ["info", paths["g3_pre15_nonorm"], "--json", "-"])
    info = json.loads(r.stdout) if r.returncode == 0 else {}
    check("info --json: the archive, and the graph's groups, normalize, merge order and input size (the cube)",
          info.get("norm_groups") == 3 and info.get("normalize") is False and "< 1.5" in str(info.get("downsample"))
          and info.get("cube") == [32, 32, 32] and "torch.export archive" in json.dumps(info)
          and "the exported graph" in json.dumps(info),
          json.dumps({k: info.get(k) for k in ("norm_groups", "normalize", "downsample", "cube")}))
    refused(swinrun, "--norm-groups 4 on the 3-group archive", ["info", paths["g3_pre15_nonorm"], "--norm-groups", "4"],
            "num_groups 3")
    refused(swinrun, "--merge-order v2 on the pre-1.5 archive",
            ["info", paths["g3_pre15_nonorm"], "--merge-order", "v2"], "another order")

    # a weights entry pickled (torch.export's form for a tensor subclass)
    pickled = os.path.join(work, "pickled.pt2")
    with zipfile.ZipFile(paths["default"]) as src, zipfile.ZipFile(pickled, "w", zipfile.ZIP_STORED) as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename.endswith("data/weights/model_weights_config.json"):
                cfg = json.loads(data)
                next(iter(cfg["config"].values()))["use_pickle"] = True
                data = json.dumps(cfg).encode()
            dst.writestr(item.filename, data)
    refused(swinrun, "a pickled weights entry", ["info", pickled], "pickled (a tensor subclass)")
    for name, entries, want in (("older layout", ("old/serialized_exported_program.json", "old/version"), "older layout"),
                                ("AOTInductor", ("m/archive_format", "m/data/aotinductor/model/model.so"),
                                 "an AOTInductor package")):
        path = os.path.join(work, name.replace(" ", "_") + ".pt2")
        with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
            for e in entries:
                z.writestr(e, "x")
        refused(swinrun, f"a torch.export archive in the {name} form", ["info", path], want)
    print("PASS" if not failed else "FAILED: " + ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
