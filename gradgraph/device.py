"""Choose the best available device: cuda, then mps, then cpu.

>>> from gradgraph import pick_device
>>> pick_device().type in {"cuda", "mps", "cpu"}
True
"""

from __future__ import annotations

import functools

import torch

__all__ = ["pick_device"]


@functools.cache
def pick_device() -> torch.device:
    """Return ``cuda`` if available, else ``mps`` if available, else ``cpu``.

    Asked once per process (every recording starts by asking, and asking CUDA costs); a
    ``torch.device`` cannot change, so the same one is handed out each time.
    """
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")
