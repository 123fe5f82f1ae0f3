"""Segmentation mode against a real tritonserver: the labels Triton returns for a CT volume
(VOLUME + AFFINE) equal those of `swinrun CT.nii.gz OUT.nii.gz` on the same volume, for an
int16 scanner-like phantom (LPS, anisotropic spacing) and the same voxels as float32; and a
model repository entry whose version folder is a MONAI bundle (tools/export/make_bundle.py v2:
its own spacing, intensity range, blending, overlap and cube) equals `--model BUNDLE_DIR`; and a
model of four input channels (the test matrix's f24_c64_cfg_ts) served with VOLUME (4, nz, ny, nx),
z-scores over the nonzero voxels and a sigmoid mask per output channel returns as bits the masks
`swinrun MRI.nii.gz OUT.nii.gz --intensity-norm zscore-nonzero --multi-label` writes.

    test_segment.py BACKEND_SO SWINRUN MAIN_PYTHON TEST_DATA WORK
"""
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import REPO_ROOT, Server, check, infer_segment, segment_config, test_args, write_model  # noqa: E402

backend_so, swinrun, main_py, data, work, repo = test_args(sys.argv)
case_dir = os.path.join(data, "f12_c32_default")
model = os.path.join(case_dir, "model.onnx")

# the phantom, the CLI's labels, and both as .npy in NIfTI's voxel order (nz, ny, nx) through
# nibabel in the main venv (this venv has tritonclient, not nibabel)
ct, out = os.path.join(work, "ct.nii.gz"), os.path.join(work, "labels.nii.gz")
subprocess.run([main_py, os.path.join(REPO_ROOT, "tools", "export", "make_ct_phantom.py"), ct, "--shape", "56", "48", "20",
                "--spacing", "1.3", "1.1", "2.5"], check=True, stdout=subprocess.DEVNULL, timeout=120)
subprocess.run([swinrun, ct, out, "--model", model, "--backend", "cpu", "--threads", "1"], check=True,
               stdout=subprocess.DEVNULL, timeout=300)
subprocess.run([main_py, "-c", """
import sys, numpy as np, nibabel as nib
ct, out, work = sys.argv[1:4]
img = nib.load(ct)
np.save(work + '/volume.npy', np.ascontiguousarray(np.asarray(img.dataobj).T))
np.save(work + '/affine.npy', img.affine)
np.save(work + '/cli_labels.npy', np.ascontiguousarray(np.asarray(nib.load(out).dataobj).T))
""", ct, out, work], check=True, timeout=120)
volume = np.load(os.path.join(work, "volume.npy"))
affine = np.load(os.path.join(work, "affine.npy"))
cli = np.load(os.path.join(work, "cli_labels.npy"))
check(volume.dtype == np.int16 and volume.shape == (20, 48, 56), "phantom int16 (nz, ny, nx) = %s" % (volume.shape,))
check(len(np.unique(cli)) > 1, "the CLI's labels hold %d classes" % len(np.unique(cli)))

# the bundle entry: repo/seg_bundle/1/ is the bundle itself (no model.onnx, no cube parameter)
bundle = os.path.join(repo, "seg_bundle", "1")
if not os.path.exists(os.path.join(bundle, "models", "model.pt")):
    subprocess.run([main_py, os.path.join(REPO_ROOT, "tools", "export", "make_bundle.py"), bundle, "v2"], check=True,
                   stdout=subprocess.DEVNULL, timeout=300)
with open(os.path.join(repo, "seg_bundle", "config.pbtxt"), "w") as fh:
    fh.write('name: "seg_bundle"\nbackend: "swinrun"\n' + segment_config("TYPE_INT16"))
out_bundle = os.path.join(work, "labels_bundle.nii.gz")
subprocess.run([swinrun, ct, out_bundle, "--model", bundle, "--backend", "cpu", "--threads", "1"], check=True,
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
subprocess.run([main_py, "-c", """
import sys, numpy as np, nibabel as nib
np.save(sys.argv[2], np.ascontiguousarray(np.asarray(nib.load(sys.argv[1]).dataobj).T))
""", out_bundle, os.path.join(work, "cli_bundle_labels.npy")], check=True, timeout=120)
cli_bundle = np.load(os.path.join(work, "cli_bundle_labels.npy"))
check(not np.array_equal(cli_bundle, cli), "the bundle's recipe and weights give other labels than the ONNX model's")

# the MRI model: a 4D phantom (x, y, z, 4), the CLI's masks (x, y, z, 3) as bits c on (nz, ny, nx)
mri_case = os.path.join(data, "f24_c64_cfg_ts")
mri, mri_out = os.path.join(work, "mri.nii.gz"), os.path.join(work, "mri_masks.nii.gz")
subprocess.run([main_py, os.path.join(REPO_ROOT, "tools", "export", "make_mri_phantom.py"), mri, "--shape", "36", "30", "26",
                "--seed", "5"], check=True, stdout=subprocess.DEVNULL, timeout=120)
subprocess.run([swinrun, mri, mri_out, "--model", os.path.join(mri_case, "model.onnx"), "--backend", "cpu", "--threads", "1",
                "--intensity-norm", "zscore-nonzero", "--multi-label"], check=True, stdout=subprocess.DEVNULL, timeout=300)
subprocess.run([main_py, "-c", """
import sys, numpy as np, nibabel as nib
mri, out, work = sys.argv[1:4]
img = nib.load(mri)
np.save(work + '/mri_volume.npy', np.ascontiguousarray(np.asarray(img.dataobj, dtype=np.float32).T))
np.save(work + '/mri_affine.npy', img.affine)
m = np.asarray(nib.load(out).dataobj).astype(np.uint16)
np.save(work + '/mri_bits.npy', np.ascontiguousarray(sum(m[..., c] << c for c in range(m.shape[3])).T))
""", mri, mri_out, work], check=True, timeout=120)
mri_volume = np.load(os.path.join(work, "mri_volume.npy"))
mri_bits = np.load(os.path.join(work, "mri_bits.npy"))
check(mri_volume.shape == (4, 26, 30, 36), "MRI phantom (4, nz, ny, nx) = %s" % (mri_volume.shape,))
check(len(np.unique(mri_bits)) > 1, "the CLI's masks hold %d combinations" % len(np.unique(mri_bits)))
write_model(repo, "seg_mri", mri_case, segment_config(
    "TYPE_FP32", channels=4, extra=',\n{ key: "intensity_norm", value: { string_value: "zscore-nonzero" } },'
    '\n{ key: "multi_label", value: { string_value: "true" } }'))

write_model(repo, "seg_i16", case_dir, segment_config("TYPE_INT16"))
write_model(repo, "seg_f32", case_dir, segment_config("TYPE_FP32"))
with Server(backend_so, repo, work) as s:
    client = s.http()
    got = infer_segment(client, "seg_i16", volume, affine)
    check(got.dtype == np.uint16 and got.shape == volume.shape, "seg_i16: uint16 labels on the input grid")
    check(np.array_equal(got, cli), "seg_i16: labels equal swinrun CT.nii.gz OUT.nii.gz (%d voxels)" % got.size)
    got = infer_segment(client, "seg_f32", volume.astype(np.float32), affine)
    check(np.array_equal(got, cli), "seg_f32: the same voxels as float32, the same labels")
    got = infer_segment(client, "seg_bundle", volume, affine)
    check(np.array_equal(got, cli_bundle), "seg_bundle: a bundle as the version folder, labels equal swinrun "
          "--model BUNDLE_DIR (its recipe, not the defaults)")
    got = infer_segment(client, "seg_mri", mri_volume, np.load(os.path.join(work, "mri_affine.npy")))
    check(got.shape == mri_bits.shape and np.array_equal(got, mri_bits),
          "seg_mri: four channels in, bit c where channel c's sigmoid is >= 0.5, as the CLI's masks")
    stats = client.get_inference_statistics("seg_i16")["model_stats"][0]
    check(int(stats["inference_stats"]["success"]["count"]) == 1, "seg_i16 statistics: 1 success")
print("PASS")
