"""What every part of bench/peers/swinbench.py shares: its folders, its messages on stderr, and the
error for bad arguments (exit status 2)."""
from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tools", "export"))  # ort_reference, check_logits


class BadArgs(Exception):
    pass


def die(msg: str, code: int = 2):
    print(f"swinbench: error: {msg}", file=sys.stderr)
    sys.exit(code)


def log(msg: str):
    print(f"swinbench: {msg}", file=sys.stderr, flush=True)
