#!/usr/bin/env python3
"""TorchScript modules (torch.jit.save of torch.jit.trace(model)), each run by `swinrun forward`
with no option and held to check_logits.py's criterion against the traced module's own forward
(PyTorch's), on weights_checks.py's MONAI SwinUNETRs: default; g3_pre15_nonorm, whose group
norm, normalize=False and MONAI < 1.5 merge order the state dict cannot tell and the module's
code says (torch.jit.save keeps each class's forward as text, deflated: torch.group_norm's
groups, the weightless torch.layer_norm of normalize, PatchMerging's torch.slice chains); v2
(its cat takes a list named first). `swinrun info --json` names the TorchScript module as the
source of normalize, downsample and the groups, and takes the traced input's size
(traced_inputs.pkl) as the cube. Refusals, exit 2 in one line: --norm-groups 4 on the 3-group
module, --merge-order pre15 on the default one (its code slices in MONAI >= 1.5's order). The
same module with its code/ records stored (not deflated) reads the same; without them the
groups are asked for (--norm-groups).

    check_traced.py SWINRUN WORKDIR"""
import json
import os
import sys
import zipfile

from weights_checks import CASES, agrees, check, info, input_cube, refused, summary, swin_unetr


def traced(case, x, work):
    """The saved module of case and its logits on x."""
    import torch
    path = os.path.join(work, f"{case}.ts")
    with torch.no_grad():
        torch.jit.save(torch.jit.trace(swin_unetr(case), torch.from_numpy(x)), path)
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


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    swinrun, work = sys.argv[1:3]
    x, inp = input_cube(work, 3)
    paths = {}
    for case in CASES:
        path, ref = traced(case, x, work)
        paths[case] = path
        with zipfile.ZipFile(path) as z:
            deflated = sum(i.compress_type == zipfile.ZIP_DEFLATED for i in z.infolist() if "/code/" in i.filename)
        agrees(swinrun, f"{case} ({deflated} deflated code records) against the traced module's forward", path, inp,
               ref, work)

    fields = ("norm_groups", "normalize", "downsample", "cube")
    g3 = info(swinrun, paths["g3_pre15_nonorm"])
    check("info --json: the code's groups, normalize and merge order, the TorchScript module named as their source, "
          "the traced input's size as the cube",
          g3.get("norm_groups") == 3 and g3.get("normalize") is False and "< 1.5" in str(g3.get("downsample"))
          and g3.get("cube") == [32, 32, 32] and "the TorchScript module" in json.dumps(g3),
          json.dumps({k: g3.get(k) for k in fields + ("error",)}))
    v2 = info(swinrun, paths["v2"])
    check("info --json: mergingv2 with its order from the code", "mergingv2" in str(v2.get("downsample"))
          and "downsample: the TorchScript module" in json.dumps(v2), json.dumps({k: v2.get(k) for k in fields}))
    refused(swinrun, "--norm-groups 4 on the 3-group module", ["info", paths["g3_pre15_nonorm"], "--norm-groups", "4"],
            "num_groups 3")
    refused(swinrun, "--merge-order pre15 on the MONAI >= 1.5 module",
            ["info", paths["default"], "--merge-order", "pre15"], "another order")

    stored = os.path.join(work, "stored.ts")
    rezip(paths["g3_pre15_nonorm"], stored, keep_code=True, stored=True)
    st = info(swinrun, stored)
    check("code/ stored, not deflated: read the same", all(st.get(k) == g3.get(k) for k in fields),
          json.dumps({k: st.get(k) for k in fields + ("error",)}))
    bare = os.path.join(work, "no_code.ts")
    rezip(paths["g3_pre15_nonorm"], bare, keep_code=False, stored=True)
    refused(swinrun, "code/ left out: the groups asked for", ["info", bare], "--norm-groups")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
