"""MONAI's pipeline with the linear way back, as the BTCV bundle's inference.json post-processes:

    LoadImaged -> EnsureChannelFirstd -> Orientationd("RAS") -> Spacingd(pixdim, bilinear)
    -> ScaleIntensityRanged(lo, hi -> 0, 1, clip) -> sliding_window_inference
    -> Activationsd(softmax) -> Invertd(nearest_interp=False) -> AsDiscreted(argmax)
    (a one-channel model: Activationsd(sigmoid) ... AsDiscreted(threshold=0.5))

The reference for swinrun's --invert linear (SWIN_INVERT_LINEAR)."""
import numpy as np
import torch


def reference_linear(image, predict, roi, overlap=0.5, blend="constant", spacing=(1.5, 1.5, 2.0),
                     window=(-175.0, 250.0), resample=True, normalize="range", masks=False):
    """Labels on the input grid (uint8/uint16, nibabel's (i, j, k) order), the preprocessed
    shape, and the probabilities on the input grid (C, nx, ny, nz) whose argmax they are;
    masks: each channel's sigmoid thresholded on its own, the labels (nx, ny, nz, C) 0/1."""
    from monai.inferers import sliding_window_inference
    from monai.transforms import Activationsd, AsDiscreted, Compose, Invertd
    from pipeline_reference import preprocessing

    pre = preprocessing(spacing, window, resample, normalize)
    d = pre({"image": image})
    img = d["image"]
    with torch.no_grad():
        logits = sliding_window_inference(img[None].float(), roi, 1, predict, overlap=overlap, mode=blend)
    d["pred"] = logits[0]
    sigmoid = logits.shape[1] == 1 or masks  # a one-channel model: sigmoid, then AsDiscrete(threshold=0.5)
    d = Compose([Activationsd("pred", sigmoid=sigmoid, softmax=not sigmoid),
                 Invertd("pred", transform=pre, orig_keys="image", nearest_interp=False)])(d)
    probs = np.asarray(d["pred"].numpy())
    d = AsDiscreted("pred", threshold=0.5)(d) if sigmoid else AsDiscreted("pred", argmax=True)(d)
    if masks:
        return np.moveaxis(np.asarray(d["pred"].numpy()), 0, -1).round().astype(np.uint8), tuple(img.shape[1:]), probs
    lab = np.asarray(d["pred"][0].numpy())
    return lab.round().astype(np.uint8 if logits.shape[1] <= 256 else np.uint16), tuple(img.shape[1:]), probs
