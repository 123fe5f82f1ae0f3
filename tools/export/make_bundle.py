#!/usr/bin/env python3
"""MONAI bundles with random weights, laid out as the model zoo publishes them.

    make_bundle.py OUTDIR CONFIG [--seed S]

OUTDIR gets configs/inference.json (or .yaml), configs/metadata.json, models/model.pt (torch.save of the
state dict, as the zoo's CheckpointLoader reads it), large_files.yml (the weights' md5) and
LICENSE. CONFIGs:

  btcv   the BTCV bundle's inference.json (ITKReader, the deprecated img_size, Invertd with
         nearest_interp false, an ignite evaluator, amp) at feature size 12, 5 classes, roi 64^3,
         monai_version 1.0.1 (so the weights run in the < 1.5 patch-merging order)
  v2     use_v2, affine instance norms, mergingv2, gaussian blending, overlap 0.25, a
         non-cubic roi (64, 64, 32), spacing 2 x 2 x 2.5 mm, HU [-100, 200], Invertd by nearest
         (MONAI's default), references ("@roi") between keys, monai_version 1.6.1
  sigmoid  one output channel: Activationsd(sigmoid) -> Invertd with nearest_interp false ->
         AsDiscreted(threshold=0.5), roi (64, 64, 32), monai_version 1.5.0
  mri    BraTS-style: four input channels (MRI sequences, a 4D NIfTI), NormalizeIntensityd(
         nonzero=True, channel_wise=True) in place of the intensity range, 2 mm spacing, three
         overlapping regions (Activationsd(sigmoid) -> Invertd -> AsDiscreted(threshold=0.5) on
         3 channels), roi (64, 64, 32), monai_version 1.5.0; its inference config written as
         configs/inference.yaml (yaml.safe_dump), as bundles written in YAML ship it
"""
import argparse
import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_swin_unetr as ex  # noqa: E402

CONFIGS = {
    "btcv": dict(model=dict(feature_size=12, out_channels=5), merge_order="pre15", monai="1.0.1", roi=[64, 64, 64],
                 overlap=0.5, mode=None, pixdim=[1.5, 1.5, 2.0], hu=[-175, 250], nearest=False),
    "v2": dict(model=dict(feature_size=12, out_channels=4, use_v2=True, instnorm_affine=True, downsample="mergingv2"),
               merge_order="v2", monai="1.6.1", roi=[64, 64, 32], overlap=0.25, mode="gaussian",
               pixdim=[2.0, 2.0, 2.5], hu=[-100, 200], nearest=None),
    "sigmoid": dict(model=dict(feature_size=12, out_channels=1), merge_order="v15", monai="1.5.0", roi=[64, 64, 32],
                    overlap=0.5, mode=None, pixdim=[1.5, 1.5, 2.0], hu=[-175, 250], nearest=False, sigmoid=True),
    "mri": dict(model=dict(feature_size=12, in_channels=4, out_channels=3), merge_order="v15", monai="1.5.0",
                roi=[64, 64, 32], overlap=0.5, mode=None, pixdim=[2.0, 2.0, 2.0], hu=None, nearest=True,
                zscore_nonzero=True, sigmoid=True, yaml=True),
}
BASE = dict(feature_size=12, in_channels=1, out_channels=3, depths=[2, 2, 2, 2], heads=[3, 6, 12, 24], window=[7, 7, 7],
            use_v2=False, normalize=True, downsample="merging", merge_order="v15", qkv_bias=True, patch_norm=False,
            instnorm_affine=False, norm="instance", mlp_ratio=4.0)


def network_def(m):
    d = {"_target_": "SwinUNETR", "spatial_dims": 3, "in_channels": m["in_channels"],
         "out_channels": m["out_channels"], "feature_size": m["feature_size"], "use_checkpoint": False}
    if m["use_v2"]:
        d["use_v2"] = True
    if m["instnorm_affine"]:
        d["norm_name"] = ["instance", {"affine": True}]
    if m["downsample"] != "merging":
        d["downsample"] = m["downsample"]
    return d


def inference_json(name, c, m):
    pre = [{"_target_": "LoadImaged", "keys": "image", "reader": "ITKReader"},
           {"_target_": "EnsureChannelFirstd", "keys": "image"},
           {"_target_": "Orientationd", "keys": "image", "axcodes": "RAS"},
           {"_target_": "Spacingd", "keys": "image", "pixdim": c["pixdim"], "mode": "bilinear"},
           {"_target_": "NormalizeIntensityd", "keys": "image", "nonzero": True, "channel_wise": True}
           if c.get("zscore_nonzero") else
           {"_target_": "ScaleIntensityRanged", "keys": "image", "a_min": c["hu"][0], "a_max": c["hu"][1],
            "b_min": 0.0, "b_max": 1.0, "clip": True},
           {"_target_": "EnsureTyped", "keys": "image"}]
    inferer = {"_target_": "SlidingWindowInferer", "roi_size": "@roi", "sw_batch_size": 4, "overlap": c["overlap"]}
    if c["mode"]:
        inferer["mode"] = c["mode"]
    invert = {"_target_": "Invertd", "keys": "pred", "transform": "@preprocessing", "orig_keys": "image",
              "to_tensor": True}
    if c["nearest"] is not None:
        invert["nearest_interp"] = c["nearest"]
    if c.get("sigmoid"):
        act, discrete = {"sigmoid": True}, {"threshold": 0.5}
    else:
        act, discrete = {"softmax": True}, {"argmax": True}
    post = [dict({"_target_": "Activationsd", "keys": "pred"}, **act), invert,
            dict({"_target_": "AsDiscreted", "keys": "pred"}, **discrete),
            {"_target_": "SaveImaged", "keys": "pred", "output_dir": "@output_dir"}]
    net = network_def(m)
    if name == "btcv":
        net = dict(net, img_size=c["roi"][0])
    return {
        "imports": ["$import glob", "$import os"],
        "bundle_root": ".",
        "output_dir": "$@bundle_root + '/eval'",
        "dataset_dir": "/workspace/data",
        "datalist": "$list(sorted(glob.glob(@dataset_dir + '/*.nii.gz')))",
        "device": "$torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')",
        "roi": c["roi"],
        "network_def": net,
        "network": "$@network_def.to(@device)",
        "preprocessing": {"_target_": "Compose", "transforms": pre},
        "dataset": {"_target_": "Dataset", "data": "$[{'image': i} for i in @datalist]", "transform": "@preprocessing"},
        "dataloader": {"_target_": "DataLoader", "dataset": "@dataset", "batch_size": 1, "shuffle": False,
                       "num_workers": 4},
        "inferer": inferer,
        "postprocessing": {"_target_": "Compose", "transforms": post},
        "handlers": [{"_target_": "CheckpointLoader", "load_path": "$@bundle_root + '/models/model.pt'",
                      "load_dict": {"model": "@network"}}, {"_target_": "StatsHandler", "iteration_log": False}],
        "evaluator": {"_target_": "SupervisedEvaluator", "device": "@device", "val_data_loader": "@dataloader",
                      "network": "@network", "inferer": "@inferer", "postprocessing": "@postprocessing",
                      "val_handlers": "@handlers", "amp": True},
        "initialize": ["$monai.utils.set_determinism(seed=123)"],
        "run": ["$@evaluator.run()"],
    }


def make(out, name, seed=0):
    import torch
    c = CONFIGS[name]
    m = dict(BASE, **c["model"])
    m["merge_order"] = c["merge_order"] if c["merge_order"] != "v2" else "v15"
    model = ex.build_model(m)
    ex.randomize(model, seed=seed)
    os.makedirs(os.path.join(out, "configs"), exist_ok=True)
    os.makedirs(os.path.join(out, "models"), exist_ok=True)
    weights = os.path.join(out, "models", "model.pt")
    torch.save(model.state_dict(), weights)
    if c.get("yaml"):
        import yaml
        with open(os.path.join(out, "configs", "inference.yaml"), "w") as f:
            f.write(f"# the inference config of the {name} test bundle\n")
            yaml.safe_dump(inference_json(name, c, m), f, sort_keys=False)
    else:
        with open(os.path.join(out, "configs", "inference.json"), "w") as f:
            json.dump(inference_json(name, c, m), f, indent=4)
    meta = {"version": "0.1.0", "name": f"test_{name}_bundle", "monai_version": c["monai"],
            "pytorch_version": torch.__version__.split("+")[0], "task": "test bundle (random weights)",
            "network_data_format": {"inputs": {"image": {"num_channels": m["in_channels"], "spatial_shape": c["roi"]}},
                                    "outputs": {"pred": {"num_channels": m["out_channels"]}}}}
    with open(os.path.join(out, "configs", "metadata.json"), "w") as f:
        json.dump(meta, f, indent=4)
    md5 = hashlib.md5(open(weights, "rb").read()).hexdigest()
    with open(os.path.join(out, "large_files.yml"), "w") as f:
        f.write(f'large_files:\n  - path: "models/model.pt"\n    url: "http://127.0.0.1/model.pt"\n'
                f'    hash_val: "{md5}"\n    hash_type: "md5"\n')
    with open(os.path.join(out, "LICENSE"), "w") as f:
        f.write("Test bundle with random weights, made by tools/export/make_bundle.py.\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("config", choices=sorted(CONFIGS))
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    make(a.out, a.config, a.seed)


if __name__ == "__main__":
    main()
