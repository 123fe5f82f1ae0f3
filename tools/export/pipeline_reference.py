#!/usr/bin/env python3
"""The reference for `swinrun segment`: MONAI's own pipeline with ONNX Runtime as the predictor.

    LoadImaged -> EnsureChannelFirstd -> Orientationd("RAS") -> Spacingd(pixdim, bilinear)
    -> ScaleIntensityRanged(lo, hi -> 0, 1, clip) (or NormalizeIntensityd(channel_wise=True),
    nonzero or not, for a model of several input channels: the image a 4D file or a list of
    files, one per channel) -> sliding_window_inference(roi, overlap,
    mode) with onnxruntime (or a test's fake model) -> AsDiscreted(argmax) (a one-channel
    model: Activationsd(sigmoid) -> AsDiscreted(threshold=0.5)) -> Invertd (nearest) back to
    the input's grid.

    pipeline_reference.py CT.nii.gz LABELS.npy --model M.onnx [--roi D H W] [--overlap 0.5]
        [--blend constant|gaussian] [--spacing 1.5 1.5 2] [--window -175 250] [--no-resample]
        [--prep PREP.npy] [--fake CHANNELS]

LABELS.npy: uint8/uint16 (nx, ny, nz) on the input's grid, nibabel's (i, j, k) order.
PREP.npy: the preprocessed volume (float32, RAS grid), to compare preprocessing alone.
--fake N replaces the ONNX model with tests/pipeline/fake_model.py (N output channels)."""
import argparse
import os
import sys

import numpy as np
import torch


def predictor_from_onnx(path, threads):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    inp = sess.get_inputs()[0]
    shape = inp.shape

    def predict(x):
        return torch.from_numpy(sess.run(None, {inp.name: x.numpy().astype(np.float32)})[0])

    cube = tuple(int(s) if isinstance(s, int) else 0 for s in shape[2:])
    return predict, cube, shape[1]


def preprocessing(spacing=(1.5, 1.5, 2.0), window=(-175.0, 250.0), resample=True, normalize="range"):
    """MONAI's transforms of the recipe: load, channel first, RAS, Spacing (bilinear), the intensity
    range (normalize "range") or each channel's z-score ("zscore", "zscore-nonzero")."""
    from monai.transforms import (Compose, EnsureChannelFirstd, LoadImaged, NormalizeIntensityd, Orientationd,
                                  ScaleIntensityRanged, Spacingd)

    pre = [LoadImaged("image", image_only=False), EnsureChannelFirstd("image"),
           Orientationd("image", axcodes="RAS", labels=(("L", "R"), ("P", "A"), ("I", "S")))]
    if resample:
        pre.append(Spacingd("image", pixdim=list(spacing), mode="bilinear"))
    if normalize == "range":
        pre.append(ScaleIntensityRanged("image", a_min=window[0], a_max=window[1], b_min=0.0, b_max=1.0, clip=True))
    else:
        pre.append(NormalizeIntensityd("image", nonzero=normalize == "zscore-nonzero", channel_wise=True))
    return Compose(pre)


def reference(image, predict, roi, overlap=0.5, blend="constant", spacing=(1.5, 1.5, 2.0), window=(-175.0, 250.0),
              resample=True, prep_out=None, details=None, normalize="range", masks=False):
    """MONAI's pipeline on one NIfTI file; returns the labels on its grid (uint8/uint16, nibabel order)
    and the preprocessed shape; masks: each channel's sigmoid thresholded at 0.5 on its own, the
    labels then (nx, ny, nz, C) 0/1 (a multi-label model). details (a dict), when given, receives the averaged logits on
    the preprocessed grid ("logits", (C, D, H, W)) and that grid's affine ("affine"); with
    details["want_probabilities"] also the softmax probabilities on the input grid
    ("probabilities", (C, nx, ny, nz), Invertd with bilinear interpolation)."""
    from monai.inferers import sliding_window_inference
    from monai.transforms import Activationsd, AsDiscreted, Compose, Invertd

    pre = preprocessing(spacing, window, resample, normalize)
    d = pre({"image": image})
    img = d["image"]
    if prep_out:  # one channel: (D, H, W); several: (C, D, H, W)
        np.save(prep_out, np.asarray((img[0] if img.shape[0] == 1 else img).numpy(), np.float32))
    with torch.no_grad():
        logits = sliding_window_inference(img[None].float(), roi, 1, predict, overlap=overlap, mode=blend)
    if details is not None:
        details["logits"] = np.asarray(logits[0].numpy())
        details["affine"] = np.asarray(img.affine, np.float64)
    d["pred"] = logits[0]
    sigmoid = logits.shape[1] == 1 or masks  # a one-channel model: sigmoid, then AsDiscrete(threshold=0.5)
    keys, nearest = ["pred"], [True]
    if details is not None and details.get("want_probabilities"):
        # back to the input grid with the forward mode (bilinear)
        d["prob"] = torch.sigmoid(logits[0]) if sigmoid else torch.softmax(logits[0], 0)
        keys, nearest = ["pred", "prob"], [True, False]
    discrete = ([Activationsd("pred", sigmoid=True), AsDiscreted("pred", threshold=0.5)] if sigmoid
                else [AsDiscreted("pred", argmax=True)])
    post = Compose(discrete + [Invertd(keys, transform=pre, orig_keys="image", nearest_interp=nearest)])
    d = post(d)
    if "prob" in keys:
        details["probabilities"] = np.asarray(d["prob"].numpy())  # (C, nx, ny, nz)
    if masks:
        return np.moveaxis(np.asarray(d["pred"].numpy()), 0, -1).round().astype(np.uint8), tuple(img.shape[1:])
    lab = np.asarray(d["pred"][0].numpy())
    return lab.round().astype(np.uint8 if logits.shape[1] <= 256 else np.uint16), tuple(img.shape[1:])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("image")
    ap.add_argument("labels")
    ap.add_argument("--model")
    ap.add_argument("--fake", type=int, help="use the tests' fake model with this many channels")
    ap.add_argument("--roi", type=int, nargs=3)
    ap.add_argument("--overlap", type=float, default=0.5)
    ap.add_argument("--blend", default="constant", choices=["constant", "gaussian"])
    ap.add_argument("--spacing", type=float, nargs=3, default=[1.5, 1.5, 2.0])
    ap.add_argument("--window", type=float, nargs=2, default=[-175.0, 250.0])
    ap.add_argument("--no-resample", action="store_true")
    ap.add_argument("--prep", help="also save the preprocessed volume here")
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args(argv)
    if a.fake:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "pipeline"))
        from fake_model import make_fake

        predict, cube = make_fake(a.fake), (0, 0, 0)
    else:
        predict, cube, _ = predictor_from_onnx(a.model, a.threads)
    roi = tuple(a.roi) if a.roi else cube
    if not all(roi):
        sys.exit("pipeline_reference.py: give --roi for a dynamic export")
    lab, prep_shape = reference(a.image, predict, roi, a.overlap, a.blend, a.spacing, a.window, not a.no_resample,
                                a.prep)
    np.save(a.labels, lab)
    print(f"{a.image}: preprocessed {prep_shape}, labels {lab.shape}", file=sys.stderr)


if __name__ == "__main__":
    main()
