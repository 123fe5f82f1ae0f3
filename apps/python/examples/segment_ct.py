"""Segment a CT with swinrun: python segment_ct.py CT.nii.gz LABELS.nii.gz MODEL"""
import sys

import nibabel as nib
import numpy as np

import swinrun

ct, out, model_path = sys.argv[1:4]
model = swinrun.Model(model_path)  # an ONNX export, a PyTorch checkpoint or a MONAI bundle
img = nib.load(ct)
labels, report = model.segment(img.dataobj, img.affine, progress=True)
nib.save(nib.Nifti1Image(labels, img.affine, img.header), out)
print(f"{report['cubes']} cubes on {report['plan']['backend']} ({report['plan']['backend_reason']})")
for s in report["statistics"]:
    print(f"label {s['label']:3d}: {s['volume_ml']:8.1f} ml, mean {s['hu_mean']:7.1f} HU")
print(f"labels present: {np.unique(labels[labels > 0]).tolist()}")
