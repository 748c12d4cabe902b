"""Choose the best available device: cuda, then mps, then cpu.

>>> from gradgraph import pick_device
>>> pick_device().type in {"cuda", "mps", "cpu"}
True
"""

from __future__ import annotations

import functools

import torch

__all__ = ["pick_device"]


def pick_device() -> torch.device:
    """Return ``cuda`` if available, else ``mps`` if available, else ``cpu``."""
    return torch.device(_best_device_type())


@functools.cache
def _best_device_type() -> str:
    """Asked once per process: every recording starts by asking, and asking CUDA costs."""
    if torch.cuda.is_available():
        return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return "cpu"
