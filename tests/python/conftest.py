"""Fixtures of the Python package's tests (tests/python/README.md): the CLI, the test models, and
MONAI SwinUNETRs with random weights saved as users save them (torch.save of the state dict)."""
from __future__ import annotations

import os
import sys

import pytest

here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.abspath(os.path.join(here, "..", ".."))
sys.path.insert(0, os.path.join(repo, "tools", "export"))
sys.path.insert(0, os.path.join(repo, "tests", "pipeline"))

# feature size 12, 3 classes: MONAI's defaults otherwise (make_ckpt_data.py's base)
BASE = dict(feature_size=12, in_channels=1, out_channels=3, depths=[2, 2, 2, 2], heads=[3, 6, 12, 24],
            window=[7, 7, 7], use_v2=False, normalize=True, downsample="merging", merge_order="v15", qkv_bias=True,
            patch_norm=False, instnorm_affine=False, norm="instance", mlp_ratio=4.0)


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: run by CTest's python_<file>_slow (label slow), not by python_<file>")


def _need(var: str) -> str:
    v = os.environ.get(var)
    if not v:
        pytest.fail(f"{var} is not set: run these tests through CTest (label python)")
    return v


@pytest.fixture(scope="session")
def cli() -> str:
    return _need("SWINRUN_CLI")


@pytest.fixture(scope="session")
def onnx_model() -> str:
    path = os.path.join(_need("SWIN_TEST_DATA"), "f12_c32_ts", "model.onnx")
    if not os.path.exists(path):
        pytest.fail(f"{path} is missing: run tools/export/make_test_data.sh first")
    return path


@pytest.fixture(scope="session")
def monai_checkpoint(tmp_path_factory):
    """merge order ("v15" | "pre15") -> (the MONAI network, its state dict saved by torch.save)."""
    import export_swin_unetr as ex
    import torch

    made = {}

    def make(order: str):
        if order not in made:
            net = ex.build_model(dict(BASE, merge_order=order))
            ex.randomize(net, seed=30 + len(order))
            path = str(tmp_path_factory.mktemp(f"ckpt_{order}") / "model.pt")
            torch.save(net.state_dict(), path)
            made[order] = (net, path)
        return made[order]

    return make


@pytest.fixture(scope="session")
def ct_file(tmp_path_factory) -> str:
    """A CT-like int16 NIfTI: LPS, anisotropic, odd sizes (tests/pipeline/cases.py)."""
    from cases import synthetic_cases

    return synthetic_cases(str(tmp_path_factory.mktemp("cases")))["lps_aniso"]
