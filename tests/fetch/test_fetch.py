#!/usr/bin/env python3
"""swinrun fetch against a local HTTP server (docs/fetch.md, Tests).

    test_fetch.py SWINRUN WORKDIR

Generates a small MONAI bundle laid out like a model-zoo folder (a random-weight SwinUNETR,
feature size 12, saved by torch.save as models/model.pt; configs modelled on the BTCV bundle's
with a 32^3 cube), serves it from 127.0.0.1 on a free port, and runs swinrun fetch through the
cases: success, a wrong checksum, a transfer cut short, resuming it with a Range request, a
server that ignores Range, a redirect, too many redirects, HTTP 500 and 404, Ctrl-C, a version
mismatch, an existing bundle replaced, a destination that is no bundle, a bundle whose configs
and large_files are YAML (.yaml), one without any inference config; then reads the fetched
bundle as a model (swinrun info) and segments a small volume without --model, which must take
the fetched bundle. Every failure must exit non-zero with one line on stderr and leave nothing at
the destination.
"""
import hashlib
import http.server
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import torch
from monai.networks.nets import SwinUNETR

NAME = "swin_unetr_btcv_segmentation"
VERSION = "0.5.6"


def make_bundle(root):
    """The zoo layout: root/models/NAME/{configs,docs,LICENSE}; the weights kept apart (served under /weights)."""
    b = os.path.join(root, "models", NAME)
    os.makedirs(os.path.join(b, "configs"))
    os.makedirs(os.path.join(b, "docs"))
    torch.manual_seed(7)
    net = SwinUNETR(in_channels=1, out_channels=14, feature_size=12, spatial_dims=3)
    weights = os.path.join(root, "model.pt")
    torch.save(net.state_dict(), weights)
    keys = "image"
    inference = {
        "imports": ["$import glob", "$import os"],
        "bundle_root": ".",
        "checkpoint": "$@bundle_root + '/models/model.pt'",
        "device": "$torch.device('cpu')",
        "network_def": {"_target_": "SwinUNETR", "spatial_dims": 3, "in_channels": 1, "out_channels": 14,
                        "feature_size": 12, "use_checkpoint": False},
        "network": "$@network_def.to(@device)",
        "preprocessing": {"_target_": "Compose", "transforms": [
            {"_target_": "LoadImaged", "keys": keys},
            {"_target_": "EnsureChannelFirstd", "keys": keys},
            {"_target_": "Orientationd", "keys": keys, "axcodes": "RAS"},
            {"_target_": "Spacingd", "keys": keys, "pixdim": [1.5, 1.5, 2.0], "mode": "bilinear"},
            {"_target_": "ScaleIntensityRanged", "keys": keys, "a_min": -175, "a_max": 250, "b_min": 0.0,
             "b_max": 1.0, "clip": True},
            {"_target_": "EnsureTyped", "keys": keys}]},
        "inferer": {"_target_": "SlidingWindowInferer", "roi_size": [32, 32, 32], "sw_batch_size": 1,
                    "overlap": 0.5},
        "postprocessing": {"_target_": "Compose", "transforms": [
            {"_target_": "Activationsd", "keys": "pred", "softmax": True},
            {"_target_": "Invertd", "keys": "pred", "transform": "@preprocessing", "orig_keys": keys,
             "nearest_interp": False, "to_tensor": True},
            {"_target_": "AsDiscreted", "keys": "pred", "argmax": True}]},
    }
    metadata = {"version": VERSION, "changelog": {VERSION: "test bundle"}, "monai_version": "1.6.1",
                "name": "swinrun fetch test bundle (random weights)",
                "network_data_format": {"inputs": {"image": {"num_channels": 1, "spatial_shape": [32, 32, 32]}},
                                        "outputs": {"pred": {"num_channels": 14, "spatial_shape": [32, 32, 32]}}}}
    with open(os.path.join(b, "configs", "inference.json"), "w") as f:
        json.dump(inference, f, indent=4)
    with open(os.path.join(b, "configs", "metadata.json"), "w") as f:
        json.dump(metadata, f, indent=4)
    with open(os.path.join(b, "LICENSE"), "w") as f:
        f.write("test bundle made by tests/fetch/test_fetch.py: random weights, no license terms\n")
    with open(os.path.join(b, "docs", "README.md"), "w") as f:
        f.write("# test bundle\n")
    with open(weights, "rb") as f:
        data = f.read()
    return data, hashlib.md5(data).hexdigest()


class State:
    """What the server does, set by each case; requests are recorded."""

    def __init__(self, root, weights, md5):
        self.root, self.weights, self.md5 = root, weights, md5
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        self.mode = "normal"          # normal | cut | no_range | slow | status500
        self.yaml = False             # the bundle's configs/inference and large_files in YAML (.yaml) only
        self.weights_path = "/weights/model.pt"
        self.yml_md5 = self.md5
        self.requests = []


def make_handler(state, port_box):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def send_bytes(self, code, data, extra=()):
            self.send_response(code)
            self.send_header("Content-Length", str(len(data)))
            for k, v in extra:
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            with state.lock:
                state.requests.append((self.path, self.headers.get("Range")))
            p = self.path
            zoo = "/zoo/models/" + NAME + "/"
            if state.yaml and p in (zoo + "large_files.yml", zoo + "configs/inference.json"):
                return self.send_bytes(404, b"not found\n")
            if p.startswith(zoo + "large_files.yml") or (state.yaml and p == zoo + "large_files.yaml"):
                url = "http://127.0.0.1:%d%s" % (port_box[0], state.weights_path)
                text = ("large_files:\n  - path: \"models/model.pt\"\n    url: \"%s\"\n"
                        "    hash_val: \"%s\"\n    hash_type: \"md5\"\n" % (url, state.yml_md5))
                if state.yaml:  # as a YAML writer may lay it out: flow style, an anchor
                    text = ("large_files: [{path: &p models/model.pt, url: '%s',\n  hash_val: '%s', hash_type: md5}]\n"
                            % (url, state.yml_md5))
                return self.send_bytes(200, text.encode())
            source = os.path.join(state.root, "models", NAME, "configs", "inference.json")
            if state.yaml and p == zoo + "configs/inference.yaml" and os.path.isfile(source):
                import yaml
                with open(source) as fh:
                    return self.send_bytes(200, yaml.safe_dump(json.load(fh), sort_keys=False).encode())
            if p.startswith("/zoo/"):
                f = os.path.join(state.root, p[len("/zoo/"):])
                if ".." in p or not os.path.isfile(f):
                    return self.send_bytes(404, b"not found\n")
                with open(f, "rb") as fh:
                    return self.send_bytes(200, fh.read())
            if p == "/redirect/model.pt":
                return self.send_bytes(302, b"", [("Location", "/weights/model.pt")])
            if p == "/loop":
                return self.send_bytes(302, b"", [("Location", "/loop")])
            if p != "/weights/model.pt":
                return self.send_bytes(404, b"not found\n")
            data = state.weights
            if state.mode == "status500":
                return self.send_bytes(500, b"server error\n")
            rng = self.headers.get("Range")
            if rng and state.mode != "no_range":
                start = int(rng.split("=")[1].split("-")[0])
                if start >= len(data):
                    return self.send_bytes(416, b"", [("Content-Range", "bytes */%d" % len(data))])
                return self.send_bytes(206, data[start:], [("Content-Range", "bytes %d-%d/%d" % (
                    start, len(data) - 1, len(data)))])
            if state.mode in ("cut", "slow"):
                # Content-Length promises the whole file; half of it comes, then the connection closes
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                if state.mode == "slow":
                    time.sleep(30)
                self.close_connection = True
                return
            return self.send_bytes(200, data)

    return Handler


class QuietServer(http.server.ThreadingHTTPServer):
    """A client that stops reading (a failed check, Ctrl-C) is no error of the server's."""

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            super().handle_error(request, client_address)


failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def md5_of(path):
    with open(path, "rb") as f:
        return hashlib.md5(f.read()).hexdigest()


def main():
    swinrun, work = sys.argv[1], os.path.abspath(sys.argv[2])
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    zoo = os.path.join(work, "zoo")
    weights, md5 = make_bundle(zoo)
    state = State(zoo, weights, md5)
    port_box = [0]
    server = QuietServer(("127.0.0.1", 0), make_handler(state, port_box))
    server.daemon_threads = True
    port_box[0] = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = "http://127.0.0.1:%d/zoo" % port_box[0]
    dest = os.path.join(work, "dest", NAME)
    parts = dest + ".partial/parts"
    env = dict(os.environ, XDG_DATA_HOME=os.path.join(work, "xdg"))
    env.pop("SWINRUN_ZOO_URL", None)

    def fetch(*extra, dest_dir=dest):
        cmd = [swinrun, "fetch", "--from", base, "--dest", dest_dir, "--timeout", "10", *extra]
        return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)

    def failed_cleanly(r, what, needle):
        lines = [l for l in r.stderr.splitlines() if "nothing was installed" in l]
        check(r.returncode != 0, what + ": non-zero exit (%d)" % r.returncode)
        check(len(lines) == 1 and needle in lines[0], what + ": one line naming '%s': %r" % (needle, lines))
        check(not os.path.exists(dest), what + ": nothing at the destination")

    def part_files():
        return sorted(os.listdir(parts)) if os.path.isdir(parts) else []

    r = subprocess.run([swinrun, "fetch", "--help"], capture_output=True, text=True)
    check(r.returncode == 0 and all(o in r.stdout for o in ("--version", "--dest", "--from", "--timeout")),
          "fetch --help lists its options")

    # a destination that is not a bundle is never replaced
    keep = os.path.join(work, "not_a_bundle")
    os.makedirs(keep)
    with open(os.path.join(keep, "notes.txt"), "w") as f:
        f.write("mine\n")
    r = fetch(dest_dir=keep)
    check(r.returncode == 2 and "not a bundle folder" in r.stderr and os.path.isfile(os.path.join(keep, "notes.txt")),
          "a folder that is not a bundle: refused, left as it was")

    os.makedirs(dest + ".partial")
    with open(os.path.join(dest + ".partial", "notes.txt"), "w") as f:
        f.write("mine\n")
    r = fetch()
    check(r.returncode == 2 and os.path.isfile(os.path.join(dest + ".partial", "notes.txt")),
          "a staging folder holding other files: refused, left as it was")
    shutil.rmtree(dest + ".partial")

    # a wrong checksum: the download is removed, nothing installed
    state.reset()
    state.yml_md5 = "0" * 32
    r = fetch()
    failed_cleanly(r, "wrong checksum", "md5")
    check(part_files() == [], "wrong checksum: the bad download is not kept")

    # a server error on the weights, and a 404 on a required file
    state.reset()
    state.mode = "status500"
    failed_cleanly(fetch(), "HTTP 500", "HTTP status 500")
    check(not os.path.exists(dest + ".partial"), "HTTP 500: no staging folder left (nothing to resume)")
    state.reset()
    r = subprocess.run([swinrun, "fetch", "--from", base + "/nowhere", "--dest", dest, "--timeout", "10"],
                       env=env, capture_output=True, text=True, timeout=120)
    failed_cleanly(r, "HTTP 404", "HTTP status 404")

    # too many redirects
    state.reset()
    state.weights_path = "/loop"
    failed_cleanly(fetch(), "redirect loop", "redirects")

    # metadata.json's version is checked
    state.reset()
    failed_cleanly(fetch("--version", "9.9.9"), "version mismatch", "9.9.9")

    # a transfer cut short (Content-Length promised more): the part file stays for resuming
    state.reset()
    state.mode = "cut"
    failed_cleanly(fetch(), "truncated transfer", "ended early")
    kept = part_files()
    check(kept == [md5 + ".part"], "truncated transfer: the partial download stays (%s)" % kept)
    have = os.path.getsize(os.path.join(parts, kept[0])) if kept else -1
    check(0 < have < len(weights), "truncated transfer: %d of %d bytes kept" % (have, len(weights)))

    # the next run resumes it with a Range request
    state.reset()
    r = fetch()
    check(r.returncode == 0, "resume: exit 0 (%s)" % r.stderr.strip().splitlines()[-1:])
    ranges = [rg for p, rg in state.requests if p == "/weights/model.pt"]
    check(ranges == ["bytes=%d-" % have], "resume: one Range request from byte %d (%s)" % (have, ranges))
    check(os.path.isfile(os.path.join(dest, "models/model.pt")) and md5_of(os.path.join(dest, "models/model.pt"))
          == md5, "resume: models/model.pt complete, md5 as published")
    check(not os.path.exists(dest + ".partial"), "resume: the staging folder is gone")
    shutil.rmtree(dest)

    # a server that ignores Range: the download starts again from byte 0
    state.reset()
    state.mode = "cut"
    fetch()
    state.reset()
    state.mode = "no_range"
    r = fetch()
    check(r.returncode == 0 and "starts again" in r.stderr, "no Range support: restarted and installed")
    check(md5_of(os.path.join(dest, "models/model.pt")) == md5, "no Range support: md5 as published")
    shutil.rmtree(dest)

    # Ctrl-C in the middle of the weights: nothing installed, the part file kept
    state.reset()
    state.mode = "slow"
    p = subprocess.Popen([swinrun, "fetch", "--from", base, "--dest", dest, "--timeout", "20"], env=env,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline and not any(os.path.getsize(os.path.join(parts, f)) > 0 for f in part_files()):
        time.sleep(0.1)
    p.send_signal(signal.SIGINT)
    err = p.communicate(timeout=60)[1]
    r = subprocess.CompletedProcess(p.args, p.returncode, "", err)
    failed_cleanly(r, "Ctrl-C", "interrupted")
    check(part_files() == [md5 + ".part"], "Ctrl-C: the partial download stays")
    shutil.rmtree(dest + ".partial")

    # success through a redirect
    state.reset()
    state.weights_path = "/redirect/model.pt"
    r = fetch()
    check(r.returncode == 0, "redirect: exit 0 (%s)" % r.stderr.strip().splitlines()[-1:])
    paths = [p for p, _ in state.requests]
    check("/redirect/model.pt" in paths and "/weights/model.pt" in paths, "redirect: followed")
    for f in ("configs/inference.json", "configs/metadata.json", "large_files.yml", "LICENSE", "docs/README.md",
              "models/model.pt"):
        check(os.path.isfile(os.path.join(dest, f)), "success: %s in place" % f)
    check(md5_of(os.path.join(dest, "models/model.pt")) == md5, "success: md5 as published")
    check(not os.path.exists(dest + ".partial"), "success: the staging folder is gone")

    # fetching again replaces the bundle in one rename; the weights already there are kept
    state.reset()
    r = fetch()
    check(r.returncode == 0 and "kept" in r.stderr, "again: exit 0, weights kept")
    check("/weights/model.pt" not in [p for p, _ in state.requests], "again: the weights not downloaded again")

    # the default destination is where segment looks
    state.reset()
    r = subprocess.run([swinrun, "fetch", "--from", base], env=env, capture_output=True, text=True, timeout=120)
    default = os.path.join(work, "xdg", "swinrun", "bundles", NAME, "models", "model.pt")
    check(r.returncode == 0 and os.path.isfile(default), "default destination: $XDG_DATA_HOME/swinrun/bundles/NAME")

    # the fetched bundle is a model (docs/bundles.md), and the default one
    r = subprocess.run([swinrun, "info", dest], env=env, capture_output=True, text=True)
    check(r.returncode == 0 and "feature size   12" in r.stdout and "channels       in 1, out 14" in r.stdout
          and "32 x 32 x 32" in r.stdout, "swinrun info on the fetched bundle (%s)" % r.stderr.strip()[-200:])
    import nibabel as nib
    import numpy as np
    ct = os.path.join(work, "ct.nii.gz")
    rng = np.random.default_rng(3)
    nib.save(nib.Nifti1Image(rng.integers(-1000, 1000, (40, 36, 24)).astype(np.int16), np.diag([1.5, 1.5, 2.0, 1])), ct)
    report = os.path.join(work, "segment.json")
    r = subprocess.run([swinrun, ct, os.path.join(work, "labels.nii.gz"), "--json", report, "--quiet"], env=env,
                       capture_output=True, text=True, timeout=300)
    used = json.load(open(report))["model"] if r.returncode == 0 else r.stderr.strip()
    check(used == os.path.join(work, "xdg", "swinrun", "bundles", NAME),
          "segment without --model takes the fetched bundle (%s)" % used)

    # a bundle written in YAML: configs/inference.yaml and large_files.yaml only on the server
    state.reset()
    state.yaml = True
    dest_yaml = os.path.join(work, "bundle_yaml")
    r = fetch(dest_dir=dest_yaml)
    check(r.returncode == 0 and all(os.path.isfile(os.path.join(dest_yaml, f)) for f in (
        "configs/inference.yaml", "large_files.yaml", "models/model.pt")) and not os.path.exists(
        os.path.join(dest_yaml, "configs", "inference.json")),
        "a YAML bundle: inference.yaml and large_files.yaml fetched (%s)" % r.stderr.strip()[-200:])
    r = subprocess.run([swinrun, "info", dest_yaml], env=env, capture_output=True, text=True)
    check(r.returncode == 0 and "configs/inference.yaml" in r.stdout and "32 x 32 x 32" in r.stdout,
          "a YAML bundle: read as a model (%s)" % r.stderr.strip()[-200:])
    state.reset()
    state.yaml = True
    os.remove(os.path.join(state.root, "models", NAME, "configs", "inference.json"))
    r = fetch(dest_dir=os.path.join(work, "no_config"))
    lines = [line for line in r.stderr.splitlines() if "nothing was installed" in line]
    check(r.returncode != 0 and len(lines) == 1 and "404 for configs/inference.json, configs/inference.yaml and configs/inference.yml" in lines[0]
          and not os.path.exists(os.path.join(work, "no_config")),
          "no inference config on the server: one line naming the three names, nothing installed (%r)" % lines)

    server.shutdown()
    if failures:
        sys.exit("test_fetch.py: %d failed" % len(failures))
    print("test_fetch.py: all passed")


if __name__ == "__main__":
    main()
