#!/usr/bin/env python3
"""MONAI's own run of a bundle: the transforms, inferer and post-processing built by
monai.bundle.ConfigParser from the bundle's configs/inference.json (or .yaml, .yml), on one NIfTI CT.

    bundle_reference.py BUNDLE_DIR CT.nii[.gz] OUT.npy

Writes the label map on the CT's grid (nibabel's array order; a multi-label bundle's masks as
(x, y, z, channel)). What MONAI 1.6 itself needs to
run a zoo bundle here, and nothing else, is changed:
  - network_def's img_size is dropped (MONAI >= 1.5 refuses the deprecated argument);
  - LoadImaged's reader becomes NibabelReader (ITK is not installed; both read NIfTI);
  - no ignite evaluator: preprocessing, the inferer and the post-processing (less SaveImaged)
    are called directly, as the evaluator calls them (the image batched, "pred" unbatched);
  - the weights are loaded with load_state_dict as the bundle's CheckpointLoader does;
  - a bundle whose metadata.json names MONAI < 1.5 has its PatchMerging modules run in that
    version's sub-grid order, the order the weights were trained in (MONAI 1.6 would run them
    in its own order; swinrun follows metadata.json, docs/bundles.md).
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def inference_config(bundle):
    """configs/inference.json, else .yaml, else .yml (the order swinrun looks in)."""
    for ext in ("json", "yaml", "yml"):
        path = os.path.join(bundle, "configs", "inference." + ext)
        if os.path.exists(path):
            return path
    raise FileNotFoundError(f"{bundle}: no configs/inference.json, .yaml or .yml")


def bundle_parser(bundle):
    """monai.bundle.ConfigParser over the bundle's inference config with the adaptations above."""
    from monai.bundle import ConfigParser
    parser = ConfigParser()
    parser.read_config(inference_config(bundle))
    parser["bundle_root"] = bundle
    net_def = parser["network_def"]
    net_def.pop("img_size", None)
    parser["network_def"] = net_def
    for i, t in enumerate(parser["preprocessing"]["transforms"]):
        if t["_target_"].endswith("LoadImaged"):
            parser[f"preprocessing::transforms::{i}::reader"] = "NibabelReader"
    post = [t for t in parser["postprocessing"]["transforms"] if not t["_target_"].endswith("SaveImaged")]
    parser["postprocessing::transforms"] = post
    return parser


def bundle_network(bundle, parser=None):
    """The bundle's network in eval mode with its weights, in the merge order it was trained in."""
    import torch

    import export_swin_unetr as ex
    parser = parser or bundle_parser(bundle)
    meta = json.load(open(os.path.join(bundle, "configs", "metadata.json")))
    ex._disable_instnorm_spatial_check()
    net = parser.get_parsed_content("network_def")
    version = tuple(int(x) for x in meta.get("monai_version", "1.6").split(".")[:2])
    if version < (1, 5) and parser["network_def"].get("downsample", "merging") == "merging":
        ex.apply_pre15(net)
    sd = torch.load(os.path.join(bundle, "models", "model.pt"), map_location="cpu", weights_only=True)
    net.load_state_dict(sd)
    net.eval()
    return net


def main():
    import torch

    bundle, ct, out = sys.argv[1:4]
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
    parser = bundle_parser(bundle)
    net = bundle_network(bundle, parser)
    pre = parser.get_parsed_content("preprocessing")
    inferer = parser.get_parsed_content("inferer")
    postprocessing = parser.get_parsed_content("postprocessing")
    d = pre({"image": ct})
    with torch.no_grad():
        d["pred"] = inferer(d["image"][None].float(), net)[0]
    d = postprocessing(d)
    pred = np.asarray(d["pred"].numpy()).round()
    lab = pred[0] if pred.shape[0] == 1 else np.moveaxis(pred, 0, -1)  # several: one mask per channel
    np.save(out, lab.astype(np.uint16))


if __name__ == "__main__":
    main()
