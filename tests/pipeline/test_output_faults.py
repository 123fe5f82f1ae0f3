#!/usr/bin/env python3
"""Outputs that cannot be written, through the CLI (segment and forward), with a real model:
  - a full disk: each output in turn (label map, --probabilities, --preview, --json,
    forward's .npy) on a full filesystem (a tmpfs filled to the brim), and RLIMIT_FSIZE
    (SIGXFSZ ignored: writes fail with EFBIG) for the label map (written after the cubes, and
    written while they run), the probabilities and the .npy;
  - a read-only output folder (a read-only tmpfs; root ignores permission bits);
  - an output path that is a directory.
Each must exit 2 with a one-line message, leave no output of the volume (a label map is not
published when its probabilities fail) and no temporary file; a failed --json leaves the
finished volume's outputs (the report is written last).
The mounts need root and a private mount namespace: the test re-runs itself under
`unshare -m`; where that is impossible the tmpfs cases are reported as skipped with the
reason, and the RLIMIT_FSIZE and directory cases still run.

    test_output_faults.py SWINRUN MODEL WORKDIR"""
import os
import resource
import shutil
import signal
import subprocess
import sys

import nibabel as nib
import numpy as np

IN_NAMESPACE = "SWIN_OUTPUT_FAULTS_NS"


def save(path, shape, zooms):
    rng = np.random.default_rng(5)
    nib.save(nib.Nifti1Image(rng.integers(-500, 500, size=shape).astype(np.int16), np.diag([*zooms, 1.0])), path)
    return path


def file_size_limit(nbytes):
    def set_limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, nbytes))
    return set_limit


def mount_tmpfs(path, options):
    os.makedirs(path, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", path], capture_output=True, text=True)
    return r.returncode == 0, r.stderr.strip()


def fill(path):
    """Fills the filesystem of path to the last block."""
    fd = os.open(os.path.join(path, "filler"), os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:
        pass
    os.close(fd)


def main():
    swinrun, model, work = sys.argv[1:4]
    if os.environ.get(IN_NAMESPACE) is None and os.geteuid() == 0 and shutil.which("unshare"):
        probe = subprocess.run(["unshare", "-m", "--propagation", "private", "true"], capture_output=True)
        if probe.returncode == 0:
            os.environ[IN_NAMESPACE] = "1"
            os.execvp("unshare", ["unshare", "-m", "--propagation", "private", sys.executable, *sys.argv])
        os.environ[IN_NAMESPACE] = "no: unshare -m fails: " + probe.stderr.decode().strip()
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    ok = True

    def check(what, cond, detail=""):
        nonlocal ok
        print(f"{what:72s} {'ok' if cond else 'FAIL'} {detail}")
        ok &= bool(cond)

    def listing(d):
        return sorted(os.listdir(d)) if os.path.isdir(d) else []

    def expect_refusal(what, args, dirs, expect_in_msg, keep=(), preexec=None):
        """Runs swinrun args: exit 2, a last line 'swinrun: ...' naming expect_in_msg (forward prints
        its plan before), dirs holding only keep."""
        r = subprocess.run([swinrun, *args], capture_output=True, text=True, preexec_fn=preexec)
        msg = r.stderr.strip().split("\n")[-1]
        left = sorted(f for d in dirs for f in listing(d) if f not in ("filler",))
        check(what, r.returncode == 2 and msg.startswith("swinrun: ") and expect_in_msg in msg and left == sorted(keep),
              f"rc={r.returncode} left={left} msg={msg[-160:]}")

    a = save(os.path.join(work, "a.nii.gz"), (40, 30, 20), (1.5, 1.5, 2.0))
    x = os.path.join(work, "x.npy")
    np.save(x, np.random.default_rng(1).random((1, 1, 32, 32, 32), dtype=np.float32))
    seg = [a, "--model", model]
    disk = os.path.join(work, "disk")
    os.makedirs(disk)
    out = os.path.join(disk, "o.nii.gz")

    # RLIMIT_FSIZE: needs nothing but setrlimit
    expect_refusal("file size limit: label map (.nii, 24 kB over an 8 kB limit)",
                   [a, os.path.join(disk, "o.nii"), "--model", model], [disk], "File too large",
                   preexec=file_size_limit(8192))
    # a long CT whose label planes go out while the cubes run (pipeline/label_writer.h): the
    # write fails on the label writer's thread, the cubes stop, nothing is published
    long_ct = save(os.path.join(work, "long.nii.gz"), (30, 28, 90), (1.5, 1.5, 2.0))
    expect_refusal("file size limit: label map written while the cubes run (.nii)",
                   [long_ct, os.path.join(disk, "o.nii"), "--model", model], [disk], "File too large",
                   preexec=file_size_limit(8192))
    expect_refusal("file size limit: probabilities (the label map not published)",
                   [*seg[:1], out, *seg[1:], "--probabilities", os.path.join(disk, "p.nii.gz")], [disk],
                   "File too large", preexec=file_size_limit(64 << 10))
    expect_refusal("file size limit: forward .npy", ["forward", model, x, os.path.join(disk, "y.npy")], [disk],
                   "File too large", preexec=file_size_limit(64 << 10))

    # an output path that is a directory
    for what, name, opt in (("label map", "d.nii.gz", None), ("probabilities", "dp.nii.gz", "--probabilities"),
                            ("preview", "dv.png", "--preview"), ("JSON report", "dj.json", "--json")):
        d = os.path.join(disk, name)
        os.makedirs(d)
        args = [a, d, "--model", model] if opt is None else [a, out, "--model", model, opt, d]
        expect_refusal(f"output is a directory: {what}", args, [disk], "is a directory", keep=[name])
        check(f"  ... and the directory {name} is untouched", os.path.isdir(d) and not os.listdir(d))
        os.rmdir(d)
    d = os.path.join(disk, "dy.npy")
    os.makedirs(d)
    expect_refusal("output is a directory: forward .npy", ["forward", model, x, d], [disk], "is a directory",
                   keep=["dy.npy"])
    os.rmdir(d)

    ns = os.environ.get(IN_NAMESPACE, "no: not root or no unshare")
    if ns != "1":
        print(f"{'full and read-only filesystems (tmpfs)':72s} SKIPPED ({ns})")
        sys.exit(0 if ok else 1)

    # a full filesystem: one output at a time on it, the others beside the input
    full = os.path.join(work, "full")
    mounted, why = mount_tmpfs(full, "size=256k")
    if not mounted:
        print(f"{'full and read-only filesystems (tmpfs)':72s} SKIPPED (mount: {why})")
        sys.exit(0 if ok else 1)
    fill(full)
    here = os.path.join(work, "here")
    os.makedirs(here)
    o = os.path.join(here, "o.nii.gz")
    for what, args, keep in (
            ("label map", [a, os.path.join(full, "o.nii.gz"), "--model", model], []),
            ("probabilities", [a, o, "--model", model, "--probabilities", os.path.join(full, "p.nii.gz")], []),
            ("preview", [a, o, "--model", model, "--preview", os.path.join(full, "v.png")], []),
            ("JSON report (the volume's outputs stay)", [a, o, "--model", model, "--json", os.path.join(full, "j.json")],
             ["o.nii.gz"]),
            ("forward .npy", ["forward", model, x, os.path.join(full, "y.npy")], [])):
        expect_refusal(f"full disk: {what}", args, [full, here], "No space left", keep=keep)
        for f in listing(here):
            os.remove(os.path.join(here, f))
    subprocess.run(["umount", full])

    # a read-only folder: refused before the model runs
    ro = os.path.join(work, "ro")
    mounted, why = mount_tmpfs(ro, "ro,size=64k")
    check("read-only tmpfs mounted", mounted, why)
    if mounted:
        for what, args in (("label map", [a, os.path.join(ro, "o.nii.gz"), "--model", model]),
                           ("probabilities", [a, o, "--model", model, "--probabilities", os.path.join(ro, "p.nii.gz")]),
                           ("preview", [a, o, "--model", model, "--preview", os.path.join(ro, "v.png")]),
                           ("JSON report", [a, o, "--model", model, "--json", os.path.join(ro, "j.json")]),
                           ("--out-dir", ["segment", "--model", model, "--out-dir", ro, a]),
                           ("forward .npy", ["forward", model, x, os.path.join(ro, "y.npy")])):
            expect_refusal(f"read-only folder: {what}", args, [ro, here], "Read-only file system")
        subprocess.run(["umount", ro])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
