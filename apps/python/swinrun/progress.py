"""A text progress bar for long segmentations, in the style of tqdm, with no dependency."""
from __future__ import annotations

import sys
import time
from typing import Callable, TextIO

ProgressFn = Callable[[str, float], None]


class ProgressBar:
    """Callable as a segmentation's progress callback: ``bar(stage, fraction)``. Draws one line on
    ``stream`` (stderr by default): the stage, a bar, the percentage and the elapsed time."""

    def __init__(self, stream: TextIO | None = None, width: int = 30, desc: str = "swinrun"):
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.desc = desc
        self.start = time.monotonic()

    def __call__(self, stage: str, fraction: float) -> None:
        filled = int(round(self.width * max(0.0, min(1.0, fraction))))
        bar = "#" * filled + "-" * (self.width - filled)
        elapsed = time.monotonic() - self.start
        end = "\n" if stage == "done" else ""
        self.stream.write(f"\r{self.desc}: {stage:<10} |{bar}| {100 * fraction:5.1f}% {elapsed:6.1f}s{end}")
        self.stream.flush()


def resolve(progress: bool | ProgressFn | None) -> ProgressFn | None:
    """The callback for a ``progress=`` argument: True draws a bar, a callable is used as is."""
    if progress is True:
        return ProgressBar()
    if progress in (None, False):
        return None
    if not callable(progress):
        raise TypeError("progress: expected True, False, None or a callable (stage, fraction)")
    return progress
