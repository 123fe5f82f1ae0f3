"""Memory: a segmentation from Python costs what the CLI's costs. Each side runs in its own process.
Python: the peak RSS (VmHWM) during Model() + segment(), less the RSS just before (the
interpreter, numpy, nibabel and the input array it holds), less the label arrays it makes (the
uint16 labels the library writes and the uint8 copy it returns). The CLI: its peak RSS, less that
of the same executable printing its help (its own baseline), less the arrays it holds (the int16
volume it reads, the uint16 labels). The two must agree within a few MiB."""
import json
import os
import subprocess
import sys

import nibabel as nib
import numpy as np
import pytest

TOLERANCE_MIB = 4

CHILD = r"""
import json, sys
import nibabel as nib, numpy as np
import swinrun

def status(key):
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) * 1024 for l in f if l.startswith(key))

img = nib.load(sys.argv[1])
vol, aff = np.asanyarray(img.dataobj), img.affine
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # VmHWM = VmRSS from here
base = status("VmRSS:")
labels, report = swinrun.Model(sys.argv[2], threads=2).segment(vol, aff, overlap=0.0)
print(json.dumps({"base": base, "peak": status("VmHWM:"), "labels": labels.nbytes, "voxels": vol.size}))
"""


def _maxrss(cmd, tmp_path):
    """Peak RSS of cmd in bytes, measured by GNU time: a child forked from this (large) process
    would count the pages it shared with it before exec."""
    out = str(tmp_path / "time.txt")
    subprocess.run(["/usr/bin/time", "-o", out, "-f", "%M"] + cmd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    with open(out) as f:
        return int(f.read().split()[-1]) * 1024


@pytest.fixture(scope="module")
def big_ct(tmp_path_factory):
    rng = np.random.default_rng(3)
    vol = rng.normal(0, 150, (160, 160, 64)).astype(np.int16)
    path = str(tmp_path_factory.mktemp("mem") / "ct.nii.gz")
    aff = np.diag([1.5, 1.5, 2.0, 1.0])
    img = nib.Nifti1Image(vol, aff)
    img.set_sform(aff, 1)
    img.set_qform(aff, 1)
    nib.save(img, path)
    return path


def test_python_costs_what_the_cli_costs(cli, onnx_model, big_ct, tmp_path):
    r = subprocess.run([sys.executable, "-c", CHILD, big_ct, onnx_model], check=True, capture_output=True,
                       text=True, env=dict(os.environ))
    py = json.loads(r.stdout)
    py_net = py["peak"] - py["base"] - py["labels"] - 2 * py["voxels"]  # uint8 returned, uint16 during the run
    cli_peak = _maxrss([cli, big_ct, str(tmp_path / "out.nii.gz"), "--model", onnx_model, "--quiet", "--threads",
                        "2", "--overlap", "0"], tmp_path)
    cli_base = _maxrss([cli, "--help"], tmp_path)
    cli_net = cli_peak - cli_base - 2 * py["voxels"] - 2 * py["voxels"]  # int16 input, uint16 labels
    mib = 1 << 20
    print(f"python: peak {py['peak'] / mib:.1f} MiB, before {py['base'] / mib:.1f} MiB, net of arrays "
          f"{py_net / mib:.1f} MiB; CLI: peak {cli_peak / mib:.1f} MiB, --help {cli_base / mib:.1f} MiB, net of "
          f"arrays {cli_net / mib:.1f} MiB")
    assert abs(py_net - cli_net) <= TOLERANCE_MIB * mib
