"""A real tritonserver for the backend's tests: started on 127.0.0.1 with free ports over a
model repository the test writes, bounded in time, stopped by its pid.

    with Server(backend_so, repo, work, explicit=["w"]) as s:
        client = s.http()          # tritonclient.http.InferenceServerClient
        s.rss_kib(), s.metric("nv_inference_request_success", model="w")
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import numpy as np

VENV = os.path.dirname(os.path.dirname(sys.executable))
TRITONSERVER = os.path.join(VENV, "lib", "python%d.%d" % sys.version_info[:2], "site-packages", "pytriton",
                            "tritonserver", "bin", "tritonserver")
START_TIMEOUT_S = 120
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def test_args(argv):
    """The arguments every test takes, BACKEND_SO SWINRUN MAIN_PYTHON TEST_DATA WORK, with WORK
    emptied and WORK/repo (the model repository) created: (backend_so, swinrun, main_py, data,
    work, repo)."""
    backend_so, swinrun, main_py, data, work = argv[1:6]
    shutil.rmtree(work, ignore_errors=True)
    repo = os.path.join(work, "repo")
    os.makedirs(repo)
    return backend_so, swinrun, main_py, data, work, repo


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def write_model(repo, name, case_dir, config_body, version=1):
    """repo/name/config.pbtxt and repo/name/<version>/ linking the case's model.onnx (+ .data)."""
    d = os.path.join(repo, name, str(version))
    os.makedirs(d, exist_ok=True)
    for f in ("model.onnx", "model.onnx.data"):
        src, dst = os.path.join(case_dir, f), os.path.join(d, f)
        if os.path.exists(src) and not os.path.lexists(dst):
            os.symlink(src, dst)
    with open(os.path.join(repo, name, "config.pbtxt"), "w") as fh:
        fh.write('name: "%s"\nbackend: "swinrun"\n%s' % (name, config_body))


def window_config(cube, cin=1, cout=14, instances=1, threads=1, max_batch=0, extra=""):
    lead = "" if max_batch else "1, "
    d, h, w = cube
    return (
        "max_batch_size: %d\n"
        'input [ { name: "input", data_type: TYPE_FP32, dims: [ %s%d, %d, %d, %d ] } ]\n'
        'output [ { name: "logits", data_type: TYPE_FP32, dims: [ %s%d, %d, %d, %d ] } ]\n'
        "instance_group [ { kind: KIND_CPU, count: %d } ]\n"
        'parameters [ { key: "threads", value: { string_value: "%d" } }%s ]\n'
        % (max_batch, lead, cin, d, h, w, lead, cout, d, h, w, instances, threads, extra))


def segment_config(volume_type="TYPE_INT16", threads=1, extra="", channels=None):
    """channels: None for dims (nz, ny, nx), else (channels, nz, ny, nx) with that first dim."""
    lead = "" if channels is None else "%d, " % channels
    return (
        "max_batch_size: 0\n"
        'input [ { name: "VOLUME", data_type: %s, dims: [ %s-1, -1, -1 ] },\n'
        '        { name: "AFFINE", data_type: TYPE_FP64, dims: [ 4, 4 ] } ]\n'
        'output [ { name: "LABELS", data_type: TYPE_UINT16, dims: [ -1, -1, -1 ] } ]\n'
        "instance_group [ { kind: KIND_CPU, count: 1 } ]\n"
        'parameters [ { key: "mode", value: { string_value: "segment" } },\n'
        '             { key: "threads", value: { string_value: "%d" } }%s ]\n' % (volume_type, lead, threads, extra))


class Server:
    def __init__(self, backend_so, repo, work, explicit=None, exit_on_error=False):
        self.backend_dir = os.path.join(work, "backends")
        os.makedirs(os.path.join(self.backend_dir, "swinrun"), exist_ok=True)
        link = os.path.join(self.backend_dir, "swinrun", "libtriton_swinrun.so")
        if os.path.lexists(link):
            os.remove(link)
        os.symlink(os.path.abspath(backend_so), link)
        self.http_port, self.grpc_port, self.metrics_port = free_ports(3)
        self.log_path = os.path.join(work, "tritonserver.log")
        cmd = [TRITONSERVER, "--model-repository=" + repo, "--backend-directory=" + self.backend_dir,
               "--http-address=127.0.0.1", "--grpc-address=127.0.0.1", "--metrics-address=127.0.0.1",
               "--http-port=%d" % self.http_port, "--grpc-port=%d" % self.grpc_port,
               "--metrics-port=%d" % self.metrics_port, "--exit-on-error=%s" % ("true" if exit_on_error else "false"),
               "--metrics-interval-ms=200", "--exit-timeout-secs=20"]
        if explicit is not None:
            cmd.append("--model-control-mode=explicit")
            cmd += ["--load-model=" + m for m in explicit]
        self.cmd = cmd

    def __enter__(self):
        self.log = open(self.log_path, "w")
        env = dict(os.environ)
        # SWIN_TRITON_SERVER_PRELOAD: LD_PRELOAD for the server alone, e.g. libasan.so for a
        # backend built with -DSWIN_SANITIZE=address (tritonserver itself is not instrumented)
        if os.environ.get("SWIN_TRITON_SERVER_PRELOAD"):
            env["LD_PRELOAD"] = os.environ["SWIN_TRITON_SERVER_PRELOAD"]
        self.proc = subprocess.Popen(self.cmd, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True, env=env)
        deadline = time.time() + START_TIMEOUT_S
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("tritonserver exited with %d:\n%s" % (self.proc.returncode, self.log_tail()))
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/v2/health/live" % self.http_port, timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                pass
            time.sleep(0.3)
        self.stop()
        raise RuntimeError("tritonserver not live after %d s:\n%s" % (START_TIMEOUT_S, self.log_tail()))

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        """SIGTERM to the server's pid, SIGKILL if it has not exited 30 s later."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()

    def log_tail(self, n=40):
        self.log.flush()
        with open(self.log_path) as fh:
            return "".join(fh.readlines()[-n:])

    def log_text(self):
        self.log.flush()
        with open(self.log_path) as fh:
            return fh.read()

    def http(self):
        import tritonclient.http as httpclient
        return httpclient.InferenceServerClient("127.0.0.1:%d" % self.http_port, network_timeout=300,
                                                connection_timeout=300)

    def grpc(self):
        import tritonclient.grpc as grpcclient
        return grpcclient.InferenceServerClient("127.0.0.1:%d" % self.grpc_port)

    def rss_kib(self):
        with open("/proc/%d/status" % self.proc.pid) as fh:
            return int(re.search(r"VmRSS:\s+(\d+) kB", fh.read()).group(1))

    def metric(self, name, **labels):
        """The value of a Prometheus metric line whose labels include `labels` (0 when absent)."""
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % self.metrics_port, timeout=10) as r:
            text = r.read().decode()
        for line in text.splitlines():
            m = re.match(r"^%s\{([^}]*)\} (\S+)$" % re.escape(name), line)
            if m:
                got = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
                if all(got.get(k) == str(v) for k, v in labels.items()):
                    return float(m.group(2))
        return 0.0

    def metric_reaching(self, name, target, timeout_s=5.0, **labels):
        """metric() once it has reached `target`, or its value after timeout_s: Triton counts a
        request after its response is out, so a client can read the count just before the last
        increment."""
        deadline = time.monotonic() + timeout_s
        while True:
            value = self.metric(name, **labels)
            if value >= target or time.monotonic() >= deadline:
                return value
            time.sleep(0.05)


def infer_window(client, model, x, out="logits"):
    import tritonclient.http as httpclient
    i = httpclient.InferInput("input", list(x.shape), "FP32")
    i.set_data_from_numpy(np.ascontiguousarray(x, dtype=np.float32), binary_data=True)
    return client.infer(model, [i], outputs=[httpclient.InferRequestedOutput(out, binary_data=True)]).as_numpy(out)


def infer_segment(client, model, volume, affine):
    import tritonclient.http as httpclient
    v = httpclient.InferInput("VOLUME", list(volume.shape), {np.int16: "INT16", np.float32: "FP32"}[volume.dtype.type])
    v.set_data_from_numpy(np.ascontiguousarray(volume), binary_data=True)
    a = httpclient.InferInput("AFFINE", [4, 4], "FP64")
    a.set_data_from_numpy(np.ascontiguousarray(affine, dtype=np.float64), binary_data=True)
    return client.infer(model, [v, a], outputs=[httpclient.InferRequestedOutput("LABELS", binary_data=True)]) \
        .as_numpy("LABELS")


def swinrun_forward(swinrun, case_dir, x, out_path, threads=1):
    """`swinrun forward` on x (saved beside out_path) with `threads` CPU threads; its logits."""
    in_path = out_path + ".in.npy"
    np.save(in_path, np.ascontiguousarray(x, dtype=np.float32))
    subprocess.run([swinrun, "forward", os.path.join(case_dir, "model.onnx"), in_path, out_path, "--backend", "cpu",
                    "--threads", str(threads)], check=True, stdout=subprocess.DEVNULL, timeout=300)
    return np.load(out_path)


def check(cond, what):
    if not cond:
        raise AssertionError(what)
    print("ok:", what)
