"""What the node's tests share: CT series written at test time (tests/formats/dicom/make_series.py),
Orthanc started on loopback ports with its own storage (its REST API is the independent count
of what arrived), `swinrun serve` started and stopped by process id, DCMTK's echoscu / storescu
as the scanner, and polling with deadlines."""
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "formats", "dicom"))
import make_series as ms  # noqa: E402
import numpy as np  # noqa: E402

ok = True
DICOMWEB_PLUGIN = "/usr/share/orthanc/plugins/libOrthancDicomWeb.so"


def check(what, cond, detail=""):
    global ok
    print(f"{what:<78} {'ok' if cond else 'FAIL'} {detail}", flush=True)
    ok = ok and bool(cond)
    return bool(cond)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, fn, timeout=60.0, step=0.1):
    """fn() until it returns something true; that value, or None after timeout (reported)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = fn()
        if v:
            return v
        time.sleep(step)
    check(f"in time: {what}", False, f"(waited {timeout:.0f} s)")
    return None


def make_series(folder, big=False, seed=3, edit=None, slices=16):
    """A CT phantom series of a study of its own, 48 x 40 x slices (128 x 128 x 40 when big: about
    100 cubes of the f=12 test model, some seconds on one thread); edit(name, ds) may change each
    slice. Returns (study UID, series UID, the SOP instance UIDs)."""
    if big:
        shape, spacing, extent = (128, 128, 40), (1.5, 1.5, 2.0), (1.5, 1.5, 2.0)
    else:
        shape, spacing, extent = (48, 40, slices), (0.9, 0.7, 2.5), (0.7 * 64 / 48 * 4, 0.9 * 48 / 40 * 4, 2.5)
    vol = ms.phantom(shape, extent, seed=seed)
    geo = ms.Geometry((1, 0, 0), (0, 1, 0), *spacing)
    uids = ms.new_uids()
    ms.write_series(folder, geo, vol, uids=uids, rng=np.random.default_rng(seed), shuffle=False)
    import pydicom
    sops = []
    for name in sorted(os.listdir(folder)):
        p = os.path.join(folder, name)
        ds = pydicom.dcmread(p)
        ds.PatientID = "PAT-" + uids["study"][-8:]  # a patient identifier the log must not show
        if edit:
            edit(name, ds)
        ds.save_as(p, enforce_file_format=True)
        sops.append(ds.SOPInstanceUID)
    return uids["study"], uids["series"], sops


class Orthanc:
    """Debian's Orthanc on 127.0.0.1 with its storage in work/; modalities: {name: (aet, port)};
    dicomweb: its DICOMweb plugin (Debian's orthanc-dicomweb) at /dicom-web; users: {user:
    password}, HTTP Basic required."""

    def __init__(self, work, modalities, http_port=None, dicom_port=None, dicomweb=False, users=None):
        self.work = work
        self.http = http_port or free_port()
        self.dicom = dicom_port or free_port()
        os.makedirs(work, exist_ok=True)
        cfg = {"Name": "swinrun-test", "StorageDirectory": os.path.join(work, "storage"),
               "IndexDirectory": os.path.join(work, "index"), "HttpPort": self.http, "DicomPort": self.dicom,
               "DicomAet": "ORTHANC", "RemoteAccessAllowed": False, "AuthenticationEnabled": False,
               "Plugins": [], "StableAge": 1, "SaveJobs": False, "DicomScuTimeout": 30,
               "DicomModalities": {n: {"AET": aet, "Host": "127.0.0.1", "Port": port}
                                   for n, (aet, port) in modalities.items()}}
        self.auth = {}
        if users:  # HTTP Basic on its REST API and DICOMweb; the harness calls it as the first user
            import base64
            cfg["AuthenticationEnabled"], cfg["RegisteredUsers"] = True, users
            user, password = next(iter(users.items()))
            self.auth = {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}
        if dicomweb:
            cfg["Plugins"] = [DICOMWEB_PLUGIN]
            cfg["DicomWeb"] = {"Enable": True, "Root": "/dicom-web/"}
        self.cfg = os.path.join(work, "orthanc.json")
        with open(self.cfg, "w") as f:
            json.dump(cfg, f)
        self.proc = None

    def start(self):
        self.log = open(os.path.join(self.work, "orthanc.log"), "ab")
        self.proc = subprocess.Popen(["Orthanc", self.cfg], stdout=self.log, stderr=subprocess.STDOUT)
        return wait_for("Orthanc answers", lambda: self.get("/system"), timeout=30)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def get(self, path, raw=False):
        try:
            req = urllib.request.Request(f"http://127.0.0.1:{self.http}{path}", headers=self.auth)
            with urllib.request.urlopen(req, timeout=30) as r:
                data = r.read()
                return data if raw else json.loads(data)
        except (urllib.error.URLError, ConnectionError, OSError):
            return None

    def post(self, path, body, raw=False):
        data = body if raw else json.dumps(body).encode()
        req = urllib.request.Request(f"http://127.0.0.1:{self.http}{path}", data=data, method="POST", headers=self.auth)
        with urllib.request.urlopen(req, timeout=120) as r:
            return json.loads(r.read())

    def upload(self, folder):
        for name in sorted(os.listdir(folder)):
            with open(os.path.join(folder, name), "rb") as f:
                self.post("/instances", f.read(), raw=True)

    def study(self, study_uid):
        """Orthanc's study of that StudyInstanceUID: {modality: [instance ids]}, or {}."""
        found = self.post("/tools/lookup", study_uid.encode(), raw=True)
        ids = [x["ID"] for x in found if x["Type"] == "Study"]
        if not ids:
            return {}
        out = {}
        for s in self.get(f"/studies/{ids[0]}/series") or []:
            out.setdefault(s["MainDicomTags"].get("Modality", ""), []).extend(s["Instances"])
        return out

    def instance(self, iid):
        import pydicom
        import io
        return pydicom.dcmread(io.BytesIO(self.get(f"/instances/{iid}/file", raw=True)))


class Node:
    """swinrun serve on a config written from keys; work/ holds its config, spool and log."""

    def __init__(self, swinrun, work, model, port=None, **keys):
        self.swinrun, self.work = swinrun, work
        self.port = port or free_port()
        self.spool = os.path.join(work, "spool")
        self.log = os.path.join(work, "node.log")
        cfg = {"ae_title": "SWINRUN", "port": self.port, "spool": self.spool, "log": self.log, "model": model,
               "backend": "cpu", "threads": 2, "stable_age_s": 1,
               "callers": [{"ae_title": "SCANNER"}, {"ae_title": "ORTHANC", "host": "127.0.0.1"}],
               "delivery": {"attempts": 5, "first_delay_s": 0.5, "max_delay_s": 2, "timeout_s": 10}}
        cfg.update(keys)
        os.makedirs(work, exist_ok=True)
        self.cfg = os.path.join(work, "node.json")
        with open(self.cfg, "w") as f:
            json.dump(cfg, f, indent=1)
        self.proc = None

    def start(self):
        self.err = open(os.path.join(self.work, "node.stderr"), "ab")
        self.proc = subprocess.Popen([self.swinrun, "serve", self.cfg], stdout=self.err, stderr=subprocess.STDOUT)
        return wait_for("the node answers C-ECHO", lambda: self.proc.poll() is None and echo(self.port), timeout=60)

    def kill9(self):
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def terminate(self, timeout=120):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill9()
            return None

    def events(self, kind=None):
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            lines = [json.loads(line) for line in f if line.strip()]
        return [e for e in lines if kind is None or e["event"] == kind]

    def status(self):
        try:
            with open(os.path.join(self.spool, "status.json")) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def idle(self):
        """Nothing arriving, queued, running or waiting for delivery (status.json, written each second)."""
        s = self.status()
        return s and not (s["arriving_studies"] or s["queued"] or s["in_flight"] or s["outbox"])

    def jobs(self, folder):
        p = os.path.join(self.spool, folder)
        return sorted(n for n in os.listdir(p) if not n.startswith(".")) if os.path.isdir(p) else []

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.kill9()


def echo(port, aet="SCANNER", called="SWINRUN"):
    return subprocess.run(["echoscu", "-to", "5", "-aet", aet, "-aec", called, "127.0.0.1", str(port)],
                          capture_output=True).returncode == 0


def storescu(port, files, aet="SCANNER", called="SWINRUN", wait=True):
    cmd = ["storescu", "-v", "-to", "10", "-aet", aet, "-aec", called, "127.0.0.1", str(port)] + list(files)
    if not wait:
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def files_of(folder):
    return [os.path.join(folder, n) for n in sorted(os.listdir(folder))]


def model_seed(model):
    """The UID seed the node derives from its model: independent of its C code."""
    with open(model, "rb") as f:
        return "swinrun-node model " + hashlib.sha256(f.read()).hexdigest()[:32]


def derived_uid(seed, series_uid, what):
    d = hashlib.sha256(seed.encode() + b"\0" + series_uid.encode() + b"\0" + what.encode()).digest()
    return "2.25." + str(int.from_bytes(d[:16], "big"))
