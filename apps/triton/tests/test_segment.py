"""Segmentation mode against a real tritonserver: the labels Triton returns for a CT volume
(VOLUME + AFFINE) equal those of `swinrun CT.nii.gz OUT.nii.gz` on the same volume, for an
int16 scanner-like phantom (LPS, anisotropic spacing) and the same voxels as float32; and a
model repository entry whose version folder is a MONAI bundle (tools/export/make_bundle.py v2:
its own spacing, intensity range, blending, overlap and cube) equals `--model BUNDLE_DIR`.

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
    stats = client.get_inference_statistics("seg_i16")["model_stats"][0]
    check(int(stats["inference_stats"]["success"]["count"]) == 1, "seg_i16 statistics: 1 success")
print("PASS")
