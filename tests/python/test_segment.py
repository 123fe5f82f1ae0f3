"""Model.segment against the CLI on the same file: `swinrun CT OUT --model M` and segment() on the
array and affine nibabel reads give the same labels, voxel for voxel, for every dtype and
memory order the array may come in; segment_file writes the same file."""
import json
import os
import subprocess

import nibabel as nib
import numpy as np
import pytest

import swinrun


@pytest.fixture(scope="module")
def cli_labels(cli, onnx_model, ct_file, tmp_path_factory):
    out = str(tmp_path_factory.mktemp("cli") / "labels.nii.gz")
    rep = out + ".json"
    subprocess.run([cli, ct_file, out, "--model", onnx_model, "--quiet", "--threads", "2", "--json", rep], check=True)
    with open(rep) as f:
        report = json.load(f)
    return np.asanyarray(nib.load(out).dataobj), report


@pytest.fixture(scope="module")
def model(onnx_model):
    return swinrun.Model(onnx_model, threads=2)


def test_segment_equals_cli(model, ct_file, cli_labels):
    img = nib.load(ct_file)
    ref, cli_report = cli_labels
    vol = np.asanyarray(img.dataobj)
    assert vol.dtype == np.int16
    labels, report = model.segment(vol, img.affine)
    assert labels.dtype == ref.dtype == np.uint8 and labels.shape == vol.shape
    assert np.array_equal(labels, ref), f"{int((labels != ref).sum())} voxels differ from the CLI"
    assert len(np.unique(ref)) > 2  # a result with structure, not one label
    assert report["input_axcodes"] == "LPS" and report["classes"] == 14 and report["cubes"] > 1
    stats = {s["label"]: s for s in report["statistics"]}
    for lab, n in zip(*np.unique(ref[ref > 0], return_counts=True)):
        assert stats[int(lab)]["voxels"] == n
        assert stats[int(lab)]["hu_mean"] == pytest.approx(vol[ref == lab].mean(), rel=1e-9, abs=1e-9)
    assert report["labels_present"] == len(stats)
    # the other forms of the same volume: float64 (get_fdata), C order, big-endian, a 4D (x, y, z, 1)
    for other in (img.get_fdata(), np.ascontiguousarray(vol), vol.astype(">i2"), vol.astype(np.int32),
                  vol[..., None]):
        assert np.array_equal(model.segment(other, img.affine)[0], ref)


def test_segment_file_equals_cli(model, ct_file, cli_labels, tmp_path):
    out = str(tmp_path / "py.nii.gz")
    report = swinrun.segment_file(ct_file, out, model=model)
    assert np.array_equal(np.asanyarray(nib.load(out).dataobj), cli_labels[0])
    # the report agrees with the CLI's JSON report of the same file
    cli = cli_labels[1]["volumes"][0]
    assert report["cubes"] == cli["windows"] and list(report["grid_dim"]) == cli["grid_dim"]
    assert report["input_axcodes"] == cli["input_axcodes"] and report["pipeline_bytes"] == cli["planned_pipeline_bytes"]
    # the cubes' phases, within their stage; the pipeline ran on the context's threads
    phases = [report[k] for k in ("seconds_cut", "seconds_forward", "seconds_blend", "seconds_argmax")]
    assert min(phases) >= 0 and report["seconds_forward"] > 0 and sum(phases) <= report["seconds_infer"] + 1e-3
    assert report["plan"]["cpu_threads"] >= 1
    assert [(s["label"], s["voxels"]) for s in report["statistics"]] == [(s["label"], s["voxels"])
                                                                          for s in cli["statistics"]]
    for mine, theirs in zip(report["statistics"], cli["statistics"]):
        assert mine["volume_ml"] == pytest.approx(theirs["volume_ml"], rel=1e-5, abs=1e-3)
        assert mine["hu_mean"] == pytest.approx(theirs["hu_mean"], rel=1e-5, abs=1e-3)
    # a path as the model, with the Model's keyword arguments (the CLI's thread count: the
    # CPU backend's float sums follow the work split, so labels can flip at near-ties)
    out2 = str(tmp_path / "py2.nii.gz")
    swinrun.segment_file(ct_file, out2, model=model.path, threads=2, backend="cpu")
    assert np.array_equal(np.asanyarray(nib.load(out2).dataobj), cli_labels[0])


def test_recipe_and_probabilities(model, ct_file, cli, onnx_model, tmp_path):
    """A recipe given to segment() is the CLI's options; the probabilities are the CLI's."""
    img = nib.load(ct_file)
    vol = np.asanyarray(img.dataobj)
    out = str(tmp_path / "cli.nii.gz")
    subprocess.run([cli, ct_file, out, "--model", onnx_model, "--quiet", "--threads", "2", "--overlap", "0.25", "--blend",
                    "gaussian", "--spacing", "1", "1", "1.5"], check=True)
    labels, _ = model.segment(vol, img.affine, overlap=0.25, blend="gaussian", spacing=(1, 1, 1.5))
    assert np.array_equal(labels, np.asanyarray(nib.load(out).dataobj))
    prob_file = str(tmp_path / "cli_probs.nii.gz")
    subprocess.run([cli, ct_file, out, "--model", onnx_model, "--quiet", "--threads", "2", "--probabilities",
                    prob_file], check=True)
    labels, probs, _ = model.segment(vol, img.affine, probabilities=True)
    assert probs.shape == vol.shape + (14,) and probs.dtype == np.float32
    assert np.allclose(probs.sum(axis=3), 1, atol=1e-4)
    assert np.array_equal(probs, np.asanyarray(nib.load(prob_file).dataobj))
    assert np.array_equal(labels, np.asanyarray(nib.load(out).dataobj))
    assert model.segment_params()["invert"] == "nearest"


def test_invert_linear(model, ct_file):
    """invert='linear' (the BTCV bundle's nearest_interp false): labels are the argmax of the
    probabilities brought back to the input grid."""
    img = nib.load(ct_file)
    labels, probs, _ = model.segment(np.asanyarray(img.dataobj), img.affine, probabilities=True, invert="linear")
    assert np.array_equal(labels, probs.argmax(axis=3))


def test_progress_and_cancel(model, ct_file):
    img = nib.load(ct_file)
    vol = np.asanyarray(img.dataobj)
    seen = []
    model.segment(vol, img.affine, progress=lambda stage, f: seen.append((stage, f)))
    fr = [f for _, f in seen]
    assert fr == sorted(fr) and seen[-1] == ("done", 1.0) and any(s == "infer" for s, _ in seen)
    with pytest.raises(swinrun.CancelledError):
        model.segment(vol, img.affine, cancel=lambda: True)

    class Stop(Exception):
        pass

    def boom(stage, f):
        if stage == "infer":
            raise Stop()

    with pytest.raises(Stop):
        model.segment(vol, img.affine, progress=boom)
    # the model still works afterwards
    assert model.segment(vol, img.affine)[0].shape == vol.shape


def test_checkpoint_model_segments(monai_checkpoint, ct_file, cli, tmp_path):
    """A torch.save checkpoint as the model: the CLI and segment() agree on it too."""
    _, path = monai_checkpoint("v15")
    img = nib.load(ct_file)
    out = str(tmp_path / "ckpt.nii.gz")
    subprocess.run([cli, ct_file, out, "--model", path, "--quiet", "--threads", "2", "--cube", "32", "32", "32"],
                   check=True)
    model = swinrun.Model(path, threads=2)
    with pytest.raises(swinrun.ArgumentError, match="cube"):
        model.segment(np.asanyarray(img.dataobj), img.affine)  # a checkpoint has no cube of its own
    labels, _ = model.segment(np.asanyarray(img.dataobj), img.affine, cube=32)
    assert np.array_equal(labels, np.asanyarray(nib.load(out).dataobj))
    assert os.path.getsize(out) > 0


def test_channel_files_multi_label(cli, tmp_path):
    """A model of four input channels (the test matrix's f24_c64_cfg_ts) on one file per MRI
    sequence, z-scored over the nonzero voxels, one sigmoid mask per output channel: segment_file
    writes what the CLI writes, segment() on the (x, y, z, 4) array the same masks as bits; a
    count of channels other than the model's is refused with a message."""
    import make_mri_phantom

    path = os.path.join(os.environ["SWIN_TEST_DATA"], "f24_c64_cfg_ts", "model.onnx")
    x = make_mri_phantom.phantom((40, 44, 36), 4, seed=7)
    files = []
    for c, name in enumerate(make_mri_phantom.SEQUENCES):
        files.append(str(tmp_path / f"{name}.nii.gz"))
        nib.save(nib.Nifti1Image(x[..., c], np.diag([1.5, 1.5, 1.5, 1.0])), files[-1])
    recipe = dict(intensity_norm="zscore-nonzero", multi_label=True)
    out_cli, out_py = str(tmp_path / "cli.nii.gz"), str(tmp_path / "py.nii.gz")
    subprocess.run([cli, "segment", *files, out_cli, "--model", path, "-q", "--threads", "2",
                    "--intensity-norm", "zscore-nonzero", "--multi-label"], check=True)
    m = swinrun.Model(path, threads=2)
    assert m.segment_params()["intensity_norm"] == "range" and not m.segment_params()["multi_label"]
    report = swinrun.segment_file(files, out_py, m, **recipe)
    a, b = (np.asanyarray(nib.load(p).dataobj) for p in (out_cli, out_py))
    assert a.shape == b.shape == (40, 44, 36, 3) and a.dtype == np.uint8
    assert np.array_equal(a, b) and 0 < a.sum() < a.size
    assert [s["label"] for s in report["statistics"]] == [c + 1 for c in range(3) if a[..., c].any()]
    labels, probs, rep = m.segment(x, np.diag([1.5, 1.5, 1.5, 1.0]), probabilities=True, **recipe)
    assert labels.shape == (40, 44, 36) and labels.dtype == np.uint8 and probs.shape == (40, 44, 36, 3)
    for c in range(3):
        assert np.array_equal((labels >> c) & 1, a[..., c]), f"channel {c}'s mask differs from the CLI's"
    assert [(s["label"], s["voxels"]) for s in rep["statistics"]] == \
        [(s["label"], s["voxels"]) for s in report["statistics"]]
    for bad, n in ((x[..., 0], 1), (x[..., :3], 3)):
        with pytest.raises(swinrun.ShapeError, match=f"{n} channels?, but the model takes 4"):
            m.segment(bad, np.eye(4))
    with pytest.raises(swinrun.ArgumentError, match="intensity_norm"):
        m.segment_file(files, out_py, intensity_norm="minmax")
