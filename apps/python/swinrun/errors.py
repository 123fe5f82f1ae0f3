"""One exception class per status of the C library (core/status.h), each carrying the library's
message: what was wrong and what to do."""
from __future__ import annotations


class SwinrunError(Exception):
    """Base of every error swinrun raises; ``status`` is the library's status name."""

    status = "SWIN_ERR"


class ArgumentError(SwinrunError, ValueError):
    """An invalid argument: a bad dtype, value or option (SWIN_ERR_ARG)."""

    status = "SWIN_ERR_ARG"


class FileIOError(SwinrunError, OSError):
    """A file could not be opened, read or written (SWIN_ERR_IO)."""

    status = "SWIN_ERR_IO"


class FormatError(SwinrunError, ValueError):
    """A file is not what it claims: truncated, corrupt, of another kind (SWIN_ERR_FORMAT)."""

    status = "SWIN_ERR_FORMAT"


class ModelError(SwinrunError, ValueError):
    """The model is not a Swin UNETR swinrun can run (SWIN_ERR_MODEL)."""

    status = "SWIN_ERR_MODEL"


class ShapeError(SwinrunError, ValueError):
    """An array or volume has the wrong shape (SWIN_ERR_SHAPE)."""

    status = "SWIN_ERR_SHAPE"


class OutOfMemoryError(SwinrunError, MemoryError):
    """A host or device allocation failed (SWIN_ERR_NOMEM)."""

    status = "SWIN_ERR_NOMEM"


class MemoryLimitError(SwinrunError):
    """The plan does not fit the requested memory limit (SWIN_ERR_MEM_LIMIT)."""

    status = "SWIN_ERR_MEM_LIMIT"


class BackendError(SwinrunError, RuntimeError):
    """The compute backend failed or is unavailable (SWIN_ERR_BACKEND)."""

    status = "SWIN_ERR_BACKEND"


class CancelledError(SwinrunError):
    """The run was cancelled (SWIN_ERR_CANCELLED)."""

    status = "SWIN_ERR_CANCELLED"


class InternalError(SwinrunError, RuntimeError):
    """A bug in swinrun: please report it (SWIN_ERR_INTERNAL)."""

    status = "SWIN_ERR_INTERNAL"


BY_STATUS = (None, ArgumentError, FileIOError, FormatError, ModelError, ShapeError, OutOfMemoryError,
             MemoryLimitError, BackendError, CancelledError, InternalError)
