"""Window mode against a real tritonserver: Triton's logits bitwise equal to `swinrun forward`
with the same thread count on the same model and input, and within the end-to-end criterion
of ONNX Runtime's (tools/export/check_logits.py); a batch of windows (max_batch_size > 0) equal
window by window; HTTP and gRPC alike; a checkpoint served with the parameters merge_order,
normalize and norm_groups agrees with MONAI's forward of it, and without them does not.

    test_window.py BACKEND_SO SWINRUN MAIN_PYTHON TEST_DATA WORK
"""
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (REPO_ROOT, Server, check, infer_window, swinrun_forward, test_args, window_config,  # noqa: E402
                     write_model)

backend_so, swinrun, main_py, data, work, repo = test_args(sys.argv)

# (model name, case, cube (D, H, W), max_batch_size)
models = [("w_default", "f12_c32_default", (32, 32, 32), 0),
          ("w_noncubic", "f12_64x32x96_ts", (64, 32, 96), 0),
          ("w_batch", "f12_c32_ts", (32, 32, 32), 4)]
for name, case, cube, mbs in models:
    write_model(repo, name, os.path.join(data, case), window_config(cube, max_batch=mbs))

# a state dict that runs right only with the load options it cannot say itself (group norm,
# normalize=False, MONAI < 1.5's merge order), served with them and without
opt_dir = os.path.join(work, "option_ckpt")
subprocess.run([main_py, os.path.join(REPO_ROOT, "tests", "weights", "make_option_checkpoint.py"), opt_dir], check=True)
option_params = "".join(', { key: "%s", value: { string_value: "%s" } }' % kv
                        for kv in (("norm_groups", "3"), ("normalize", "false"), ("merge_order", "pre15")))
for name, extra in (("w_options", option_params), ("w_no_options", "")):
    os.makedirs(os.path.join(repo, name, "1"))
    os.symlink(os.path.join(opt_dir, "model.pt"), os.path.join(repo, name, "1", "model.pt"))
    with open(os.path.join(repo, name, "config.pbtxt"), "w") as fh:
        fh.write('name: "%s"\nbackend: "swinrun"\ndefault_model_filename: "model.pt"\n%s'
                 % (name, window_config((32, 32, 32), cout=3, extra=extra)))

with Server(backend_so, repo, work) as s:
    client = s.http()
    for name, case, cube, mbs in models[:2]:
        case_dir = os.path.join(data, case)
        x = np.load(os.path.join(case_dir, "input.npy"))
        got = infer_window(client, name, x)
        ref = swinrun_forward(swinrun, case_dir, x, os.path.join(work, name + ".forward.npy"))
        check(got.dtype == np.float32 and got.shape == ref.shape, "%s: logits %s float32" % (name, got.shape))
        check(np.array_equal(got, ref), "%s: Triton's logits bitwise equal to swinrun forward --threads 1" % name)
        out = os.path.join(work, name + ".triton.npy")
        np.save(out, got)
        r = subprocess.run([main_py, os.path.join(REPO_ROOT, "tools", "export", "check_logits.py"), out,
                            os.path.join(case_dir, "logits.npy")], capture_output=True, text=True)
        print(r.stdout.strip())
        check(r.returncode == 0, "%s: agrees with ONNX Runtime (tools/export/check_logits.py)" % name)

    # gRPC: the same answer as HTTP
    import tritonclient.grpc as grpcclient
    x = np.load(os.path.join(data, "f12_c32_default", "input.npy"))
    gi = grpcclient.InferInput("input", list(x.shape), "FP32")
    gi.set_data_from_numpy(x)
    g = s.grpc().infer("w_default", [gi]).as_numpy("logits")
    check(np.array_equal(g, np.load(os.path.join(work, "w_default.forward.npy"))), "gRPC: the same logits as swinrun forward")

    # a batch of 3 different windows: run one after another, each equal to its own forward
    case_dir = os.path.join(data, "f12_c32_ts")
    x = np.load(os.path.join(case_dir, "input.npy"))[0]
    batch = np.stack([x, 0.5 * x - 0.25, x[:, ::-1, :, ::-1]]).astype(np.float32)
    got = infer_window(client, "w_batch", batch)
    check(got.shape == (3, 14, 32, 32, 32), "w_batch: logits of 3 windows")
    for b in range(3):
        ref = swinrun_forward(swinrun, case_dir, batch[b:b + 1], os.path.join(work, "w_batch_%d.npy" % b))
        check(np.array_equal(got[b:b + 1], ref), "w_batch: window %d bitwise equal to swinrun forward" % b)
    stats = client.get_inference_statistics("w_batch")["model_stats"][0]
    check(int(stats["inference_count"]) == 3 and int(stats["execution_count"]) == 1,
          "w_batch statistics: 3 inferences (windows) in 1 execution")
    # the checkpoint: with its options MONAI's logits, without them others
    x = np.load(os.path.join(opt_dir, "input.npy"))
    for name, want in (("w_options", 0), ("w_no_options", 1)):
        out = os.path.join(work, name + ".triton.npy")
        np.save(out, infer_window(client, name, x))
        r = subprocess.run([main_py, os.path.join(REPO_ROOT, "tools", "export", "check_logits.py"), out,
                            os.path.join(opt_dir, "logits.npy")], capture_output=True, text=True)
        print(r.stdout.strip())
        check(r.returncode == want, "%s: %s MONAI's forward of the checkpoint" % (name, "agrees with" if not want
                                                                                     else "differs from"))

    log = s.log_text()
    check("swinrun instance 'w_default_0_0': cpu backend" in log, "the instance logs its backend and plan")
print("PASS")
