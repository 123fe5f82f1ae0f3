#!/usr/bin/env python3
"""MONAI bundle folders as models (docs/bundles.md).

    test_bundles.py recipe   SWINRUN WORKDIR   what `swinrun info --json` reads from generated
                                               bundles: configuration, recipe, warnings
    test_bundles.py refused  SWINRUN WORKDIR   broken bundles: one line naming the problem, exit 2
    test_bundles.py fidelity SWINRUN WORKDIR CONFIG
                                               CONFIG (tools/export/make_bundle.py) end to end
                                               through swinrun and through MONAI's own run of the
                                               same inference.json (tools/export/bundle_reference.py)
                                               on a CT finer and one coarser than its spacing:
                                               >= 99.9 % identical labels on each
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import torch
import yaml

here = os.path.dirname(os.path.abspath(__file__))
export = os.path.join(here, "..", "..", "tools", "export")
sys.path.insert(0, export)
import make_bundle  # noqa: E402
from bundle_reference import inference_config  # noqa: E402
from script_module import module_of_state_dict  # noqa: E402

fails = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        fails.append(what)


def bundle(work, config):
    path = os.path.join(work, config)
    if not os.path.exists(os.path.join(path, "models", "model.pt")):
        shutil.rmtree(path, ignore_errors=True)
        make_bundle.make(path, config, seed=1)
    return path


def info(swinrun, path):
    r = subprocess.run([swinrun, "info", path, "--json", "-"], capture_output=True, text=True)
    return r, (json.loads(r.stdout) if r.returncode == 0 else None)


def edit(src, dst, change):
    """A copy of bundle src at dst with its inference config (JSON or YAML) passed through change(dict)."""
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    p = inference_config(dst)
    yml = not p.endswith(".json")
    cfg = yaml.safe_load(open(p)) if yml else json.load(open(p))
    change(cfg)
    with open(p, "w") as f:
        yaml.safe_dump(cfg, f) if yml else json.dump(cfg, f)
    return dst


def recipe(swinrun, work):
    btcv = bundle(work, "btcv")
    r, j = info(swinrun, btcv)
    check(r.returncode == 0, f"info btcv: exit 0 ({r.stderr.strip()})")
    if j:
        check((j["feature_size"], j["out_channels"], j["cube"]) == (12, 5, [64, 64, 64]), "btcv: f=12, 5 classes, roi 64^3")
        check("< 1.5" in j["downsample"], f"btcv: MONAI 1.0.1 -> the < 1.5 merge order ({j['downsample']})")
        check(j["recipe"].startswith("bundle test_btcv_bundle 0.1.0"), f"btcv: recipe source ({j['recipe']})")
        check(j["recipe_warnings"] == "", f"btcv: the BTCV recipe is followed whole ({j['recipe_warnings']!r})")
    r = subprocess.run([swinrun, "info", btcv], capture_output=True, text=True)
    for line in ("spacing      1.5 x 1.5 x 2 mm", "intensity    [-175, 250]", "overlap 0.5, constant",
                 "probabilities by linear interpolation"):
        check(line in r.stdout, f"btcv: info prints '{line}'")
    # MONAI's norm factory takes any case, and instance_nvfuser is instance norm
    for name in ("INSTANCE", "instance_nvfuser"):
        r, _ = info(swinrun, edit(btcv, os.path.join(work, "norm_" + name), lambda c: c["network_def"].update(norm_name=name)))
        check(r.returncode == 0, f"btcv with norm_name {name!r}: exit 0 ({r.stderr.strip()})")
    v2 = bundle(work, "v2")
    r, j = info(swinrun, v2)
    check(r.returncode == 0, f"info v2: exit 0 ({r.stderr.strip()})")
    if j:
        check(j["use_v2"] and j["instnorm_affine"] and j["downsample"] == "mergingv2", "v2: use_v2, affine IN, mergingv2")
        check(j["cube"] == [64, 64, 32], f"v2: roi through the @roi reference ({j['cube']})")
    r = subprocess.run([swinrun, "info", v2], capture_output=True, text=True)
    for line in ("spacing      2 x 2 x 2.5 mm", "[-100, 200]", "overlap 0.25, gaussian", "labels by nearest"):
        check(line in r.stdout, f"v2: info prints '{line}'")

    # the same configuration in YAML as people write it (tests/bundles/v2_inference.yaml: comments,
    # anchors and a merge key, yes/off booleans, flow and block lists, folded text): PyYAML reads
    # the JSON's configuration from it, and swinrun the same model and recipe
    v2y = os.path.join(work, "v2_yaml")
    shutil.rmtree(v2y, ignore_errors=True)
    shutil.copytree(v2, v2y)
    os.remove(os.path.join(v2y, "configs", "inference.json"))
    shutil.copy(os.path.join(here, "v2_inference.yaml"), os.path.join(v2y, "configs", "inference.yaml"))
    as_yaml = yaml.safe_load(open(os.path.join(v2y, "configs", "inference.yaml")))
    as_yaml.pop("_defaults")
    check(as_yaml == json.load(open(os.path.join(v2, "configs", "inference.json"))),
          "v2_inference.yaml: PyYAML reads the v2 bundle's inference.json from it")
    r, jy = info(swinrun, v2y)
    _, jj = info(swinrun, v2)
    lines = [subprocess.run([swinrun, "info", b], capture_output=True, text=True).stdout.splitlines() for b in (v2, v2y)]
    # (the lines naming the bundle's folder and config file differ)
    check(r.returncode == 0 and jy and jj and all(jy[k] == jj[k] for k in jj if k != "recipe")
          and jy["recipe"] == jj["recipe"].replace("inference.json", "inference.yaml")
          and [x for x in lines[0] if "v2" not in x] == [x for x in lines[1] if "v2" not in x] and len(lines[0]) > 10,
          f"v2 in YAML: the model and recipe of its JSON ({r.stderr.strip()}{jy and jy['recipe']})")

    sg = bundle(work, "sigmoid")
    r, j = info(swinrun, sg)
    check(r.returncode == 0, f"info sigmoid: exit 0 ({r.stderr.strip()})")
    if j:
        check(j["out_channels"] == 1 and j["recipe_warnings"] == "",
              f"sigmoid: one output channel, Activationsd(sigmoid) + AsDiscreted(threshold=0.5) followed whole "
              f"({j['recipe_warnings']!r})")

    mri = bundle(work, "mri")
    r, j = info(swinrun, mri)
    check(r.returncode == 0, f"info mri: exit 0 ({r.stderr.strip()})")
    if j:
        check(j["in_channels"] == 4 and j["recipe_warnings"] == "",
              f"mri: four input channels, NormalizeIntensityd(nonzero, channel_wise) and a sigmoid per channel "
              f"followed whole ({j['recipe_warnings']!r})")
    r = subprocess.run([swinrun, "info", mri], capture_output=True, text=True)
    for line in ("z-score of each channel over its nonzero voxels", "a sigmoid mask per channel"):
        check(line in r.stdout, f"mri: info prints '{line}'")

    def not_channel_wise(cfg):  # one mean and deviation over all four channels: not what swinrun does
        cfg["preprocessing"]["transforms"][4]["channel_wise"] = False
    r, j = info(swinrun, edit(mri, os.path.join(work, "mri_not_channel_wise"), not_channel_wise))
    if j:
        check("without channel_wise over 4 channels" in j["recipe_warnings"],
              f"mri without channel_wise: warned ({j['recipe_warnings']!r})")

    def softmax_on_one(cfg):  # the many-class post-processing on a one-channel model
        post = cfg["postprocessing"]["transforms"]
        post[0] = {"_target_": "Activationsd", "keys": "pred", "softmax": True}
        post[2] = {"_target_": "AsDiscreted", "keys": "pred", "argmax": True}
    r, j = info(swinrun, edit(sg, os.path.join(work, "sigmoid_softmax"), softmax_on_one))
    check(r.returncode == 0, "sigmoid bundle with softmax and argmax: still loads")
    if j:
        w = j["recipe_warnings"]
        for what in ("softmax other than false", "without threshold 0.5", "argmax other than false",
                     "no Activationsd(sigmoid=true)"):
            check(what in w, f"sigmoid bundle with softmax and argmax: a warning says '{what}' ({w!r})")

    def unsupported(cfg):
        pre = cfg["preprocessing"]["transforms"]
        pre.insert(4, {"_target_": "CropForegroundd", "keys": "image", "source_key": "image"})
        pre[3]["mode"] = "nearest"
        cfg["inferer"]["overlap"] = "$0.5"
        cfg["inferer"]["progress"] = True
        cfg["network_def"]["new_option"] = 3
        cfg["postprocessing"]["transforms"].insert(3, {"_target_": "KeepLargestConnectedComponentd", "keys": "pred"})
    r, j = info(swinrun, edit(btcv, os.path.join(work, "unsupported"), unsupported))
    check(r.returncode == 0, "unsupported keys: still loads")
    if j:
        w = j["recipe_warnings"]
        for name in ("CropForegroundd", "Spacingd mode", "overlap' is a Python expression", "new_option",
                     "KeepLargestConnectedComponentd"):
            check(name in w, f"unsupported keys: the warning names {name}")
        check("progress" not in w, "unsupported keys: progress ignored by design")
        check(len(w.strip().split("\n")) == 5, f"unsupported keys: 5 warnings ({w!r})")

    # the weights as models/model.ts only (TorchScript, as bundles exported for deployment ship
    # them): read as the module's parameters and buffers, the same model and recipe as model.pt's
    ts = os.path.join(work, "torchscript")
    shutil.rmtree(ts, ignore_errors=True)
    shutil.copytree(btcv, ts)
    pt = os.path.join(ts, "models", "model.pt")
    torch.jit.save(module_of_state_dict(torch.load(pt, weights_only=True)), os.path.join(ts, "models", "model.ts"))
    os.remove(pt)
    r, j = info(swinrun, ts)
    check(r.returncode == 0, f"info torchscript: exit 0 ({r.stderr.strip()})")
    _, jp = info(swinrun, btcv)
    if j and jp:
        same = ("feature_size", "out_channels", "cube", "downsample", "params", "weight_bytes", "recipe", "recipe_warnings")
        check(all(j[k] == jp[k] for k in same) and j["exporter"].startswith("TorchScript module"),
              f"torchscript: models/model.ts read as the same model and recipe as model.pt ({j['exporter']})")

    # a real trace of the network, made with MONAI >= 1.5 (its merge order), in a bundle whose
    # metadata.json says MONAI 1.0.1: the order the module's code slices in wins over the
    # version's guess (and the < 1.5 trace it replaced would have been read as < 1.5)
    from monai.networks.nets import SwinUNETR
    import export_swin_unetr  # noqa: E402
    export_swin_unetr._disable_instnorm_spatial_check()   # a 32^3 trace: 1-voxel norms at the bottom
    net = SwinUNETR(in_channels=1, out_channels=5, feature_size=12).eval()
    net.load_state_dict(torch.load(os.path.join(btcv, "models", "model.pt"), weights_only=True))
    traced = os.path.join(work, "traced_v15")
    shutil.rmtree(traced, ignore_errors=True)
    shutil.copytree(btcv, traced)
    os.remove(os.path.join(traced, "models", "model.pt"))
    with torch.no_grad():
        torch.jit.save(torch.jit.trace(net, torch.zeros(1, 1, 32, 32, 32)), os.path.join(traced, "models", "model.ts"))
    r, j = info(swinrun, traced)
    check(r.returncode == 0 and j and ">= 1.5" in j["downsample"] and "models/model.ts itself gives" in json.dumps(j)
          and j["cube"] == [64, 64, 64],
          f"a >= 1.5 trace in a MONAI 1.0.1 bundle: the trace's order, the recipe's roi ({r.stderr.strip()}"
          f"{j and j['downsample']})")
    # MONAI's own deployment export (monai.bundle ckpt_export: a trace with the bundle's metadata.json
    # and inference.json inside, extra/): read as the bundle, its recipe and channel names from the
    # module, its weights the module's
    from monai.bundle import ckpt_export
    src = os.path.join(work, "exportable")
    shutil.rmtree(src, ignore_errors=True)
    shutil.copytree(btcv, src)
    p = os.path.join(src, "configs", "inference.json")
    cfg = json.load(open(p))
    cfg["network_def"].pop("img_size", None)   # MONAI 1.6 builds the network to trace it: no img_size
    json.dump(cfg, open(p, "w"))
    shipped = os.path.join(work, "shipped.ts")
    ckpt_export(net_id="network_def", filepath=shipped, ckpt_file=os.path.join(src, "models", "model.pt"),
                meta_file=os.path.join(src, "configs", "metadata.json"), config_file=p, bundle_root=src,
                use_trace=True, input_shape=[1, 1, 64, 64, 64])
    r, j = info(swinrun, shipped)
    _, jf = info(swinrun, src)

    def recipe_lines(path):
        out = subprocess.run([swinrun, "info", path], capture_output=True, text=True).stdout
        return [line for line in out.splitlines() if line.startswith("  ")]
    check(r.returncode == 0 and j and jf and all(j[k] == jf[k] for k in ("recipe_warnings", "cube", "channel_names"))
          and recipe_lines(shipped) == recipe_lines(src) and len(recipe_lines(src)) >= 4
          and "inside the TorchScript module" in j["recipe"] and j["exporter"].startswith("TorchScript module"),
          f"ckpt_export's model.ts: the bundle's recipe and channel names from inside it ({r.stderr.strip()}"
          f"{j and j['recipe']})")

    # a torch.export archive as the bundle's weights (models/model.pt2)
    pt2 = os.path.join(work, "exported")
    shutil.rmtree(pt2, ignore_errors=True)
    shutil.copytree(btcv, pt2)
    os.remove(os.path.join(pt2, "models", "model.pt"))
    with torch.no_grad():
        torch.export.save(torch.export.export(net, (torch.zeros(1, 1, 32, 32, 32),)), os.path.join(pt2, "models", "model.pt2"))
    r, j = info(swinrun, pt2)
    check(r.returncode == 0 and j and j["exporter"].startswith("torch.export archive") and ">= 1.5" in j["downsample"],
          f"models/model.pt2: the bundle's weights, its graph's merge order ({r.stderr.strip()}{j and j['exporter']})")



def refused(swinrun, work):
    btcv = bundle(work, "btcv")
    cases = []

    def case(name, expect, make):
        d = os.path.join(work, "refused", name)
        shutil.rmtree(d, ignore_errors=True)
        make(d)
        cases.append((name, d, expect))

    case("no_inference", "configs/inference.json: cannot be opened",
         lambda d: (shutil.copytree(btcv, d), os.remove(os.path.join(d, "configs", "inference.json"))))
    case("yaml_as_json", "configs/inference.json: not valid JSON", lambda d: (shutil.copytree(btcv, d), open(
        os.path.join(d, "configs", "inference.json"), "w").write("network_def:\n  _target_: SwinUNETR\n")))

    def yaml_bundle(text):
        def make(d):
            shutil.copytree(btcv, d)
            os.remove(os.path.join(d, "configs", "inference.json"))
            open(os.path.join(d, "configs", "inference.yaml"), "w").write(text)
        return make
    case("yaml_tab", "configs/inference.yaml: not valid YAML (line 3, column 1: a tab",
         yaml_bundle("network_def:\n  _target_: SwinUNETR\n\tfeature_size: 12\n"))
    case("yaml_reference", "line 2, column 10: '@' cannot start a plain scalar: quote MONAI references",
         yaml_bundle("roi: [64, 64, 64]\ninferer: @roi\n"))
    case("yaml_list", "configs/inference.yaml: the configuration is not a YAML mapping", yaml_bundle("- a\n- b\n"))
    case("yaml_indented", "line 3, column 16: ':' after a value that spans lines",
         yaml_bundle("network_def:\n  _target_: SwinUNETR\n   feature_size: 12\n"))
    # hostile bytes quoted in the message: a backslash before a newline, a member name holding a newline
    case("bad_escape", "a backslash before 0x0A", lambda d: (shutil.copytree(btcv, d), open(
        os.path.join(d, "configs", "inference.json"), "w").write('{"roi": "a\\\n"}')))
    case("name_newline", 'expected \':\' after "x?y"', lambda d: (shutil.copytree(btcv, d), open(
        os.path.join(d, "configs", "inference.json"), "w").write('{"x\\ny" 1}')))
    case("unet", "not a SwinUNETR", lambda d: edit(btcv, d, lambda c: c["network_def"].update(_target_="UNet")))
    case("features", "feature_size does not match models/model.pt",
         lambda d: edit(btcv, d, lambda c: c["network_def"].update(feature_size=24)))
    case("classes", "out_channels does not match", lambda d: edit(btcv, d, lambda c: c["network_def"].update(out_channels=14)))
    case("norm", "norm_name does not match", lambda d: edit(btcv, d, lambda c: c["network_def"].update(norm_name="batch")))
    case("norm_syncbatch", "norm_name does not match",
         lambda d: edit(btcv, d, lambda c: c["network_def"].update(norm_name="SyncBatch")))
    case("norm_group", "norm_name does not match",
         lambda d: edit(btcv, d, lambda c: c["network_def"].update(norm_name=["group", {"num_groups": 3}])))
    case("norm_layer", "swinrun runs those", lambda d: edit(btcv, d, lambda c: c["network_def"].update(norm_name="layer")))
    case("roi", "roi_size is not 3 integers", lambda d: edit(btcv, d, lambda c: c.update(roi=[64, 64])))
    case("no_weights", "no models/model.pt", lambda d: (shutil.copytree(btcv, d), os.remove(os.path.join(d, "models", "model.pt"))))
    case("loop", "references more than 16 deep", lambda d: edit(btcv, d, lambda c: c.update(roi="@roi")))
    # the bundle as downloaded, still zipped: the file a user may pass first
    zipped = os.path.join(work, "refused", "zipped")
    shutil.make_archive(zipped, "zip", root_dir=work, base_dir="btcv")
    cases.append(("zipped", zipped + ".zip", "a MONAI bundle zipped (it holds 'btcv/configs/metadata.json'): unzip it"))
    for name, d, expect in cases:
        r = subprocess.run([swinrun, "info", d], capture_output=True, text=True)
        lines = r.stderr.strip().split("\n")
        check(r.returncode == 2 and len(lines) == 1 and expect in r.stderr,
              f"{name}: exit {r.returncode}, one line with '{expect}': {r.stderr.strip()}")


def fidelity(swinrun, work, config):
    py = sys.executable
    path = bundle(work, config)
    # finer: 40 slices of 1.25 mm span 19.5 slices of 2.5 mm (v2's), an extent that rounds to even;
    # coarser: 3 x 3 x 4 mm; each a few cubes of the bundle's roi
    cts = {"finer": (["--shape", "128", "128", "40", "--spacing", "0.9", "0.9", "1.25"]),
           "coarser": (["--shape", "48", "48", "30", "--spacing", "3.0", "3.0", "4.0"])}
    phantom = "make_ct_phantom.py"
    if config == "mri":  # four MRI sequences in one 4D file: 1 mm and 2.5 mm voxels
        cts = {"finer": ["--shape", "96", "104", "72"], "coarser": ["--shape", "40", "44", "30", "--spacing", "2.5",
                                                                     "2.5", "2.5"]}
        phantom = "make_mri_phantom.py"
    for name, args in cts.items():
        ct = os.path.join(work, f"{config}_{name}.nii.gz")
        if not os.path.exists(ct):
            subprocess.run([py, os.path.join(export, phantom), ct, "--seed", "3"] + args, check=True,
                           capture_output=True)
        out = os.path.join(work, f"{config}_{name}_swinrun.nii.gz")
        r = subprocess.run([swinrun, ct, out, "--model", path, "--threads", "2"], capture_output=True, text=True)
        check(r.returncode == 0, f"{config} {name}: swinrun exit 0 ({r.stderr.strip()[-300:]})")
        ref = os.path.join(work, f"{config}_{name}_monai.npy")
        subprocess.run([py, os.path.join(export, "bundle_reference.py"), path, ct, ref], check=True,
                       capture_output=True)
        if r.returncode:
            continue
        import nibabel as nib
        a = np.asarray(nib.load(out).dataobj)
        b = np.load(ref)
        same = float((a == b).mean()) if a.shape == b.shape else 0.0
        present = len(np.unique(b))
        if config == "sigmoid":
            check(present == 2, f"{config} {name}: MONAI's labels are 0 and 1 ({np.unique(b)})")
        if config == "mri":  # a 4D file of masks, each present and absent somewhere
            sums = [int(b[..., c].sum()) for c in range(b.shape[-1])] if b.ndim == 4 else []
            check(len(sums) == 3 and all(0 < s < b[..., 0].size for s in sums),
                  f"{config} {name}: MONAI's three masks, none empty or full ({sums})")
        check(a.shape == b.shape and same >= 0.999,
              f"{config} {name}: {same * 100:.3f} % of {a.size} labels identical to MONAI's run ({present} labels present)")


def main():
    mode, swinrun, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    if mode == "recipe":
        recipe(swinrun, work)
    elif mode == "refused":
        refused(swinrun, work)
    else:
        fidelity(swinrun, work, sys.argv[4])
    if fails:
        print(f"{len(fails)} failed")
        sys.exit(1)


if __name__ == "__main__":
    main()
