"""Bad requests and bad models against a real tritonserver: each gets a Triton error naming
the problem, and the server goes on serving the next request correctly.

    test_errors.py BACKEND_SO SWINRUN MAIN_PYTHON TEST_DATA WORK
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Server, check, infer_segment, infer_window, segment_config, swinrun_forward, test_args, \
    window_config, write_model  # noqa: E402
from tritonclient.utils import InferenceServerException  # noqa: E402

backend_so, swinrun, main_py, data, work, repo = test_args(sys.argv)
case_dir = os.path.join(data, "f12_c32_default")
write_model(repo, "w", case_dir, window_config((32, 32, 32)))
# dims left to the backend (-1): its own shape check answers, not Triton's
write_model(repo, "w_any", case_dir, window_config((32, 32, 32)).replace("1, 1, 32, 32, 32", "-1, -1, -1, -1, -1")
            .replace("1, 14, 32, 32, 32", "-1, -1, -1, -1, -1"))
write_model(repo, "seg", case_dir, segment_config("TYPE_FP32", extra=',\n{ key: "max_voxels", value: { string_value: "100000" } }'))
# the plan (about 23 MB at 32^3) over its memory limit: refused when the instance loads
write_model(repo, "tight", case_dir, window_config((32, 32, 32), extra=',\n{ key: "memory_limit", value: { string_value: "1MiB" } }'))
write_model(repo, "badparam", case_dir, window_config((32, 32, 32), extra=',\n{ key: "thread", value: { string_value: "1" } }'))
write_model(repo, "baddims", case_dir, window_config((32, 32, 32), cout=13))
# a model of four input channels with a volume of one declared
write_model(repo, "seg_mri_3d", os.path.join(data, "f24_c64_cfg_ts"), segment_config("TYPE_FP32"))
# a checkpoint (no cube of its own) in segment mode without parameter cube
os.makedirs(os.path.join(repo, "seg_nocube", "1"))
os.symlink(os.path.join(data, "ckpt", "plain", "model.pt"), os.path.join(repo, "seg_nocube", "1", "model.pt"))
with open(os.path.join(repo, "seg_nocube", "config.pbtxt"), "w") as fh:
    fh.write('name: "seg_nocube"\nbackend: "swinrun"\ndefault_model_filename: "model.pt"\n' + segment_config("TYPE_FP32"))
# fixed dims other than the export's cube are the cube (no cube parameter needed)
write_model(repo, "cube64", case_dir, window_config((32, 32, 64)))

x = np.load(os.path.join(case_dir, "input.npy"))
ref = swinrun_forward(swinrun, case_dir, x, os.path.join(work, "forward.npy"))


def expect_error(what, fn, *needles):
    try:
        fn()
    except InferenceServerException as e:
        msg = str(e)
        print("   error:", msg)
        check(all(n in msg for n in needles), "%s: an error naming %s" % (what, " / ".join(repr(n) for n in needles)))
        return
    raise AssertionError("%s: no error" % what)


served = 0


def infer_window_typed(client, model, arr, datatype):
    import tritonclient.http as httpclient
    i = httpclient.InferInput("input", list(arr.shape), datatype)
    i.set_data_from_numpy(arr, binary_data=True)
    return client.infer(model, [i])


def still_serving(client, model="w"):
    global served
    check(np.array_equal(infer_window(client, model, x), ref), "... and %s answers the next request correctly" % model)
    served += 1


volume = (np.arange(30 * 24 * 20, dtype=np.float32).reshape(20, 24, 30) % 300) - 150
affine = np.diag([1.5, 1.5, 2.0, 1.0])
with Server(backend_so, repo, work, explicit=["w", "w_any", "seg"]) as s:
    c = s.http()
    expect_error("wrong shape", lambda: infer_window(c, "w", x[:, :, :, :, :16]), "input", "shape", "[1,1,32,32,16]")
    still_serving(c)
    expect_error("wrong data type", lambda: infer_window_typed(c, "w", x.astype(np.float64), "FP64"), "FP64", "FP32")
    still_serving(c)
    expect_error("wrong shape (the backend's check)", lambda: infer_window(c, "w_any", x[:, :, :, :, :16]),
                 "input 'input' has shape [1, 1, 32, 32, 16]", "the model takes [1, 1, 32, 32, 32]")
    still_serving(c, "w_any")
    expect_error("wrong channel count (the backend's check)", lambda: infer_window(c, "w_any", np.concatenate([x, x], 1)),
                 "[1, 2, 32, 32, 32]", "the model takes [1, 1, 32, 32, 32]")
    still_serving(c, "w_any")

    expect_error("singular affine", lambda: infer_segment(c, "seg", volume, np.diag([1.5, 0, 2, 1])), "AFFINE", "singular")
    expect_error("non-finite affine", lambda: infer_segment(c, "seg", volume, np.where(np.eye(4) > 0, np.nan, 0)),
                 "AFFINE", "non-finite")
    expect_error("affine bottom row", lambda: infer_segment(c, "seg", volume, affine + 1), "AFFINE", "bottom row")
    expect_error("volume too large", lambda: infer_segment(c, "seg", np.zeros((50, 50, 50), np.float32), affine),
                 "VOLUME", "too large", "max_voxels")
    expect_error("empty volume", lambda: infer_segment(c, "seg", np.zeros((0, 24, 30), np.float32), affine),
                 "VOLUME", "at least 1")
    expect_error("NaN intensities", lambda: infer_segment(c, "seg", np.full((20, 24, 30), np.nan, np.float32), affine),
                 "finite")
    expect_error("volume of a wrong data type", lambda: infer_segment(c, "seg", volume.astype(np.int16), affine),
                 "VOLUME", "INT16", "FP32")
    labels = infer_segment(c, "seg", volume, affine)
    check(labels.shape == volume.shape and labels.dtype == np.uint16, "... and seg answers the next volume")
    still_serving(c)

    expect_error("memory limit too small at load", lambda: c.load_model("tight"),
                 "tight", "plan needs", "memory_limit 1048576")
    check(not c.is_model_ready("tight"), "tight is not served")
    still_serving(c)
    expect_error("unknown parameter at load", lambda: c.load_model("badparam"), "unknown parameter 'thread'")
    expect_error("config dims against the model's", lambda: c.load_model("baddims"), "dims[1] is 13", "the model has 14")
    expect_error("a volume of one channel for a model of four", lambda: c.load_model("seg_mri_3d"),
                 "takes 4 input channels", "dims [ 4, -1, -1, -1 ]")
    expect_error("a checkpoint in segment mode without a cube", lambda: c.load_model("seg_nocube"),
                 "seg_nocube", "give parameter cube")
    c.load_model("cube64")
    x64 = np.concatenate([x, x[..., ::-1]], axis=4)
    got = infer_window(c, "cube64", x64)
    ref64 = swinrun_forward(swinrun, case_dir, x64, os.path.join(work, "forward64.npy"))
    check(got.shape == ref64.shape and np.array_equal(got, ref64),
          "cube64: config dims (1, 1, 32, 32, 64) taken as the cube; logits equal swinrun forward's")
    still_serving(c)
    stats = c.get_inference_statistics("w")["model_stats"][0]["inference_stats"]
    check(int(stats["success"]["count"]) == served - 2, "statistics of w: %d successes" % (served - 2))
    check(s.proc.poll() is None, "the server is still running")
print("PASS")
