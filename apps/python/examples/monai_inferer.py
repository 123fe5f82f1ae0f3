"""MONAI's SlidingWindowInferer with swinrun as the network, inside MONAI's own transforms:

    python monai_inferer.py CT.nii.gz LABELS.nii.gz MODEL [CUBE]

Everything MONAI does stays MONAI (loading, orientation, spacing, intensity range, windows,
blending); swinrun runs each batch of cubes. The labels are written on the resampled grid.
CUBE: the roi_size side (default: the model's export cube, else 96).
"""
import sys

import nibabel as nib
import numpy as np
import torch
from monai.inferers import SlidingWindowInferer
from monai.transforms import Compose, EnsureChannelFirstd, LoadImaged, Orientationd, ScaleIntensityRanged, Spacingd

import swinrun

ct, out, model_path = sys.argv[1:4]
model = swinrun.Model(model_path)
cube = int(sys.argv[4]) if len(sys.argv) > 4 else (model.cube or (96,))[0]
pre = Compose([
    LoadImaged("image"), EnsureChannelFirstd("image"), Orientationd("image", axcodes="RAS"),
    Spacingd("image", pixdim=(1.5, 1.5, 2.0), mode="bilinear"),
    ScaleIntensityRanged("image", a_min=-175, a_max=250, b_min=0.0, b_max=1.0, clip=True),
])
image = pre({"image": ct})["image"]  # (1, D, H, W) MetaTensor
inferer = SlidingWindowInferer(roi_size=(cube,) * 3, sw_batch_size=4, overlap=0.5)
with torch.no_grad():
    logits = inferer(image[None], model)  # model(x): (N, C, D, H, W) tensors in and out
labels = logits.argmax(1)[0].numpy().astype(np.uint8)
nib.save(nib.Nifti1Image(labels, np.asarray(image.affine)), out)
print(f"{labels.shape} voxels at 1.5 x 1.5 x 2 mm, {int(logits.shape[1])} classes -> {out}")
