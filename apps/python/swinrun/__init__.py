"""swinrun: MONAI's Swin UNETR run by a C library in a fixed, known memory footprint.

    import swinrun
    model = swinrun.Model("model.pt")                      # ONNX, checkpoint, safetensors, bundle
    labels, report = model.segment(volume, affine)         # a CT in, labels on its grid out
    logits = sliding_window_inference(x, (96,) * 3, 4, model)   # or as MONAI's predictor

See docs/python.md.
"""
import os as _os

# DCMTK reads its data dictionary at first use, from DCMDICTPATH or the path it was built with:
# a wheel carries the dictionary and points the variable at it (unless the user set it).
_dict = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "data", "dicom.dic")
if "DCMDICTPATH" not in _os.environ and _os.path.exists(_dict):
    _os.environ["DCMDICTPATH"] = _dict

from . import _swinrun  # noqa: E402
from .errors import (ArgumentError, BackendError, CancelledError, FileIOError, FormatError,  # noqa: E402
                     InternalError, MemoryLimitError, ModelError, OutOfMemoryError, ShapeError, SwinrunError,
                     BY_STATUS)
from .model import Model, segment_file  # noqa: E402
from .progress import ProgressBar  # noqa: E402

_swinrun._set_errors(BY_STATUS)
__version__ = _swinrun.VERSION

__all__ = ["Model", "segment_file", "ProgressBar", "SwinrunError", "ArgumentError", "FileIOError", "FormatError",
           "ModelError", "ShapeError", "OutOfMemoryError", "MemoryLimitError", "BackendError", "CancelledError",
           "InternalError", "__version__"]
