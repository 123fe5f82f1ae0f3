#!/usr/bin/env python3
"""The Python row: one whole CT through (a) MONAI + PyTorch on the CPU, (b) MONAI's
sliding_window_inference with swinrun.Model as the predictor, (c) swinrun.Model.segment; each in
its own process, timed (wall, whole process and the segmentation alone) with its peak RSS
(GNU time), one after the other in one run.

    python_row.py OUT_DIR [--feature-size 48] [--classes 14] [--threads 2]
                  [--shape 400 400 160] [--spacing 0.9 0.9 3.0]

The model is a MONAI SwinUNETR with random weights (tools/export/export_swin_unetr.py's
randomisation) saved by torch.save: (a) runs it in PyTorch, (b) and (c) load the .pt. The CT
is tools/export/make_ct_phantom.py's phantom (default: 3 mm slices, 64 cubes of 96^3 at the
usual 1.5 x 1.5 x 2 mm). (a) and (b) are tools/export/pipeline_reference.py (MONAI's transforms,
sliding_window_inference with sw_batch_size 1, overlap 0.5, Invertd); (c) is the same recipe in C.
Writes OUT_DIR/results.json and OUT_DIR/results.md (with this command)."""
import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.abspath(os.path.join(here, "..", ".."))
CONFIGS = {
    "monai_torch": "(a) MONAI + PyTorch, CPU",
    "monai_swinrun": "(b) MONAI sliding_window_inference, swinrun.Model as predictor",
    "swinrun_segment": "(c) swinrun.Model.segment",
}


def worker(config, model, ct, labels_out, threads):
    """Runs one configuration; prints {"seconds": the segmentation, model loading included}."""
    import numpy as np

    t0 = time.monotonic()
    if config == "swinrun_segment":
        import nibabel as nib

        import swinrun
        img = nib.load(ct)
        labels, _ = swinrun.Model(model, threads=threads).segment(img.dataobj, img.affine, cube=96)
    else:
        sys.path.insert(0, os.path.join(repo, "tools", "export"))
        import torch
        from pipeline_reference import reference
        torch.set_num_threads(threads)
        if config == "monai_torch":
            import export_swin_unetr as ex
            with open(model + ".json") as f:
                net = ex.build_model(json.load(f))
            net.load_state_dict(torch.load(model, weights_only=True))
            predict = net
        else:
            import swinrun
            predict = swinrun.Model(model, threads=threads)
        labels = reference(ct, predict, (96, 96, 96))[0]
    seconds = time.monotonic() - t0
    np.save(labels_out, np.asarray(labels))
    print(json.dumps({"seconds": seconds}))


def make_inputs(a, work):
    ct, model = os.path.join(work, "ct.nii.gz"), os.path.join(work, f"f{a.feature_size}.pt")
    if not os.path.exists(ct):
        subprocess.run([sys.executable, os.path.join(repo, "tools", "export", "make_ct_phantom.py"), ct, "--shape",
                        *map(str, a.shape), "--spacing", *map(str, a.spacing)], check=True)
    if not os.path.exists(model):
        sys.path.insert(0, os.path.join(repo, "tools", "export"))
        import torch
        import export_swin_unetr as ex
        sys.path.insert(0, os.path.join(repo, "tests", "python"))
        from conftest import BASE
        cfg = dict(BASE, feature_size=a.feature_size, out_channels=a.classes)
        net = ex.build_model(cfg)
        ex.randomize(net, seed=48)
        torch.save(net.state_dict(), model)
        with open(model + ".json", "w") as f:
            json.dump(cfg, f)
    return ct, model


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--feature-size", type=int, default=48)
    ap.add_argument("--classes", type=int, default=14)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--shape", type=int, nargs=3, default=[400, 400, 160])
    ap.add_argument("--spacing", type=float, nargs=3, default=[0.9, 0.9, 3.0])
    ap.add_argument("--worker", nargs=4, metavar=("CONFIG", "MODEL", "CT", "LABELS"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        return worker(*a.worker, a.threads)
    import numpy as np

    work = os.path.join(a.out_dir, "work")
    os.makedirs(work, exist_ok=True)
    ct, model = make_inputs(a, work)
    rows = {}
    for config in CONFIGS:
        labels, timef = os.path.join(work, f"{config}.npy"), os.path.join(work, f"{config}.time")
        t0 = time.monotonic()
        r = subprocess.run(["/usr/bin/time", "-o", timef, "-f", "%M %e", sys.executable, __file__, a.out_dir,
                            "--threads", str(a.threads), "--worker", config, model, ct, labels],
                           capture_output=True, text=True)
        if r.returncode:
            sys.exit(f"{config} failed:\n{r.stderr}")
        with open(timef) as f:
            rss_kib, wall = f.read().split()[-2:]
        rows[config] = dict(json.loads(r.stdout.strip().splitlines()[-1]), process_seconds=float(wall),
                            peak_rss_mib=int(rss_kib) / 1024, wall_seconds=time.monotonic() - t0)
        print(config, rows[config], flush=True)
    ref = np.load(os.path.join(work, "monai_torch.npy"))
    for config in CONFIGS:
        rows[config]["same_labels_as_a"] = float((np.load(os.path.join(work, f"{config}.npy")) == ref).mean())
    report = dict(command=" ".join(shlex.quote(x) for x in [sys.executable] + sys.argv),
                  ct=dict(shape=a.shape, spacing=a.spacing), feature_size=a.feature_size, classes=a.classes,
                  threads=a.threads, machine=platform.processor() or platform.machine(), cpus=os.cpu_count(),
                  loadavg_after=os.getloadavg(), rows=rows)
    report["ct"]["grid_after_resampling"] = [round(s * d / t) for s, d, t in
                                            zip(a.shape, a.spacing, (1.5, 1.5, 2.0))]
    with open(os.path.join(a.out_dir, "results.json"), "w") as f:
        json.dump(report, f, indent=1)
    lines = [f"# One CT from Python: MONAI + PyTorch, MONAI with swinrun as predictor, swinrun.Model.segment", "",
             f"Command: `{report['command']}`", "",
             f"CT phantom {a.shape} at {a.spacing} mm; SwinUNETR f={a.feature_size}, {a.classes} classes, random "
             f"weights; cube 96^3, overlap 0.5; {a.threads} threads on {os.cpu_count()} CPUs; load average after "
             f"the run {os.getloadavg()[0]:.1f}.", "",
             "| configuration | segmentation s | process s | peak RSS MiB | labels equal to (a) |", "|---|---|---|---|---|"]
    for config, name in CONFIGS.items():
        r = rows[config]
        lines.append(f"| {name} | {r['seconds']:.1f} | {r['process_seconds']:.1f} | {r['peak_rss_mib']:.0f} | "
                     f"{100 * r['same_labels_as_a']:.3f} % |")
    with open(os.path.join(a.out_dir, "results.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
