"""Agreement of a configuration's output with the reference's: the project's criterion on the
logits (tools/export/check_logits.py; the half-precision one for configurations that may compute in
reduced precision), max |logit diff|, same-label percentage and Dice per class, and the same
label statistics for two whole-volume label maps. check_logits is found in tools/export, which
bench_common puts on sys.path."""
from __future__ import annotations

CRITERION = ("max|logit - ref| <= 1e-3 * max(1, max|ref|) and equal labels where the reference's "
             "top-2 gap > 1e-3 (tools/export/check_logits.py)")

# Configurations that may compute in a reduced precision: judged by the half-precision
# criterion of the project's CUDA half mode (within 1e-2 of max(1, max|ref|), the same label on
# at least 99.5 % of all voxels), reported, and not counted in the exit status.
REDUCED = {"swinrun-cpu-bf16", "ov-cpu-default", "swinrun-cuda-fp16", "torch-cuda-tf32", "torch-cuda-amp"}
HALF_CRITERION = {"rel": 1e-2, "min_agreement": 0.995}


def agreement(got, ref, reduced: bool = False) -> dict:
    import numpy as np
    from check_logits import compare
    ok, line = compare(got, ref, **HALF_CRITERION) if reduced else compare(got, ref)
    g = got.astype(np.float64, copy=False)
    r = ref.astype(np.float64, copy=False)
    finite = bool(np.isfinite(g).all())
    diff = float(np.abs(g - r).max()) if finite else float("nan")
    lab_r = r.argmax(axis=1)
    lab_g = g.argmax(axis=1)
    same = float((lab_r == lab_g).mean() * 100.0)
    dice = []
    for c in range(ref.shape[1]):
        a = lab_r == c
        b = lab_g == c
        s = int(a.sum()) + int(b.sum())
        dice.append(None if s == 0 else 2.0 * int((a & b).sum()) / s)
    present = [d for d in dice if d is not None]
    ref_max = float(np.abs(r).max())
    rel = HALF_CRITERION["rel"] if reduced else 1e-3
    return {"max_abs_diff": diff, "max_abs_ref": ref_max,
            "max_rel_err": diff / ref_max if ref_max > 0 else diff,
            "criterion_kind": "half" if reduced else "float32",
            "bound": rel * max(1.0, ref_max), "criterion_pass": bool(ok), "criterion": line,
            "same_label_pct": same, "dice_per_class": dice, "dice_min": min(present) if present else None,
            "dice_mean": sum(present) / len(present) if present else None, "finite": finite}


def against_reference(logits: dict, reference: str) -> dict:
    """{configuration: agreement} of every configuration's saved logits with the reference's."""
    import numpy as np
    agree = {}
    ref = np.load(logits[reference])
    for c, path in logits.items():
        if c == reference:
            continue
        got = np.load(path)
        if got.shape != ref.shape:
            agree[c] = {"error": f"shape {list(got.shape)} vs reference {list(ref.shape)}", "criterion_pass": False}
        else:
            agree[c] = agreement(got, ref, reduced=c in REDUCED)
    return agree


def label_agreement(got, ref, classes: int) -> dict:
    same = float((got == ref).mean() * 100.0)
    dice = []
    for c in range(classes):
        a_, b_ = ref == c, got == c
        s_ = int(a_.sum()) + int(b_.sum())
        dice.append(None if s_ == 0 else 2.0 * int((a_ & b_).sum()) / s_)
    present = [d for d in dice if d is not None]
    return {"same_label_pct": same, "dice_per_class": dice, "dice_min": min(present) if present else None,
            "dice_mean": sum(present) / len(present) if present else None}
