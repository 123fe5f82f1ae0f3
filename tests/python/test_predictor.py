"""swinrun.Model as MONAI's predictor: sliding_window_inference with swinrun against the same
sliding windows with MONAI's own SwinUNETR (same weights, loaded by swinrun from the torch.save
checkpoint), held to the end-to-end criterion (tools/export/check_logits.py: within 1e-3 of
max(1, max|ref|), no label flip where MONAI's top-two logits differ by more than 1e-3)."""
import numpy as np
import pytest
import torch
from check_logits import compare
from monai.inferers import SlidingWindowInferer, sliding_window_inference

import swinrun

VOLUME = (1, 1, 36, 40, 52)  # non-cubic, no side a multiple of the cube
# merge order, roi, sw_batch_size, overlap; the two marked slow run in python_predictor_slow
# (tools/test.sh --slow): each of their values is in one of the other two cases or in
# test_inferer_and_numpy (v15, roi 32^3, sw_batch_size 2, overlap 0.25)
CASES = [
    pytest.param("v15", (32, 32, 32), 1, 0.25, marks=pytest.mark.slow),
    ("v15", (32, 32, 64), 4, 0.5),
    pytest.param("pre15", (32, 32, 32), 4, 0.25, marks=pytest.mark.slow),
    ("pre15", (32, 32, 32), 1, 0.5),
]


def _volume(seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(VOLUME, generator=g)


@pytest.mark.parametrize("order,roi,sw,overlap", CASES)
def test_sliding_window_matches_monai(monai_checkpoint, order, roi, sw, overlap):
    net, path = monai_checkpoint(order)
    model = swinrun.Model(path, merge_order=order, threads=2)
    assert {"v15": "MONAI >= 1.5", "pre15": "MONAI < 1.5"}[order] in model.config["downsample"]
    img = _volume()
    with torch.no_grad():
        ref = sliding_window_inference(img, roi, sw, net, overlap=overlap)
    got = sliding_window_inference(img, roi, sw, model, overlap=overlap)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.float32 and got.shape == ref.shape
    ok, line = compare(got.numpy(), ref.numpy())
    print(order, roi, sw, overlap, line)
    assert ok, line


def test_merge_order_matters(monai_checkpoint):
    """The criterion can fail: pre15 weights run in the v15 order do not pass it."""
    net, path = monai_checkpoint("pre15")
    x = _volume(1)[..., :32, :32, :32]
    with torch.no_grad():
        ref = net(x).numpy()
    wrong = swinrun.Model(path, merge_order="v15", threads=2)(x.numpy())
    assert not compare(wrong, ref)[0]
    assert "< 1.5" in swinrun.Model(path, merge_order="pre15").config["downsample"]


def test_inferer_and_numpy(monai_checkpoint):
    """SlidingWindowInferer with swinrun as the network; numpy in gives numpy out, equal to torch's."""
    net, path = monai_checkpoint("v15")
    model = swinrun.Model(path, threads=2)
    img = _volume(2)
    inferer = SlidingWindowInferer(roi_size=(32, 32, 32), sw_batch_size=2, overlap=0.25)
    with torch.no_grad():
        ref = inferer(img, net)
    ok, line = compare(inferer(img, model).numpy(), ref.numpy())
    assert ok, line
    x = img[..., :32, :32, :32]
    out_np = model(x.numpy())
    out_t = model(x)
    assert isinstance(out_np, np.ndarray) and out_np.dtype == np.float32
    assert isinstance(out_t, torch.Tensor) and out_t.device == x.device
    assert np.array_equal(out_np, out_t.numpy())
    # a non-contiguous input (a strided view) is copied, same result
    xs = np.ascontiguousarray(np.swapaxes(x.numpy(), 2, 4)).swapaxes(2, 4)
    assert not xs.flags.c_contiguous and np.array_equal(model(xs), out_np)
    # requires_grad tensors are detached; an empty batch gives an empty batch
    assert np.array_equal(model(x.clone().requires_grad_(True)).numpy(), out_np)
    assert model(np.zeros((0, 1, 32, 32, 32), np.float32)).shape == (0, 3, 32, 32, 32)
    with pytest.raises(swinrun.ArgumentError, match="bfloat16"):
        model(x.to(torch.bfloat16))
    with pytest.raises(swinrun.ArgumentError, match="float64"):
        model(x.double())


def test_group_norm_checkpoint(tmp_path):
    """norm_groups=G runs a state dict of norm_name=("group", {"num_groups": G}) as MONAI does;
    read without it (as affine instance norm) it does not pass the criterion."""
    from monai.networks.nets import SwinUNETR
    import export_swin_unetr as ex
    net = SwinUNETR(in_channels=1, out_channels=3, feature_size=12, norm_name=("group", {"num_groups": 3})).eval()
    ex.randomize(net, seed=7)
    path = str(tmp_path / "group.pt")
    torch.save(net.state_dict(), path)
    x = _volume(3)[..., :32, :32, :32]
    with torch.no_grad():
        ref = net(x).numpy()
    model = swinrun.Model(path, norm_groups=3, threads=2)
    assert model.config["norm_groups"] == 3
    ok, line = compare(model(x.numpy()), ref)
    assert ok, line
    assert not compare(swinrun.Model(path, threads=2)(x.numpy()), ref)[0]
    with pytest.raises(swinrun.ArgumentError):
        swinrun.Model(path, norm_groups=-1)
