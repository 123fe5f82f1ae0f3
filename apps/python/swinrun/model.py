"""swinrun.Model: a Swin UNETR loaded by swinrun's C library, as a MONAI predictor (``model(x)``)
and as a whole CT segmentation (``model.segment``)."""
from __future__ import annotations

import os
import re
import sys
import threading
from typing import Any, Callable, Sequence, Union

import numpy as np

from . import _swinrun
from .errors import ArgumentError, ShapeError
from .progress import ProgressFn, resolve

PathLike = Union[str, "os.PathLike[str]"]
Cube = tuple[int, int, int]

BACKENDS = {"cpu": 0, "cuda": 1, "auto": 2}
PRECISIONS = {"fp32": 0, "fp16": 1, "bf16": 2}
MERGE_ORDERS = {None: 0, "default": 0, "v15": 1, "pre15": 2, "v2": 3}
BLENDS = {"constant": 0, "gaussian": 1}
INVERTS = {"nearest": 0, "linear": 1}
INTENSITY_NORMS = {"range": 0, "zscore": 1, "zscore-nonzero": 2}
RECIPE_KEYS = ("reorient", "resample", "spacing", "intensity_clip", "intensity_range", "intensity_norm", "overlap",
               "blend", "sigma_scale", "invert", "multi_label")
FILE_KEYS = ("probabilities_path", "preview_path", "rtstruct_path", "dicom_series", "seg_type")
ANY_CUBE = (32, 32, 32)  # to ask which backend a model without a cube of its own gets


def _choice(name: str, value: Any, table: dict) -> int:
    if value not in table:
        names = ", ".join(repr(k) for k in table if k is not None)
        raise ArgumentError(f"{name}={value!r}: expected one of {names}")
    return table[value]


def _bytes(mem_limit: int | str | None) -> int:
    """None -> 0 (no limit); an int of bytes; or a string such as '4GiB', '512M'."""
    if mem_limit is None:
        return 0
    if isinstance(mem_limit, str):
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*", mem_limit, re.IGNORECASE)
        if not m:
            raise ArgumentError(f"mem_limit={mem_limit!r}: expected bytes or a size such as '4GiB'")
        return int(float(m.group(1)) * 1024 ** "_KMGT".index(m.group(2).upper() or "_"))
    if isinstance(mem_limit, bool) or not isinstance(mem_limit, int) or mem_limit < 0:
        raise ArgumentError(f"mem_limit={mem_limit!r}: expected a number of bytes >= 0, a size string or None")
    return mem_limit


def _cube(cube: int | Sequence[int]) -> Cube:
    c = (cube,) * 3 if isinstance(cube, int) else tuple(cube)
    if len(c) != 3 or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in c):
        raise ArgumentError(f"cube={cube!r}: expected an int or three ints (D, H, W)")
    return tuple(int(v) for v in c)  # type: ignore[return-value]


def _torch_tensor(x: Any):
    """The torch module when x is a torch tensor (torch imported only if the caller did)."""
    torch = sys.modules.get("torch")
    return torch if torch is not None and isinstance(x, torch.Tensor) else None


class Model:
    """A Swin UNETR loaded by swinrun.

    path: anything the CLI takes as a model: an ONNX export, a PyTorch checkpoint (torch.save of
    a state dict, a training checkpoint or the whole module), a TorchScript module
    (torch.jit.save), a .safetensors file, or a MONAI bundle folder.
    backend: "auto" (CUDA when a GPU is usable, else the CPU; ``backend_reason`` says why),
    "cpu" or "cuda". precision: "fp32", "fp16" (CUDA) or "bf16" (CPU). threads: CPU threads,
    0 = every core. device: the CUDA device. mem_limit: refuse plans above this many bytes
    (an int, or a string such as "4GiB"); None = no limit. merge_order: what a checkpoint
    cannot tell: "v15" (MONAI >= 1.5, the default), "pre15" (weights trained with MONAI < 1.5)
    or "v2"; normalize=False for a network built with normalize=False; norm_groups=G for one built
    with norm_name=("group", {"num_groups": G}) (an ONNX file or bundle says so itself).

    A context (the planned memory of one cube size) is created on first use of each cube size
    and kept; a model may be used from several threads (calls on one cube size take turns).
    """

    def __init__(self, path: PathLike, backend: str = "auto", precision: str = "fp32", threads: int = 0,
                 device: int = 0, mem_limit: int | str | None = None, *, merge_order: str | None = None,
                 normalize: bool = True, norm_groups: int = 0):
        self.path = os.fspath(path)
        self._backend = _choice("backend", backend, BACKENDS)
        self._precision = _choice("precision", precision, PRECISIONS)
        for name, v in (("threads", threads), ("device", device)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ArgumentError(f"{name}={v!r}: expected an int >= 0")
        self._threads, self._device = threads, device
        self._mem_limit = _bytes(mem_limit)
        if isinstance(norm_groups, bool) or not isinstance(norm_groups, int) or norm_groups < 0:
            raise ArgumentError(f"norm_groups={norm_groups!r}: expected an int >= 0")
        self._model = _swinrun.model_load(self.path, _choice("merge_order", merge_order, MERGE_ORDERS),
                                          not normalize, norm_groups)
        self._info = _swinrun.model_info(self._model)
        self._contexts: dict[Cube, Any] = {}
        self._locks: dict[Cube, threading.Lock] = {}
        self._guard = threading.Lock()

    # ---- what the model is ----------------------------------------------------------------
    @property
    def config(self) -> dict:
        """What ``swinrun info`` prints: channels, feature size, depths, heads, window, export
        cube (None when dynamic), normalize, downsample (patch-merging order), parameters, ..."""
        return dict(self._info)

    @property
    def cube(self) -> Cube | None:
        """The cube (MONAI's roi_size) of the export or bundle; None for a checkpoint or a dynamic
        export, which need ``cube=`` to segment (MONAI's Swin UNETR recipes use 96^3)."""
        c = self._info["cube"]
        return tuple(c) if c else None  # type: ignore[return-value]

    def _cube_for(self, cube: int | Sequence[int] | None) -> Cube:
        if cube is not None:
            return _cube(cube)
        if self.cube is None:
            raise ArgumentError(f"{self.path}: the model does not say which cube it runs on: give cube=(D, H, W), "
                                f"multiples of 32 (MONAI's Swin UNETR recipes use 96, 96, 96)")
        return self.cube

    def _params(self, cube: Cube) -> tuple:
        return (self._backend, self._precision, cube, self._threads, self._device, self._mem_limit)

    def plan(self, cube: int | Sequence[int] | None = None) -> dict:
        """The exact memory of a context for ``cube`` (default: the model's), before allocating
        anything: weight, arena, scratch and total bytes, the backend chosen and why."""
        return _swinrun.model_plan(self._model, self._params(self._cube_for(cube)))

    @property
    def backend(self) -> str:
        """"cpu" or "cuda": what ``backend`` resolves to on this machine."""
        return self.plan(self.cube or ANY_CUBE)["backend"]

    @property
    def backend_reason(self) -> str:
        """Why that backend, e.g. "auto: no usable CUDA device 0"."""
        return self.plan(self.cube or ANY_CUBE)["backend_reason"]

    def __repr__(self) -> str:
        i = self._info
        return (f"swinrun.Model({self.path!r}: feature size {i['feature_size']}, {i['in_channels']} -> "
                f"{i['out_channels']} channels)")

    def _context(self, cube: Cube):
        """The context of a cube size and the lock its users take turns with."""
        with self._guard:
            if cube not in self._contexts:
                self._contexts[cube] = _swinrun.context_create(self._model, self._params(cube))
                self._locks[cube] = threading.Lock()
            return self._contexts[cube], self._locks[cube]

    # ---- the predictor ----------------------------------------------------------------------
    def __call__(self, x):
        """Logits of a batch of cubes: x (N, C, D, H, W), a numpy array or a torch tensor, float32
        (float16 too with precision fp16). Returns (N, out_channels, D, H, W) of the same kind,
        dtype and device. Each (D, H, W) gets its own context, kept for the next call. A
        non-contiguous input is copied; a CUDA tensor goes through the host."""
        torch = _torch_tensor(x)
        if torch is not None:
            t = x.detach()
            if t.device.type != "cpu":
                t = t.cpu()
            try:
                arr = np.from_dlpack(t.contiguous())
            except (BufferError, TypeError, ValueError, RuntimeError) as e:
                raise ArgumentError(f"input: expected a float32 tensor, got torch {t.dtype} ({e})") from None
        else:
            arr = np.asarray(x)
        if arr.dtype != np.float32:
            if arr.dtype == np.float16 and self._precision == PRECISIONS["fp16"]:
                arr32 = arr.astype(np.float32)
            else:
                raise ArgumentError(f"input: expected float32 values, got {arr.dtype}"
                                    f"{' (float16 needs precision fp16)' if arr.dtype == np.float16 else ''}")
        else:
            arr32 = arr
        if arr32.ndim != 5:
            raise ShapeError(f"input: expected 5 dimensions (N, C, D, H, W), got shape {tuple(arr32.shape)}")
        arr32 = np.ascontiguousarray(arr32)
        n, _, d, h, w = arr32.shape
        out = np.empty((n, self._info["out_channels"], d, h, w), np.float32)
        if n:
            ctx, lock = self._context((d, h, w))
            with lock:
                _swinrun.context_run(ctx, arr32, out)
        result = out.astype(arr.dtype) if arr.dtype != np.float32 else out
        if torch is not None:
            return torch.from_numpy(result).to(device=x.device)
        return result

    # ---- segmentation -----------------------------------------------------------------------
    def segment_params(self) -> dict:
        """The recipe ``segment`` uses by default: a bundle's own (its inference config, JSON or
        YAML), else MONAI's usual: RAS, 1.5 x 1.5 x 2 mm, [-175, 250] HU clipped, overlap 0.5,
        constant blend, labels back by nearest neighbour."""
        p = _swinrun.model_segment_defaults(self._model)
        p["intensity_norm"] = {v: k for k, v in INTENSITY_NORMS.items()}[p["intensity_norm"]]
        return p

    def _recipe(self, recipe: dict, progress, cancel) -> dict:
        unknown = set(recipe) - set(RECIPE_KEYS) - set(FILE_KEYS)
        if unknown:
            raise TypeError(f"unexpected recipe keys {sorted(unknown)}; expected some of {list(RECIPE_KEYS)}")
        p: dict[str, Any] = self.segment_params()
        p.update(recipe)
        p["intensity_norm"] = _choice("intensity_norm", p["intensity_norm"], INTENSITY_NORMS)
        p["multi_label"] = bool(p["multi_label"])
        p["blend"] = _choice("blend", p["blend"], BLENDS)
        p["invert"] = _choice("invert", p["invert"], INVERTS)
        p["seg_type"] = _choice("seg_type", p.get("seg_type", "binary"), {"binary": 0, "labelmap": 1})
        for key, n in (("spacing", 3), ("intensity_range", 2)):
            v = p[key]
            if np.ndim(v) == 0:
                v = (v,) * n
            if len(v) != n:
                raise ArgumentError(f"{key}={p[key]!r}: expected {n} numbers")
            p[key] = tuple(float(e) for e in v)
        for key in ("probabilities_path", "preview_path", "rtstruct_path"):
            if p.get(key) is not None:
                p[key] = os.fspath(p[key])
        if cancel is not None and not callable(cancel):
            raise TypeError("cancel: expected a callable returning True to stop, or None")
        p["progress"], p["cancel"] = resolve(progress), cancel
        return p

    def segment(self, volume, affine, *, progress: bool | ProgressFn | None = None,
                cancel: Callable[[], bool] | None = None, probabilities: bool = False,
                cube: int | Sequence[int] | None = None, **recipe) -> tuple:
        """Segments a CT volume: the whole pipeline in C (orientation, spacing, intensity range,
        sliding windows, argmax, labels back on the input grid).

        volume: (x, y, z) intensities (HU), the array nibabel gives (``img.dataobj`` or
        ``get_fdata()``), any numeric dtype and memory order; for a model of several input
        channels (e.g. MRI sequences) (x, y, z, channels), as a 4D NIfTI gives them, in the
        order the model was trained with; affine: its voxel -> RAS 4 x 4.
        recipe: reorient, resample, spacing, intensity_clip, intensity_range, intensity_norm
        ("range" | "zscore" | "zscore-nonzero": each channel's z-score, over its nonzero voxels
        or all), overlap, blend ("constant" | "gaussian"), sigma_scale, invert ("nearest" |
        "linear"), multi_label (each output channel's sigmoid >= 0.5: labels are bit masks, bit
        c for channel c); default ``segment_params()``. progress: True for a bar on stderr, or a
        callable (stage, fraction). cancel: a callable polled between cubes; Ctrl-C cancels too.

        Returns (labels, report): labels on the input grid, uint8 (uint16 beyond 256 classes),
        and the report dict (grids, cubes, plan, timings, ``statistics`` per label); with
        probabilities=True, (labels, probabilities, report), probabilities (x, y, z, classes)
        float32 softmax."""
        arr, aff = _volume(volume), _affine(affine)
        params = self._recipe(recipe, progress, cancel)
        for key in FILE_KEYS:
            if key in recipe:
                raise TypeError(f"{key} is for segment_file")
        ctx, lock = self._context(self._cube_for(cube))
        classes = self._info["out_channels"]
        labels = np.empty(arr.shape[:3], np.uint16, order="F")
        probs = np.empty(arr.shape[:3] + (classes,), np.float32, order="F") if probabilities else None
        with lock:
            report = _swinrun.segment(ctx, arr, aff, labels, probs, params)
        # a multi-label run's bit masks reach 2**classes - 1 (of several output channels)
        values = 1 << classes if params["multi_label"] and classes > 1 else classes
        if values <= 256:
            labels = labels.astype(np.uint8, order="F")
        return (labels, probs, report) if probabilities else (labels, report)

    def segment_file(self, ct: PathLike | Sequence[PathLike], out: PathLike, *,
                     progress: bool | ProgressFn | None = None, cancel: Callable[[], bool] | None = None,
                     cube: int | Sequence[int] | None = None, **recipe) -> dict:
        """Segments a file as the CLI does: ct a NIfTI file (a 4D one: the channels of a model of
        several input channels), the list of one volume's channel files (NIfTI, on one grid), a
        MetaImage (.mha, .mhd) or NRRD (.nrrd, .nhdr) file, a DICOM series folder or DICOMDIR, or
        the list of one series' DICOM files; out a .nii/.nii.gz label map (.mha / .nrrd from those;
        multi_label: a 4D file of one mask per channel) or a .dcm DICOM SEG.
        recipe as for ``segment``, plus probabilities_path, preview_path, rtstruct_path,
        dicom_series and seg_type ("binary" | "labelmap"). Outputs appear whole or not at all.
        Returns the report dict."""
        inputs = [os.fspath(ct)] if isinstance(ct, (str, os.PathLike)) else [os.fspath(p) for p in ct]
        params = self._recipe(recipe, progress, cancel)
        ctx, lock = self._context(self._cube_for(cube))
        with lock:
            return _swinrun.segment_file(ctx, inputs, os.fspath(out), params)


def _volume(volume) -> np.ndarray:
    """A volume as the C API takes it: (x, y, z) or (x, y, z, channels), NIfTI order (Fortran:
    each channel one block), int16 or float32."""
    arr = np.asarray(volume)
    if arr.ndim == 4 and arr.shape[3] == 1:
        arr = arr[..., 0]
    if arr.ndim not in (3, 4):
        raise ShapeError(f"volume: expected 3 dimensions (x, y, z) or 4 (x, y, z, channels), got shape {arr.shape}")
    if arr.dtype.kind not in "biuf" or arr.dtype.kind == "b":
        raise ArgumentError(f"volume: expected numeric intensities, got {arr.dtype}")
    if arr.dtype.kind in "iu" and arr.dtype.itemsize == 1 or arr.dtype == np.int16:
        target = np.int16
    else:
        target = np.float32
    return np.asfortranarray(arr, dtype=np.dtype(target).newbyteorder("="))


def _affine(affine) -> np.ndarray:
    aff = np.ascontiguousarray(affine, dtype=np.float64)
    if aff.shape != (4, 4):
        raise ShapeError(f"affine: expected 4 x 4 (voxel -> RAS), got shape {aff.shape}")
    if not np.isfinite(aff).all():
        raise ArgumentError("affine: has non-finite values")
    return aff


def segment_file(ct: PathLike | Sequence[PathLike], out: PathLike, model: Model | PathLike, **kwargs) -> dict:
    """Segments a file with ``model`` (a Model, or a path loaded with the keyword arguments the
    Model takes); the rest as ``Model.segment_file``. Returns the report dict."""
    if not isinstance(model, Model):
        model_kw = {k: kwargs.pop(k) for k in ("backend", "precision", "threads", "device", "mem_limit",
                                              "merge_order", "normalize") if k in kwargs}
        model = Model(model, **model_kw)
    return model.segment_file(ct, out, **kwargs)
