#!/usr/bin/env python3
"""swinbench: swinrun against ONNX Runtime, OpenVINO and PyTorch on the same ONNX file and input, in one run.

  PY=$(tools/ci/setup_env.sh --print-python)
  $PY bench/peers/swinbench.py --export --feature-size 48 --cube 96 96 96 --runs 3
  $PY bench/peers/swinbench.py --model test-data/f12_c32_ts/model.onnx --input test-data/f12_c32_ts/input.npy

Configurations (each in its own process, so that peak RSS does not mix):
  ort-cpu           ONNX Runtime CPU provider, defaults
  ort-cpu-noarena   ONNX Runtime CPU provider, enable_cpu_mem_arena=False
  ort-cpu-samereq   ONNX Runtime CPU provider, arena_extend_strategy kSameAsRequested
  ort-cuda          ONNX Runtime CUDA provider, defaults                        (GPU only)
  ort-cuda-lowmem   CUDA provider, cudnn_conv_use_max_workspace=0 + kSameAsRequested (GPU only)
  ov-cpu-f32        OpenVINO CPU plugin, INFERENCE_PRECISION_HINT=f32            (bench/peers/peer_worker.py)
  ov-cpu-default    OpenVINO CPU plugin, its default precision (bf16 on CPUs with native bf16;
                    the results name what the compiled model picked)
  torch-cpu         PyTorch eager, MONAI SwinUNETR with the export's weights   (bench/peers/peer_worker.py)
  torch-cuda        the same on the GPU, float32 with TF32 off                   (GPU only)
  torch-cuda-tf32   the same with TF32 matmuls and convolutions                  (GPU only)
  torch-cuda-amp    the same under torch.autocast float16 (AMP)                  (GPU only)
  swinrun-cpu       swinrun's CPU backend (bench/peers/swinrun_worker.c on the C API)
  swinrun-cpu-bf16  swinrun's CPU backend, --precision bf16
  swinrun-cuda      swinrun's CUDA backend                                       (GPU only)
  swinrun-cuda-fp16 swinrun's CUDA backend, --precision fp16                     (GPU only)
Without an NVIDIA GPU (nvidia-smi -L lists none) the GPU configurations are skipped and the
output says so.

Schedule, per device: the swinrun processes (one per swinrun configuration) start first and make
--warmup untimed runs; then the peers (ONNX Runtime, OpenVINO, PyTorch configurations) take
turns, each in a process alive only during its own phase: --warmup untimed runs, then --runs
rounds run back to back, the peer then each swinrun configuration. Each swinrun/peer time ratio
is taken within such a round (a noisy machine slows both); the reported ratio is the median of
the round ratios. swinrun's own time per window is over all its timed runs (--runs per peer).
Thread scaling (--scaling-threads N): afterwards every configuration runs again in a fresh
process with N threads (--warmup untimed runs, --scaling-runs timed), reported next to its
all-threads median.

Reported per configuration: median/min/max seconds per window; peak RSS of its process (KiB
from wait4(), i.e. the OS's ru_maxrss; an ORT process includes the Python interpreter, numpy
and onnxruntime, whose RSS before the session is reported as its base); swinrun's planned bytes
(weights + arena); device memory (NVML or nvidia-smi polling) on a GPU; agreement of the logits
with the reference configuration (ort-cpu unless --reference): max |logit diff|, the project's
criterion (tools/export/check_logits.py: max|d| <= 1e-3 * max(1, max|ref|) and labels equal where the
reference's top-2 gap > 1e-3), % voxels with the same label, Dice per class of the labels.

Input: --input X.npy (float32 (1, C, D, H, W)), --input X.nii[.gz] (a NIfTI volume: the window
is its centre cube, HU clipped to [-175, 250] and scaled to [0, 1] when it looks like CT, else
min-max scaled), or nothing: a deterministic CT-like cube from tools/export/ort_reference.py (--seed).
Per-volume timing of a NIfTI (swinrun IN.nii.gz OUT.nii.gz) is reported only when the swinrun
CLI has a volume path; otherwise the output says it was not measured.

Output: a Markdown table on stdout, and in --out-dir (default bench/out/<model>_<cube>): results.json,
results.md and results.png (time and memory per configuration). Exit status: 0 all ran and every
configuration meets the agreement criterion, 1 a configuration failed or disagreed, 2 bad arguments.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

from agreement import REDUCED, against_reference
from bench_common import HERE, REPO, BadArgs, die, log
from bench_configs import ALL_CONFIGS, DEVICE, find_swinrun, runnable, swinrun_volume_support
from bench_schedule import Schedule
from gpu_memory import GpuMemPoller
from machine import load_snapshot, machine_info
from model_input import bundle_twin, export_model, model_cube_and_channels, read_input
from per_volume import volume_phase
from report_chart import chart
from report_md import markdown
from results_doc import config_results, document


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="swinbench.py", description=__doc__.split("\n")[0],
                                epilog="Details: the module docstring (head -60 bench/peers/swinbench.py).",
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_argument_group("model (one of)")
    g.add_argument("--model", help="an existing Swin UNETR ONNX file, or a MONAI bundle folder (swinrun runs the "
                                   "folder, the ONNX peers its twin exported by tools/export/bundle_to_onnx.py)")
    g.add_argument("--export", action="store_true",
                   help="export one with tools/export/export_swin_unetr.py into bench/models/f<F>_<cube>/ (kept; reused)")
    p.add_argument("--feature-size", type=int, default=48, help="with --export (default 48)")
    p.add_argument("--exporter", default="torchscript", choices=["torchscript", "dynamo"], help="with --export")
    p.add_argument("--cube", type=int, nargs=3, metavar=("D", "H", "W"),
                   help="window; default: the model's export cube (required for --export or a dynamic model)")
    p.add_argument("--input", help="X.npy (1, C, D, H, W) or a NIfTI X.nii[.gz]; default: a generated CT-like cube")
    p.add_argument("--seed", type=int, default=0, help="seed of the generated input (default 0)")
    p.add_argument("--runs", type=int, default=3, help="timed runs per configuration (default 3)")
    p.add_argument("--warmup", type=int, default=1, help="untimed runs per configuration first (default 1)")
    p.add_argument("--threads", type=int, default=0, help="CPU threads for every runtime (default 0 = every core)")
    p.add_argument("--scaling-threads", type=int, default=None, metavar="N",
                   help="afterwards run every configuration again with N threads (thread scaling; e.g. 1)")
    p.add_argument("--scaling-runs", type=int, default=1, help="timed runs per configuration with --scaling-threads")
    p.add_argument("--scaling-warmup", type=int, default=None,
                   help="untimed runs first with --scaling-threads (default: --warmup)")
    p.add_argument("--configs", default="all",
                   help=f"comma-separated subset of: {', '.join(ALL_CONFIGS)} (default all; GPU ones skipped without a GPU)")
    p.add_argument("--reference", default="ort-cpu", help="configuration whose logits are the reference (default ort-cpu)")
    p.add_argument("--build", help="swinrun build folder with swinrun and bench/swinrun_bench_worker "
                                   "(default: build-bench, then build)")
    p.add_argument("--worker", help="path of swinrun_bench_worker (overrides --build)")
    p.add_argument("--swinrun", help="path of the swinrun CLI (overrides --build)")
    p.add_argument("--out-dir", help="where results.json/.md/.png go (default bench/out/<model>_<cube>)")
    p.add_argument("--no-chart", action="store_true", help="skip the PNG")
    p.add_argument("--keep-logits", action="store_true", help="keep each configuration's logits .npy in --out-dir")
    p.add_argument("--volume-runs", type=int, default=1,
                   help="with a NIfTI --input: pairs of whole-volume runs (ORT pipeline, swinrun CLI) (default 1; 0 = none)")
    p.add_argument("--timeout", type=float, default=1800, help="seconds to wait for one answer of a worker (default 1800)")
    a = p.parse_args(argv)
    a.argv_used = list(sys.argv[1:] if argv is None else argv)

    try:
        return run(a)
    except BadArgs as e:
        die(str(e), 2)


def checked_configs(a) -> list:
    """The configurations asked for, after checking the arguments that need no file."""
    if a.runs < 1:
        raise BadArgs("--runs must be >= 1")
    if a.volume_runs < 0:
        raise BadArgs("--volume-runs must be >= 0")
    if a.warmup < 0:
        raise BadArgs("--warmup must be >= 0")
    if a.threads < 0:
        raise BadArgs("--threads must be >= 0")
    if a.scaling_threads is not None and a.scaling_threads < 1:
        raise BadArgs("--scaling-threads must be >= 1")
    if a.scaling_runs < 1:
        raise BadArgs("--scaling-runs must be >= 1")
    if a.scaling_warmup is None:
        a.scaling_warmup = a.warmup
    if a.scaling_warmup < 0:
        raise BadArgs("--scaling-warmup must be >= 0")
    if bool(a.model) == bool(a.export):
        raise BadArgs("give exactly one of --model FILE or --export")
    if a.cube and any(c <= 0 or c % 32 for c in a.cube):
        raise BadArgs(f"--cube takes positive multiples of 32, got {a.cube}")
    wanted = ALL_CONFIGS if a.configs == "all" else [c.strip() for c in a.configs.split(",") if c.strip()]
    bad = [c for c in wanted if c not in ALL_CONFIGS]
    if bad:
        raise BadArgs(f"unknown configuration(s) {', '.join(bad)} (known: {', '.join(ALL_CONFIGS)})")
    if a.reference not in wanted:
        raise BadArgs(f"--reference {a.reference} is not among the configurations run")
    return wanted


def run(a) -> int:
    import numpy as np
    wanted = checked_configs(a)
    if a.export:
        if not a.cube:
            raise BadArgs("--export needs --cube D H W")
        model = export_model(a.feature_size, a.cube, a.exporter)
    elif os.path.isdir(a.model):
        # a MONAI bundle: swinrun's workers run the folder, the ONNX peers its twin at the cube
        model = bundle_twin(a.model, a.cube)
    else:
        model = a.model
        if not os.path.isfile(model):
            raise BadArgs(f"{model}: no such file")
    swin_model = a.model if a.model and os.path.isdir(a.model) else model
    mcube, in_ch, feature = model_cube_and_channels(model)
    cube = list(a.cube) if a.cube else mcube
    if mcube and cube != mcube:
        raise BadArgs(f"{model} is exported for cube {mcube} (static); --cube {cube} would not run in ONNX Runtime")
    x, input_info = read_input(a.input, cube, a.seed, in_ch)
    cube = list(x.shape[2:])

    machine = machine_info()
    gpus = machine["gpus"]
    cli, worker_bin = find_swinrun(a.build)
    if a.worker:
        worker_bin = a.worker
    if a.swinrun:
        cli = a.swinrun
    configs, skipped = runnable(wanted, gpus, worker_bin)

    tag = os.path.basename(os.path.dirname(os.path.abspath(model))) if os.path.basename(model) == "model.onnx" \
        else os.path.splitext(os.path.basename(model))[0]
    out_dir = a.out_dir or os.path.join(REPO, "bench", "out", f"{tag}_{'x'.join(map(str, cube))}")
    os.makedirs(out_dir, exist_ok=True)
    in_path = os.path.join(out_dir, "input.npy")
    np.save(in_path, x)

    before = load_snapshot()
    log(f"model {model}, cube {cube}, configurations {', '.join(configs)}"
        + (f"; skipped {', '.join(skipped)}" if skipped else ""))

    poller = GpuMemPoller() if gpus else None
    sched = Schedule(a, model, in_path, worker_bin, out_dir, swin_model)
    failures, logits = sched.failures, sched.logits
    t_start = time.time()
    sched.alternate(configs)
    if a.scaling_threads is not None:
        sched.thread_scaling(configs)
    bench_seconds = time.time() - t_start
    if poller:
        poller.stop()
    after = load_snapshot()

    agree = {}
    if a.reference in logits:
        agree = against_reference(logits, a.reference)
    elif a.reference not in skipped:
        failures.setdefault(a.reference, "no logits")
    if not a.keep_logits:
        for path in logits.values():
            try:
                os.remove(path)
            except OSError:
                pass
        try:
            os.remove(in_path)
        except OSError:
            pass
    results = config_results(wanted, skipped, sched, agree, a.reference, poller)

    per_volume = {"measured": False}
    if input_info["kind"] != "nifti":
        per_volume["reason"] = "input is not a NIfTI volume"
    elif a.volume_runs == 0:
        per_volume["reason"] = "--volume-runs 0"
    else:
        why = swinrun_volume_support(cli)
        if why:
            per_volume["reason"] = why
        else:
            per_volume = volume_phase(a, model, cube, cli, configs, out_dir, failures)
    doc = document(a, model, cube, in_ch, feature, input_info, machine, before, after, bench_seconds, results,
                   sched, per_volume, skipped)
    json_path = os.path.join(out_dir, "results.json")
    with open(json_path, "w") as f:
        json.dump(doc, f, indent=1, allow_nan=True)
    md = markdown(doc)
    with open(os.path.join(out_dir, "results.md"), "w") as f:
        f.write(md)
    print(md)
    if not a.no_chart:
        try:
            png = chart(doc, os.path.join(out_dir, "results.png"))
            log(f"chart {png}")
        except Exception as e:  # a missing matplotlib must not lose the numbers
            log(f"no chart: {e}")
    log(f"results {json_path}")

    bad = dict(failures)
    for c, why in skipped.items():
        if DEVICE[c] == "cpu":  # only the GPU configurations may be skipped quietly
            bad[c] = f"skipped: {why}"
    for c, e in agree.items():
        if not e.get("criterion_pass"):
            if c in REDUCED:
                log(f"{c} (reduced precision, not counted): agreement: {e.get('criterion', e.get('error', '?'))}")
                continue
            bad[c] = "agreement: " + e.get("criterion", e.get("error", "?"))
    for c, msg in bad.items():
        log(f"{c}: {msg}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
