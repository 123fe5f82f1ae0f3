#!/usr/bin/env python3
"""torch.export archives (.pt2: torch.export.save of torch.export.export(model)), each run by
`swinrun forward` with no option and held to check_logits.py's criterion against the exported
program's own forward (ep.module(), PyTorch's), on weights_checks.py's MONAI SwinUNETRs
(g3_pre15_nonorm's groups, normalize=False and merge order read from the graph: the state dict
alone needs three options). `swinrun info` takes the export's input size as the cube.
Refusals, exit 2 in one line: --norm-groups 4 on the 3-group archive; --merge-order v2 on the
pre-1.5 archive; a weights entry pickled (use_pickle: a tensor subclass); the older archive layout
(serialized_exported_program.json) and an AOTInductor package (compiled code); `swinrun info` names
the archive and the graph as the source of normalize, downsample and the groups.

    check_pt2.py SWINRUN WORKDIR"""
import json
import os
import sys
import zipfile

from weights_checks import CASES, agrees, check, input_cube, refused, summary, swin_unetr
from weights_checks import info as info_of


def exported(case, x, work):
    """The archive of case and its exported program's logits on x."""
    import torch
    path = os.path.join(work, f"{case}.pt2")
    with torch.no_grad():
        ep = torch.export.export(swin_unetr(case), (torch.from_numpy(x),))
        torch.export.save(ep, path)
        ref = torch.export.load(path).module()(torch.from_numpy(x)).numpy()
    return path, ref


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    swinrun, work = sys.argv[1:3]
    x, inp = input_cube(work, 2)
    paths = {}
    for case in CASES:
        path, ref = exported(case, x, work)
        paths[case] = path
        agrees(swinrun, f"{case} against the exported program's forward", path, inp, ref, work)

    info = info_of(swinrun, paths["g3_pre15_nonorm"])
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
    for name, entries, want in (("older layout", ("old/serialized_exported_program.json", "old/version"),
                                 "older layout"),
                                ("AOTInductor", ("m/archive_format", "m/data/aotinductor/model/model.so"),
                                 "an AOTInductor package")):
        path = os.path.join(work, name.replace(" ", "_") + ".pt2")
        with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
            for e in entries:
                z.writestr(e, "x")
        refused(swinrun, f"a torch.export archive in the {name} form", ["info", path], want)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
