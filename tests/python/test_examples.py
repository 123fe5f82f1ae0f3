"""The examples of apps/python/examples run as a user runs them, on a CT-like phantom
(tools/export/make_ct_phantom.py) with the f=12 test model; the CT script's labels equal the CLI's."""
import io
import os
import subprocess
import sys

import nibabel as nib
import numpy as np
import pytest

here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.abspath(os.path.join(here, "..", ".."))
examples = os.path.join(repo, "apps", "python", "examples")


@pytest.fixture(scope="module")
def phantom(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("phantom") / "ct.nii.gz")
    subprocess.run([sys.executable, os.path.join(repo, "tools", "export", "make_ct_phantom.py"), path, "--shape", "40",
                    "40", "16", "--spacing", "3", "3", "4"], check=True)
    return path


def _run(*args):
    r = subprocess.run([sys.executable, *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r


def test_segment_ct(phantom, onnx_model, cli, tmp_path):
    out, ref = str(tmp_path / "labels.nii.gz"), str(tmp_path / "cli.nii.gz")
    r = _run(os.path.join(examples, "segment_ct.py"), phantom, out, onnx_model)
    assert "cubes on cpu" in r.stdout or "cubes on cuda" in r.stdout
    subprocess.run([cli, phantom, ref, "--model", onnx_model, "--quiet"], check=True)
    assert np.array_equal(np.asanyarray(nib.load(out).dataobj), np.asanyarray(nib.load(ref).dataobj))


def test_monai_inferer(phantom, onnx_model, tmp_path):
    out = str(tmp_path / "labels.nii.gz")
    r = _run(os.path.join(examples, "monai_inferer.py"), phantom, out, onnx_model)
    labels = np.asanyarray(nib.load(out).dataobj)
    assert labels.ndim == 3 and labels.shape[0] > 70 and labels.max() > 0, r.stdout  # 3 x 3 x 4 mm -> 1.5 x 1.5 x 2


def test_slicer_subprocess(phantom, onnx_model, cli, tmp_path):
    r = _run(os.path.join(examples, "slicer_subprocess.py"), phantom, onnx_model)
    assert "labels (40, 40, 16) uint8" in r.stdout
    # the worker alone imports no torch
    script = os.path.join(examples, "slicer_subprocess.py")
    code = (f"import runpy, sys; sys.argv = [{script!r}, '--worker', {onnx_model!r}]; "
            f"runpy.run_path({script!r}, run_name='__main__'); assert 'torch' not in sys.modules, 'torch imported'")
    img = nib.load(phantom)
    buf = io.BytesIO()
    np.savez(buf, volume=np.asanyarray(img.dataobj), affine=img.affine)
    p = subprocess.run([sys.executable, "-c", code], input=buf.getvalue(), capture_output=True)
    assert p.returncode == 0, p.stderr.decode()
    labels = np.load(io.BytesIO(p.stdout))
    ref = str(tmp_path / "cli.nii.gz")
    subprocess.run([cli, phantom, ref, "--model", onnx_model, "--quiet"], check=True)
    assert np.array_equal(labels, np.asanyarray(nib.load(ref).dataobj))
