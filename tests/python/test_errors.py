"""Bad inputs raise the exception class of the library's status with a message that says what
is wrong; nothing crashes; a Ctrl-C during a segmentation cancels it."""
import os
import signal
import threading
import time

import numpy as np
import pytest

import swinrun
from swinrun import _swinrun


@pytest.fixture(scope="module")
def model(onnx_model):
    return swinrun.Model(onnx_model, threads=2)


def test_model_errors(onnx_model, tmp_path):
    with pytest.raises(swinrun.FileIOError, match="no-such"):
        swinrun.Model(str(tmp_path / "no-such.onnx"))
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\x08\x07" + b"not a model" * 20)
    with pytest.raises((swinrun.FormatError, swinrun.ModelError)):
        swinrun.Model(str(junk))
    with pytest.raises(swinrun.ArgumentError, match="backend"):
        swinrun.Model(onnx_model, backend="tpu")
    with pytest.raises(swinrun.ArgumentError, match="threads"):
        swinrun.Model(onnx_model, threads=-1)
    with pytest.raises(swinrun.ArgumentError, match="mem_limit"):
        swinrun.Model(onnx_model, mem_limit="lots")
    m = swinrun.Model(onnx_model, mem_limit="1MiB")
    # the library's messages name settings as this package does (swin_set_vocabulary), not as the CLI
    with pytest.raises(swinrun.MemoryLimitError, match="raise mem_limit to at least") as e:
        m.plan()
    assert "--" not in str(e.value)
    with pytest.raises(swinrun.MemoryLimitError):
        m(np.zeros((1, 1, 32, 32, 32), np.float32))
    # bf16 is a CPU mode: the CUDA backend refuses it, with the library's message
    with pytest.raises(swinrun.ArgumentError, match="bfloat16.*use precision fp32 or fp16, or backend cpu") as e:
        swinrun.Model(onnx_model, backend="cuda", precision="bf16").plan()
    assert "--" not in str(e.value)
    assert issubclass(swinrun.ShapeError, ValueError) and issubclass(swinrun.FileIOError, OSError)


def test_no_gpu_path(onnx_model):
    """backend auto on a machine without a usable GPU runs on the CPU and says why."""
    m = swinrun.Model(onnx_model)
    if m.backend == "cuda":
        pytest.skip("a CUDA device is usable here")
    assert m.backend == "cpu" and m.backend_reason.startswith("auto:")
    cuda = swinrun.Model(onnx_model, backend="cuda")
    with pytest.raises(swinrun.BackendError, match="CUDA|cuda"):
        cuda(np.zeros((1, 1, 32, 32, 32), np.float32))


def test_predictor_errors(model):
    x = np.zeros((1, 1, 32, 32, 32), np.float32)
    with pytest.raises(swinrun.ArgumentError, match="float32.*float64"):
        model(x.astype(np.float64))
    with pytest.raises(swinrun.ArgumentError, match="fp16"):
        model(x.astype(np.float16))
    with pytest.raises(swinrun.ShapeError, match="5 dimensions"):
        model(x[0])
    with pytest.raises(swinrun.ShapeError, match="does not match"):
        model(np.zeros((1, 2, 32, 32, 32), np.float32))
    with pytest.raises(swinrun.ArgumentError, match="multiple of 32"):
        model(np.zeros((1, 1, 32, 32, 40), np.float32))
    # the extension itself checks what the package would have converted
    ctx, _ = model._context((32, 32, 32))
    out = np.empty((1, 14, 32, 32, 32), np.float32)
    strided = np.zeros((1, 1, 32, 32, 64), np.float32)[..., ::2]
    with pytest.raises(swinrun.ArgumentError, match="C-contiguous"):
        _swinrun.context_run(ctx, strided, out)
    with pytest.raises(swinrun.ArgumentError, match="writable"):
        _swinrun.context_run(ctx, x, out[..., ::2])
    with pytest.raises(swinrun.ShapeError):
        _swinrun.context_run(ctx, np.zeros((2, 1, 32, 32, 32), np.float32), out)
    with pytest.raises(swinrun.ArgumentError, match="float32"):
        _swinrun.context_run(ctx, x.astype(np.float64), out)
    with pytest.raises(swinrun.ArgumentError, match="C-contiguous"):
        _swinrun.context_run(ctx, "x", out)
    with pytest.raises(ValueError):
        _swinrun.context_run(model._model, x, out)  # a model capsule where a context belongs


def test_segment_errors(model):
    vol = np.zeros((40, 40, 20), np.int16)
    aff = np.eye(4)
    with pytest.raises(swinrun.ShapeError, match="3 dimensions"):
        model.segment(vol[0], aff)
    with pytest.raises(swinrun.ArgumentError, match="numeric"):
        model.segment(vol.astype(np.complex64), aff)
    with pytest.raises(swinrun.ArgumentError, match="numeric"):
        model.segment(vol.astype(bool), aff)
    with pytest.raises(swinrun.ShapeError, match="4 x 4"):
        model.segment(vol, np.eye(3))
    with pytest.raises(swinrun.ArgumentError, match="non-finite"):
        model.segment(vol, np.full((4, 4), np.nan))
    with pytest.raises(swinrun.ShapeError, match="singular"):
        model.segment(vol, np.zeros((4, 4)))  # the library's own check
    with pytest.raises(swinrun.ArgumentError, match="blend"):
        model.segment(vol, aff, blend="median")
    with pytest.raises(swinrun.ArgumentError, match="invert"):
        model.segment(vol, aff, invert="cubic")
    with pytest.raises(swinrun.ArgumentError):
        model.segment(vol, aff, overlap=1.5)
    with pytest.raises(swinrun.ArgumentError):
        model.segment(vol, aff, spacing=(1, 1, -2))
    with pytest.raises(TypeError, match="unexpected recipe keys"):
        model.segment(vol, aff, spacingg=(1, 1, 1))
    with pytest.raises(TypeError):
        model.segment(vol, aff, progress=3)
    with pytest.raises(swinrun.FileIOError):
        model.segment_file("/no/such/ct.nii.gz", "/tmp/out.nii.gz")
    assert model.segment(vol, aff)[0].shape == vol.shape


def test_ctrl_c_cancels_segmentation(model):
    """SIGINT during segment(): the library's cancel callback stops the run between cubes and
    KeyboardInterrupt reaches the caller, well before the run would have ended."""
    vol = np.random.default_rng(0).normal(0, 100, (96, 96, 64)).astype(np.float32)
    aff = np.diag([1.5, 1.5, 2.0, 1.0])
    t0 = time.monotonic()
    model.segment(vol[:48, :48, :32], aff)
    one = time.monotonic() - t0
    timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
    t0 = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        model.segment(vol, aff)
    took = time.monotonic() - t0
    assert took < 0.2 + 2 * one + 1.0, f"the cancel took {took:.1f} s"
    assert model.segment(vol[:48, :48, :32], aff)[0].shape == (48, 48, 32)  # still usable
