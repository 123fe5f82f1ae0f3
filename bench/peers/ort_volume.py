#!/usr/bin/env python3
"""The per-volume reference of bench/peers/swinbench.py: MONAI's CT pipeline with ONNX Runtime as the
predictor, the same steps as `swinrun IN.nii.gz OUT.nii.gz` (pipeline/segment.h):

  LoadImage -> Orientation("RAS") -> Spacing(1.5, 1.5, 2.0, bilinear) ->
  ScaleIntensityRange(-175, 250 -> 0, 1, clip) -> sliding_window_inference(roi = the model's
  cube, overlap 0.5, constant blend, sw_batch_size 1, ORT session as predictor) -> argmax ->
  labels resampled back to the input grid (nearest) -> NIfTI with the input's affine.

  ort_volume.py MODEL.onnx IN.nii.gz OUT.nii.gz --cube D H W [--config ort-cpu] [--threads N]
                [--spacing 1.5 1.5 2.0] [--overlap 0.5]

Prints one JSON line: {"event": "volume", "seconds": pipeline seconds (read .. write, session
excluded), "session_seconds", "windows", "grid": [...], "rss_*_kib"}; errors as
{"event": "error", "message"} and exit 1 (2 for bad arguments).
"""
from __future__ import annotations

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def fail(msg, code=1):
    emit({"event": "error", "message": " ".join(str(msg).split())})
    sys.exit(code)


def main(argv=None) -> int:
    import argparse
    from ort_worker import CONFIGS, make_session, rss_kib
    p = argparse.ArgumentParser(description="MONAI CT pipeline with ONNX Runtime, one volume")
    p.add_argument("model")
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--cube", type=int, nargs=3, required=True)
    p.add_argument("--config", default="ort-cpu", choices=sorted(CONFIGS))
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--spacing", type=float, nargs=3, default=[1.5, 1.5, 2.0])
    p.add_argument("--overlap", type=float, default=0.5)
    a = p.parse_args(argv)
    rss_base, _ = rss_kib()
    import numpy as np
    import onnxruntime as ort
    import torch
    from monai.inferers import sliding_window_inference
    from monai.transforms import LoadImage, Orientation, ScaleIntensityRange, Spacing, SpatialResample, SaveImage
    torch.set_num_threads(max(1, a.threads or os.cpu_count() or 1))
    rss_imported, _ = rss_kib()
    t0 = time.perf_counter()
    try:
        sess = make_session(ort, a.model, a.config, a.threads)
    except SystemExit:
        raise
    except Exception as e:
        fail(f"cannot create the session: {e}")
    t_sess = time.perf_counter() - t0
    name = sess.get_inputs()[0].name
    windows = [0]

    def predictor(x):
        windows[0] += 1
        y = sess.run(None, {name: np.ascontiguousarray(x.numpy(), dtype=np.float32)})[0]
        return torch.from_numpy(y)

    t0 = time.perf_counter()
    try:
        img = LoadImage(image_only=True, ensure_channel_first=True)(a.input)
    except Exception as e:
        fail(f"{a.input}: cannot read: {e}", 2)
    t_read = time.perf_counter() - t0
    in_affine = img.affine.clone()
    in_shape = tuple(img.shape[1:])
    x = Orientation(axcodes="RAS")(img)
    x = Spacing(pixdim=tuple(a.spacing), mode="bilinear")(x)
    x = ScaleIntensityRange(a_min=-175.0, a_max=250.0, b_min=0.0, b_max=1.0, clip=True)(x)
    t_pre = time.perf_counter() - t0 - t_read
    with torch.no_grad():
        logits = sliding_window_inference(x[None].float(), roi_size=tuple(a.cube), sw_batch_size=1,
                                          predictor=predictor, overlap=a.overlap, mode="constant")
    t_win = time.perf_counter() - t0 - t_read - t_pre
    lab = logits[0].argmax(dim=0, keepdim=True).to(torch.float32)
    lab.affine = x.affine  # MetaTensor: the preprocessed grid
    lab_in = SpatialResample(mode="nearest", padding_mode="border")(lab, dst_affine=in_affine,
                                                                    spatial_size=in_shape)
    out = np.asarray(lab_in[0]).round().astype(np.uint8 if int(logits.shape[1]) <= 256 else np.uint16)
    import nibabel as nib
    hdr_img = nib.load(a.input)
    nib.save(nib.Nifti1Image(out, hdr_img.affine, header=None), a.output)
    t_total = time.perf_counter() - t0
    emit({"event": "volume", "seconds": t_total, "session_seconds": t_sess, "read_seconds": t_read,
          "preprocess_seconds": t_pre, "windows_seconds": t_win, "windows": windows[0],
          "in_shape": list(in_shape), "grid": list(x.shape[1:]), "rss_base_kib": rss_base,
          "rss_imported_kib": rss_imported, "rss_hwm_kib": rss_kib()[1]})
    return 0


if __name__ == "__main__":
    sys.exit(main())
